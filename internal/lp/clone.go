package lp

import "slices"

// Clone returns a deep copy of p with room for vars more variables and rows
// more rows, so that a base problem can be extended without touching it.
func (p *Problem) Clone(vars, rows int) *Problem {
	q := &Problem{
		Sense:    p.Sense,
		obj:      slices.Clone(p.obj),
		colLower: slices.Clone(p.colLower),
		colUpper: slices.Clone(p.colUpper),
		rowLower: slices.Clone(p.rowLower),
		rowUpper: slices.Clone(p.rowUpper),
		rowStart: slices.Clone(p.rowStart),
		terms:    slices.Clone(p.terms),
		start:    p.start,
	}
	q.Grow(vars, rows, 8*rows)
	return q
}

// ClearObjective sets every objective coefficient to zero.
func (p *Problem) ClearObjective() { clear(p.obj) }
