package lp

// Clone returns a deep copy of p with room for vars more variables, rows
// more rows and terms more nonzeros, so that a base problem can be extended
// without touching it and without copying it again as it grows.
func (p *Problem) Clone(vars, rows, terms int) *Problem {
	q := &Problem{
		Sense:    p.Sense,
		obj:      copyGrow(p.obj, vars),
		colLower: copyGrow(p.colLower, vars),
		colUpper: copyGrow(p.colUpper, vars),
		rowLower: copyGrow(p.rowLower, rows),
		rowUpper: copyGrow(p.rowUpper, rows),
		rowStart: copyGrow(p.rowStart, rows),
		terms:    copyGrow(p.terms, terms),
		start:    p.start,
	}
	return q
}

// copyGrow returns a copy of s with room for n more elements.
func copyGrow[T any](s []T, n int) []T {
	out := make([]T, len(s), len(s)+n)
	copy(out, s)
	return out
}

// ClearObjective sets every objective coefficient to zero.
func (p *Problem) ClearObjective() { clear(p.obj) }
