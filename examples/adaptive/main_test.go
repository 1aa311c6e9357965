package main

import (
	"bytes"
	"testing"
)

// The forecast is low, since the prior spreads the job's epochs over all
// four regimes, the faster 40 and 80 too, and its error shrinks with the
// epochs left. Every job fits in the 40-minute window, and the plan runs
// the LM job in each of its first rounds.
func TestRun(t *testing.T) {
	const want = `lm: 23 epochs, batch sizes 10×11 20×10 40×2; regimes [10 20 40 80]
epoch  batch  forecast R̂  true left
    0     10       950 s     1194 s
    6     10       660 s      816 s
   12     20       382 s      458 s
   18     20       152 s      195 s

lm          1 GPU(s), 10×11 20×10 40×2, alone 1194 s
resnet18    2 GPU(s), 32×13 256×27, alone 740 s
resnet50    1 GPU(s), 64×4, alone 2011 s
transformer 2 GPU(s), 32×30, alone 1164 s
shockwave: relaxed (λ priorities) path, objective 0; ask again at 2m0s
round 0: lm resnet18 resnet50
round 1: lm resnet18 resnet50
round 2: lm resnet18 resnet50
round 3: lm resnet18 resnet50
running now: lm s0×1, resnet18 s0×2, resnet50 s0×1
`
	for range 2 {
		var out bytes.Buffer
		if err := run(&out); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
	}
}
