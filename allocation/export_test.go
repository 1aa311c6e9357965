package allocation

// EveryPair makes p's solves take every pair column from the start, the
// whole LP that column generation must match.
func EveryPair(p *Program) { p.everyPair = true }

// NoCrash makes p's cold max-min LPs start from the slack basis, the
// reference crash's starts must reach the same optimum as.
func NoCrash(p *Program) { p.noCrash = true }
