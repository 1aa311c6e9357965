//go:build !clp || !cgo

package lp

// testEngines lists every engine the tests run: only gonum without CLP.
func testEngines() []namedEngine {
	return []namedEngine{{"sparse", Sparse{}}, {"simplex", Simplex{}}}
}

// sparseReferences lists the engines Sparse is compared with.
func sparseReferences() []namedEngine {
	return []namedEngine{{"simplex", Simplex{}}}
}
