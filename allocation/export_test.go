package allocation

// EveryPair makes p's solves take every pair column from the start, the
// whole LP that column generation must match.
func EveryPair(p *Program) { p.everyPair = true }
