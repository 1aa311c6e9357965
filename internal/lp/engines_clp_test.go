//go:build clp && cgo

package lp

// testEngines lists every engine the tests run: both CLP variants and gonum.
func testEngines() []namedEngine {
	return []namedEngine{
		{"clp-dual", CLP{Algorithm: CLPDual}},
		{"clp-primal", CLP{Algorithm: CLPPrimal}},
		{"sparse", Sparse{}},
		{"simplex", Simplex{}},
	}
}

// sparseReferences lists the engines Sparse is compared with.
func sparseReferences() []namedEngine {
	return []namedEngine{
		{"clp-dual", CLP{Algorithm: CLPDual}},
		{"clp-primal", CLP{Algorithm: CLPPrimal}},
		{"simplex", Simplex{}},
	}
}
