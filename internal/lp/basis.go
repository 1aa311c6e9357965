package lp

// Status of a variable or row in a simplex basis. The numbering is CLP's,
// so that a basis passes to and from it unchanged.
type BasisStatus uint8

const (
	// Free is a nonbasic variable without bounds, at zero.
	Free BasisStatus = iota
	// Basic is in the basis.
	Basic
	// AtUpper is nonbasic at its upper bound.
	AtUpper
	// AtLower is nonbasic at its lower bound.
	AtLower
	// Superbasic is nonbasic between its bounds.
	Superbasic
	// Fixed is nonbasic with equal bounds.
	Fixed
)

// Basis is the status of every variable and row at the end of a solve: a
// starting point for the next solve of a problem that differs a little,
// such as the next round's allocation LP or a second stage over the same
// rows. For a row, AtLower and AtUpper say which of its bounds the row's
// activity sits at.
//
// A basis is only a hint: an engine that cannot use one ignores it, and CLP
// and Sparse repair one that is not a valid basis (too many or too few
// Basic entries, or a singular one) before they start. The optimum reached
// is optimal for the problem whatever the start; where the optimum is not
// unique, a different start may reach a different optimal vertex.
type Basis struct {
	Vars []BasisStatus
	Rows []BasisStatus
}

// Start makes b the starting basis of p's next solve by engines that take
// one (CLP, Sparse); a nil b, or one whose lengths do not match p's variables and
// rows at solve time, means a cold start. p keeps b, not a copy.
func (p *Problem) Start(b *Basis) { p.start = b }

// startFor returns p's starting basis if it fits p, else nil.
func (p *Problem) startFor() *Basis {
	if b := p.start; b != nil && len(b.Vars) == p.NumVars() && len(b.Rows) == p.NumRows() {
		return b
	}
	return nil
}
