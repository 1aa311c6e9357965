package throughput

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestModelHandComputed(t *testing.T) {
	tests := []struct {
		name                 string
		nodes, replicas      int
		m                    float64
		accum                int
		accumT, netT, optimT float64
		throughput           float64
	}{{
		// T_accum = 0.121 + 0.00568·128 = 0.84804; T_net = 1e-8 + 1e-8·1e-8;
		// T_optim = (0.84804^1.14 + (1e-8)^1.14)^(1/1.14) ≈ 0.84804;
		// throughput = 128/0.84804 = 150.936.
		name: "1 GPU", nodes: 1, replicas: 1, m: 128,
		accumT: 0.84804, netT: 1e-8, optimT: 0.84804, throughput: 150.936,
	}, {
		// T_accum = 0.84804; T_net = α_r + β_r·(4−2) = 0.0118 + 0.00317·2 = 0.01814;
		// T_optim = (0.84804^1.14 + 0.01814^1.14)^(1/1.14) = 0.857322;
		// throughput = 4·128/0.857322 = 597.209.
		name: "4 GPUs on 1 node", nodes: 1, replicas: 4, m: 128,
		accumT: 0.84804, netT: 0.01814, optimT: 0.857322, throughput: 597.209,
	}, {
		// T_accum = 0.121 + 0.00568·64 = 0.48452;
		// T_net = α_n + β_n·(8−2) = 0.0236 + 0.03804 = 0.06164;
		// T_optim = (0.48452^1.14 + 0.06164^1.14)^(1/1.14) = 0.524804;
		// throughput = 8·64/0.524804 = 975.60.
		name: "8 GPUs on 2 nodes", nodes: 2, replicas: 8, m: 64,
		accumT: 0.48452, netT: 0.06164, optimT: 0.524804, throughput: 975.602,
	}, {
		// As above with s = 3: T_iter = 3·0.48452 + 0.524804 = 1.978364;
		// throughput = 8·64·4/1.978364 = 1035.20.
		name: "8 GPUs on 2 nodes, s=3", nodes: 2, replicas: 8, m: 64, accum: 3,
		accumT: 0.48452, netT: 0.06164, optimT: 0.524804, throughput: 1035.20,
	}, {
		// T_accum = 0.121 + 0.00568·32 = 0.30276; T_net = 0.01814;
		// T_optim = (0.30276^1.14 + 0.01814^1.14)^(1/1.14) = 0.313463;
		// T_iter = 3·0.30276 + 0.313463 = 1.221743;
		// throughput = 4·32·4/1.221743 = 419.073.
		name: "4 GPUs on 1 node, s=3", nodes: 1, replicas: 4, m: 32, accum: 3,
		accumT: 0.30276, netT: 0.01814, optimT: 0.313463, throughput: 419.073,
	}}
	p := realParams
	near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.AccumTime(tt.m); !near(got, tt.accumT, 1e-9) {
				t.Errorf("AccumTime(%g) = %.8g, want %.8g", tt.m, got, tt.accumT)
			}
			if got := p.NetworkTime(tt.nodes, tt.replicas); !near(got, tt.netT, 1e-6) {
				t.Errorf("NetworkTime(%d, %d) = %.8g, want %.8g", tt.nodes, tt.replicas, got, tt.netT)
			}
			if got := p.OptimTime(tt.nodes, tt.replicas, tt.m); !near(got, tt.optimT, 2e-6) {
				t.Errorf("OptimTime = %.8g, want %.8g", got, tt.optimT)
			}
			wantIter := float64(tt.accum)*tt.accumT + tt.optimT
			if got := p.IterTime(tt.nodes, tt.replicas, tt.m, tt.accum); !near(got, wantIter, 2e-6) {
				t.Errorf("IterTime = %.8g, want %.8g", got, wantIter)
			}
			if got := p.Throughput(tt.nodes, tt.replicas, tt.m, tt.accum); !near(got, tt.throughput, 5e-6) {
				t.Errorf("Throughput = %.8g, want %.8g", got, tt.throughput)
			}
		})
	}
}

func TestThroughputZero(t *testing.T) {
	p := realParams
	tests := []struct {
		name            string
		p               Params
		nodes, replicas int
		m               float64
		accum           int
	}{
		{"no nodes", p, 0, 1, 64, 0},
		{"no replicas", p, 1, 0, 64, 0},
		{"negative replicas", p, 1, -2, 64, 0},
		{"zero batch", p, 1, 1, 0, 0},
		{"negative batch", p, 1, 1, -8, 0},
		{"negative accumulation", p, 1, 1, 64, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Throughput(tt.nodes, tt.replicas, tt.m, tt.accum); got != 0 {
				t.Errorf("Throughput(%d, %d, %g, %d) = %g, want 0", tt.nodes, tt.replicas, tt.m, tt.accum, got)
			}
		})
	}
}

// gamma22 draws from Gamma(shape 2, scale 2) as the sum of two
// exponentials of mean 2, like the paper's RandomState(0).gamma(2, 2).
func gamma22(rng *rand.Rand) float64 { return 2 * (rng.ExpFloat64() + rng.ExpFloat64()) }

// randomParams returns n parameter sets with Gamma(2, 2) entries, γ
// shifted to be ≥ 1, as the paper's goodput tests.
func randomParams(n int) []Params {
	rng := rand.New(rand.NewPCG(0, 0))
	out := make([]Params, n)
	for i := range out {
		var v [nParams]float64
		for j := range v {
			v[j] = gamma22(rng)
		}
		v[iGamma] = 1 + v[iGamma]
		out[i] = fromVec(v)
	}
	return out
}

func TestThroughputProperties(t *testing.T) {
	places := []struct{ nodes, replicas int }{{1, 1}, {1, 2}, {1, 4}, {2, 4}, {2, 8}, {4, 16}, {8, 64}}
	for i, p := range randomParams(10) {
		for _, pl := range places {
			for _, s := range []int{0, 2} {
				// Non-decreasing and concave in m.
				prev, prevSlope := 0.0, math.Inf(1)
				for m := 1.0; m <= 1024; m++ {
					x := p.Throughput(pl.nodes, pl.replicas, m, s)
					if x < prev*(1-1e-12) {
						t.Fatalf("params %d %+v, %v, s=%d: throughput falls from %g to %g at m=%g", i, p, pl, s, prev, x, m)
					}
					if slope := x - prev; m > 1 && slope > prevSlope*(1+1e-9)+1e-12 {
						t.Fatalf("params %d %+v, %v, s=%d: not concave at m=%g: slope %g after %g", i, p, pl, s, m, slope, prevSlope)
					} else if m > 1 {
						prevSlope = slope
					}
					prev = x
				}
			}
		}
		// Throughput per GPU non-increasing in K, within and across nodes.
		for _, m := range []float64{1, 16, 128, 1000} {
			prev := math.Inf(1)
			for k := 1; k <= 8; k++ {
				x := p.Throughput(1, k, m, 0) / float64(k)
				if x > prev*(1+1e-12) {
					t.Fatalf("params %d %+v: per-GPU throughput rises from %g to %g at K=%d on one node", i, p, prev, x, k)
				}
				prev = x
			}
			prev = math.Inf(1)
			for k := 2; k <= 64; k++ {
				x := p.Throughput(2, k, m, 0) / float64(k)
				if x > prev*(1+1e-12) {
					t.Fatalf("params %d %+v: per-GPU throughput rises from %g to %g at K=%d on two nodes", i, p, prev, x, k)
				}
				prev = x
			}
		}
	}
}
