//go:build clp && cgo && linux

package lp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// heapChild, when set, makes TestCLPHeapPad the child that measures.
const heapChild = "DLSCHED_LP_HEAP_CHILD"

// TestCLPHeapPad pins the reason for clpHeapPad: one solve after another,
// as water-filling runs them level after level, each takes the pages of
// the last one's freed arrays again from the kernel unless glibc keeps
// them. A child process counts its minor page faults over a series of
// solves, once as CLP sets it up and once with glibc's defaults; the
// padded run must fault less than a quarter as often (about 30 times less
// here).
func TestCLPHeapPad(t *testing.T) {
	switch os.Getenv(heapChild) {
	case "default":
		padHeap.Do(func() {}) // as if the process had set its own pad
		fallthrough
	case "pad":
		heapFaults(t)
		return
	}
	if !glibc() {
		t.Skip("the pad is glibc's")
	}
	padded := childFaults(t, "pad")
	unpadded := childFaults(t, "default")
	t.Logf("minor page faults over 4 solves: %d padded, %d with glibc's default pad", padded, unpadded)
	if 4*padded >= unpadded {
		t.Errorf("padded heap: %d page faults, not under a quarter of the default's %d", padded, unpadded)
	}
}

// heapFaults is the child: it prints the minor page faults of 4 solves of
// a 2048-job max-min LP, after a first one.
func heapFaults(t *testing.T) {
	// One thread, so one malloc arena, and no collections: the faults
	// counted are then CLP's heap's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	p := maxMin(2048, 3)
	// The first solve maps the heap it needs either way.
	if _, err := (CLP{}).Solve(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := (CLP{}).Solve(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("faults %d\n", after.Minflt-before.Minflt)
}

// childFaults runs heapFaults in a child process, with CLP's pad or
// glibc's default.
func childFaults(t *testing.T, heap string) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLPHeapPad$", "-test.count=1")
	cmd.Env = append(os.Environ(), heapChild+"="+heap)
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
