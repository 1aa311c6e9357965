package lp

import (
	"slices"
	"testing"
)

// A clone is a deep copy: extending or changing either problem leaves the
// other as it was, whatever room the clone was given (none, or more than
// it uses).
func TestCloneIndependent(t *testing.T) {
	for _, room := range [][3]int{{0, 0, 0}, {1, 1, 2}, {5, 7, 40}} {
		p := &Problem{Sense: Maximize}
		x := p.AddVar(0, 1, 2)
		y := p.AddVar(0, Inf, -1)
		p.AddRow(-Inf, 4, Term{x, 1}, Term{y, 3})
		q := p.Clone(room[0], room[1], room[2])

		z := q.AddVar(-1, 1, 5)
		q.AddRow(0, 2, Term{x, 1}, Term{z, 1})
		q.SetBounds(x, 0.5, 0.5)
		q.SetObjective(y, 7)
		p.AddRow(1, 1, Term{y, 1}) // after the clone: q must not see it

		if p.NumVars() != 2 || p.NumRows() != 2 || q.NumVars() != 3 || q.NumRows() != 2 {
			t.Fatalf("room %v: sizes p %d×%d, q %d×%d; want 2×2 and 3×2", room, p.NumRows(), p.NumVars(), q.NumRows(), q.NumVars())
		}
		if lo, hi, c := p.Var(x); lo != 0 || hi != 1 || c != 2 {
			t.Errorf("room %v: p's x is [%v,%v] cost %v after q changed it", room, lo, hi, c)
		}
		if _, _, c := p.Var(y); c != -1 {
			t.Errorf("room %v: p's y costs %v after q changed it", room, c)
		}
		if lo, hi, row := q.Row(1); lo != 0 || hi != 2 || !slices.Equal(row, []Term{{x, 1}, {z, 1}}) {
			t.Errorf("room %v: q's second row %v ≤ %v ≤ %v, want its own", room, lo, row, hi)
		}
		if lo, hi, row := p.Row(1); lo != 1 || hi != 1 || !slices.Equal(row, []Term{{y, 1}}) {
			t.Errorf("room %v: p's second row %v ≤ %v ≤ %v, want its own", room, lo, row, hi)
		}
	}
}
