package lp

// The row copy of Â keeps, in each row, the entries of nonbasic columns
// first: the pivot row needs only those, and on the allocation LPs the
// long rows (a GPU type's capacity) hold many basic columns. rowNB[i] ends
// row i's nonbasic part; entryPos maps an entry of the column copy to its
// place in the row copy, rowEntry the other way.
type rowPartition struct {
	rowNB, entryPos, rowEntry []int
	partitioned               bool // false until partitionRows, and after a repair of the basis
}

// initRows maps the entries of the two copies, which buildRows laid out
// column by column.
func (s *sparseSolver) initRows() {
	s.rowNB = make([]int, s.m)
	s.entryPos = make([]int, len(s.colRow))
	s.rowEntry = make([]int, len(s.colRow))
	next := append([]int(nil), s.rowStart[:s.m]...)
	for k, i := range s.colRow {
		s.entryPos[k], s.rowEntry[next[i]] = next[i], k
		next[i]++
	}
}

// partitionRows sorts every row's entries into nonbasic and basic ones
// from scratch, whatever their order.
func (s *sparseSolver) partitionRows() {
	s.partitioned = true
	copy(s.rowNB, s.rowStart[1:])
	for j := range s.n {
		if s.pos[j] >= 0 {
			s.moveEntries(j, true)
		}
	}
}

// moveEntries moves structural j's entries to the basic part of their
// rows, or out of it; they must be in the other part.
func (s *sparseSolver) moveEntries(j int, basic bool) {
	for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
		i, p := s.colRow[k], s.entryPos[k]
		if basic {
			s.rowNB[i]--
			s.swapEntries(p, s.rowNB[i])
		} else {
			s.swapEntries(p, s.rowNB[i])
			s.rowNB[i]++
		}
	}
}

// swapEntries exchanges two entries of the row copy.
func (s *sparseSolver) swapEntries(p, q int) {
	s.rowCol[p], s.rowCol[q] = s.rowCol[q], s.rowCol[p]
	s.rowVal[p], s.rowVal[q] = s.rowVal[q], s.rowVal[p]
	s.rowEntry[p], s.rowEntry[q] = s.rowEntry[q], s.rowEntry[p]
	s.entryPos[s.rowEntry[p]], s.entryPos[s.rowEntry[q]] = p, q
}
