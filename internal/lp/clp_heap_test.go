//go:build clp && cgo && linux

package lp

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// heapChild, when set, makes the heap test it runs the child that
// measures (see fewerFaults): "set" with the heap as CLP sets it up, "base"
// with the test's baseline settings.
const heapChild = "DLSCHED_LP_HEAP_CHILD"

// TestCLPHeapPad pins the reason for clpHeapPad: one solve after another,
// as water-filling runs them level after level, each takes the pages of
// the last one's freed arrays again from the kernel unless glibc keeps
// them. A child process counts its minor page faults over a series of
// solves, once as CLP sets it up and once with glibc's defaults; the
// padded run must fault less than a quarter as often (about 30 times less
// here).
func TestCLPHeapPad(t *testing.T) {
	// The baseline sets nothing, as if the process had set its own pad.
	fewerFaults(t, func() {}, 4, heapFaults)
}

// heapFaults returns the minor page faults of 4 solves of a 2048-job
// max-min LP, after a first one.
func heapFaults(t *testing.T) int64 {
	// One thread, so one malloc arena, and no collections: the faults
	// counted are then CLP's heap's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	return solveFaults(t, maxMin(2048, 3))
}

// glibc reports whether this process runs on glibc, whose shared library
// is libc.so.6.
func glibc() bool {
	maps, err := os.ReadFile("/proc/self/maps")
	return err == nil && strings.Contains(string(maps), "/libc.so.6")
}

// TestHeapSettings checks that a process's own malloc settings, by
// environment variable or glibc tunable, are kept.
func TestHeapSettings(t *testing.T) {
	for _, c := range []struct {
		env       map[string]string
		pad, mmap int
	}{
		{nil, clpHeapPad, clpMmapThreshold},
		{map[string]string{"MALLOC_TOP_PAD_": "1"}, 0, clpMmapThreshold},
		{map[string]string{"MALLOC_MMAP_THRESHOLD_": "1"}, clpHeapPad, 0},
		{map[string]string{"GLIBC_TUNABLES": "glibc.malloc.top_pad=1"}, 0, clpMmapThreshold},
		{map[string]string{"GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=1"}, clpHeapPad, 0},
		{map[string]string{"MALLOC_TOP_PAD_": "1", "MALLOC_MMAP_THRESHOLD_": "1"}, 0, 0},
	} {
		pad, mmap := heapSettings(func(k string) string { return c.env[k] })
		if pad != c.pad || mmap != c.mmap {
			t.Errorf("with %v: pad %d, mmap threshold %d; want %d, %d", c.env, pad, mmap, c.pad, c.mmap)
		}
	}
}

// TestCLPMmapThreshold pins the reason for clpMmapThreshold: setting the
// top pad turns off glibc's dynamic mmap threshold, and a thread's own
// arena takes no pad, so arrays above 128 KiB were mapped afresh at every
// solve made from a thread other than the main one, as cgo calls are. A
// child solves an LP of 32,768 columns (CLP's arrays of 256 KiB) from
// such a thread, once as CLP sets the heap up and once with the pad alone;
// with the threshold it must fault less than half as often.
func TestCLPMmapThreshold(t *testing.T) {
	fewerFaults(t, func() { setHeap(clpHeapPad, 0) }, 2, threadFaults)
}

// threadFaults returns the minor page faults of 4 solves of a wide LP
// from a thread that is not the main one.
func threadFaults(t *testing.T) (n int64) {
	offMain(func() {
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		n = solveFaults(t, wide(1<<15))
	})
	return n
}

// offMain runs f on a goroutine locked to a thread other than the
// process's main thread, and waits for it. A goroutine that lands on the
// main thread keeps it, locked, while the next one runs.
func offMain(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if syscall.Gettid() == syscall.Getpid() {
			offMain(f)
			return
		}
		f()
	}()
	<-done
}

// solveFaults returns the minor page faults of this thread over 4 solves
// of p, after a first one, which maps the heap it needs either way.
func solveFaults(t *testing.T, p *Problem) int64 {
	if _, err := (CLP{}).Solve(context.Background(), p); err != nil {
		t.Error(err)
		return 0
	}
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &before); err != nil {
		t.Error(err)
		return 0
	}
	for range 4 {
		if _, err := (CLP{}).Solve(context.Background(), p); err != nil {
			t.Error(err)
			return 0
		}
	}
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &after); err != nil {
		t.Error(err)
		return 0
	}
	return after.Minflt - before.Minflt
}

// wide is max Σ c_j x_j over n variables in [0, 1] with Σ x_j ≤ n/2: few
// pivots, but arrays over the columns.
func wide(n int) *Problem {
	p := &Problem{Sense: Maximize}
	terms := make([]Term, n)
	for j := range n {
		terms[j] = Term{p.AddVar(0, 1, 1+float64(j%7)), 1}
	}
	p.AddRow(math.Inf(-1), float64(n)/2, terms...)
	return p
}

// fewerFaults compares CLP's heap settings with a baseline by the page
// faults measure counts. As the parent, it runs the calling test twice as a
// child process, once with the heap as CLP sets it up and once with base
// applied first in CLP's place, and fails unless the first faults under
// 1/ratio as often. As the child (heapChild set), it prints what measure
// counts.
func fewerFaults(t *testing.T, base func(), ratio int64, measure func(*testing.T) int64) {
	t.Helper()
	if mode := os.Getenv(heapChild); mode != "" {
		if mode == "base" {
			padHeap.Do(base)
		}
		fmt.Printf("faults %d\n", measure(t))
		return
	}
	if !glibc() {
		t.Skip("the settings are glibc's")
	}
	set, than := childCount(t, "set"), childCount(t, "base")
	t.Logf("minor page faults over 4 solves: %d as CLP sets the heap up, %d with the baseline", set, than)
	if ratio*set >= than {
		t.Errorf("%d page faults as CLP sets the heap up, not under 1/%d of the baseline's %d", set, ratio, than)
	}
}

// childCount runs the calling test in a child process in the given mode
// (see heapChild), and returns the page faults it prints.
func childCount(t *testing.T, mode string) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), heapChild+"="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "faults "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("child: %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("child printed no fault count:\n%s", out)
	return 0
}
