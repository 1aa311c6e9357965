package placement

import (
	"cmp"
	"math/bits"
	"slices"
)

// index keeps servers, by their position in a sorted list, in sets by a
// count (their free GPUs): the servers with a given count in position
// order, and the counts present, without scanning every server.
type index map[int]*bitset

// bitset is a set of positions with its size.
type bitset struct {
	words []uint64
	n     int
}

func (ix index) add(count, i, size int) {
	b := ix[count]
	if b == nil {
		b = &bitset{words: make([]uint64, (size+63)/64)}
		ix[count] = b
	}
	b.words[i/64] |= 1 << (i % 64)
	b.n++
}

func (ix index) remove(count, i int) {
	b := ix[count]
	b.words[i/64] &^= 1 << (i % 64)
	if b.n--; b.n == 0 {
		delete(ix, count)
	}
}

// next returns the first position at or after i in b, or -1.
func (b *bitset) next(i int) int {
	for w := i / 64; w < len(b.words); w++ {
		word := b.words[w]
		if w == i/64 {
			word &^= 1<<(i%64) - 1
		}
		if word != 0 {
			return w*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// tally is how many servers have a free count.
type tally struct{ free, n int }

// counts returns the counts present, ascending, with their sizes.
func (ix index) counts() []tally {
	out := make([]tally, 0, len(ix))
	for c, b := range ix {
		out = append(out, tally{c, b.n})
	}
	slices.SortFunc(out, func(a, b tally) int { return cmp.Compare(a.free, b.free) })
	return out
}

// merged returns the positions of the servers with the given counts, in
// position order. It is called for the servers a gang takes, and stops
// being useful once the gang is placed, so it yields lazily.
func (ix index) merged(counts []tally) func(func(int, int) bool) {
	return func(yield func(int, int) bool) {
		sets := make([]*bitset, len(counts))
		at := make([]int, len(counts))
		for k, c := range counts {
			sets[k], at[k] = ix[c.free], ix[c.free].next(0)
		}
		for n := 0; ; n++ {
			best := -1
			for k := range sets {
				if at[k] >= 0 && (best < 0 || at[k] < at[best]) {
					best = k
				}
			}
			if best < 0 || !yield(n, at[best]) {
				return
			}
			at[best] = sets[best].next(at[best] + 1)
		}
	}
}
