//go:build clp && cgo

package lp

// HasCLP reports whether the CLP engine is compiled in.
const HasCLP = true

func defaultEngine() Engine { return CLP{} }

func clpEngine() Engine { return CLP{} }
