package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/service"
)

// TestMain lets a test run this test binary as the dlsched command.
func TestMain(m *testing.M) {
	if os.Getenv("DLSCHED_AS_COMMAND") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// server is a dlsched serve process.
type server struct {
	cmd *exec.Cmd
	url string
}

// spawn starts dlsched serve with args and waits until it listens.
func spawn(t *testing.T, args ...string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "DLSCHED_AS_COMMAND=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`serving on (http://\S+);`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("dlsched serve said %q (%v)", line, err)
	}
	go io.Copy(io.Discard, stderr)
	return &server{cmd, m[1]}
}

func (s *server) post(t *testing.T, snap *policy.Snapshot) []byte {
	t.Helper()
	body, _ := json.Marshal(snap)
	resp, err := http.Post(s.url+"/v1/allocate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/allocate: %s %s", resp.Status, b)
	}
	return b
}

// The service process killed with SIGKILL between rounds and started again
// on its state directory answers every round as a policy in process that
// never stopped.
func TestServeKillRestart(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--state", dir, "--policy", "themis"}
	srv := spawn(t, args...)
	p, err := policy.New("themis", nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := simtest.NewTrace(16)
	for round := range 12 {
		if round == 4 || round == 9 {
			srv.cmd.Process.Kill()
			srv.cmd.Wait()
			srv = spawn(t, args...)
		}
		s := tr.Snapshot()
		got := srv.post(t, s)
		d, err := p.Allocate(context.Background(), roundTrip(t, s))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := service.Answer(s, d)
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: the service answered\n%s\nin process\n%s", round, got, want)
		}
		tr.Advance(d)
	}
}

// roundTrip is the snapshot as the service decodes it.
func roundTrip(t *testing.T, s *policy.Snapshot) *policy.Snapshot {
	b, _ := json.Marshal(s)
	snap, err := policy.DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// SIGTERM stops the service cleanly: exit status 0.
func TestServeTerminate(t *testing.T) {
	srv := spawn(t, "--policy", "gavel.fifo")
	srv.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGINT: %v, want exit status 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after SIGINT")
	}
}

// The Python client in examples/serve, which uses the standard library
// only, creates a scheduler and prints the changes of its decision.
func TestServePythonClient(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("DLSCHED_PYTHON_TEST") == "1" {
			t.Fatal("python3 not found (scripts/setup.sh installs it)")
		}
		t.Skip("python3 not found")
	}
	srv := spawn(t)
	client := filepath.Join("..", "..", "examples", "serve", "client.py")
	out, err := exec.Command(python, client, "--url", srv.url, "--scheduler", "py", "--policy", "gavel.las", "example.json").CombinedOutput()
	if err != nil {
		t.Fatalf("client.py: %v\n%s", err, out)
	}
	snap, _ := policy.DecodeSnapshot(example)
	p, _ := policy.New("gavel.las", nil)
	d, err := p.Allocate(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, c := range policy.Changes(snap, d) {
		var to []string
		for _, a := range c.To {
			to = append(to, fmt.Sprintf("%s:%d", a.Server, a.GPUs))
		}
		want.WriteString(string(c.Kind) + " " + c.Job + " " + strings.Join(to, ", ") + "\n")
	}
	if string(out) != want.String() {
		t.Errorf("client.py printed\n%s\nwant\n%s", out, want.String())
	}
	out, err = exec.Command(python, client, "--url", srv.url, "--scheduler", "py", "--policy", "themis", "example.json").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "409: service: scheduler exists with another spec") {
		t.Errorf("client.py with another policy: %v %s, want exit 1 with the 409", err, out)
	}
}
