package gavel

import "github.com/dlsched/dlsched/allocation"

// setWarm sets a policy's Warm switch; off, its bases go, so that turning
// it on again starts afresh.
func setWarm(warm *bool, bases **allocation.Warm, on bool) {
	*warm = on
	if !on {
		*bases = nil
	}
}

// SetWarm implements policy.Warmer: it sets Warm.
func (p *MaxMinFairness) SetWarm(on bool) { setWarm(&p.Warm, &p.bases, on) }

// SetWarm implements policy.Warmer: it sets Warm.
func (p *FinishTimeFairness) SetWarm(on bool) { setWarm(&p.Warm, &p.bases, on) }

// SetWarm implements policy.Warmer: it sets Warm.
func (p *Makespan) SetWarm(on bool) { setWarm(&p.Warm, &p.bases, on) }

// SetWarm implements policy.Warmer: it sets Warm.
func (p *MaxThroughput) SetWarm(on bool) { setWarm(&p.Warm, &p.bases, on) }

// SetWarm implements policy.Warmer: it sets Warm.
func (p *MinCost) SetWarm(on bool) { setWarm(&p.Warm, &p.bases, on) }

// SetWarm implements policy.Warmer: it sets Warm.
func (p *WaterFilling) SetWarm(on bool) { setWarm(&p.Warm, &p.bases, on) }

// SetWarm implements policy.Warmer: it sets Warm.
func (p *Hierarchical) SetWarm(on bool) { setWarm(&p.Warm, &p.bases, on) }
