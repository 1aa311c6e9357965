// Package market divides resources fairly through prices: the linear Fisher
// market equilibrium (Eisenberg–Gale program), the multi-round volatile
// market of Shockwave (Zheng et al., NSDI'23), and the partial-allocation
// mechanism used by Themis (Mahajan et al., NSDI'20).
package market
