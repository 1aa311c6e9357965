//go:build !clp || !cgo

package lp

// HasCLP reports whether the CLP engine is compiled in.
const HasCLP = false

func defaultEngine() Engine { return Sparse{} }

func clpEngine() Engine { return nil }
