package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
	"github.com/dlsched/dlsched/service"
)

// client talks to a service over real HTTP.
type client struct {
	t   testing.TB
	url string
}

func start(t testing.TB, cfg service.Config) (*service.Service, client) {
	t.Helper()
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	return svc, client{t, srv.URL}
}

func (c client) do(method, path string, body []byte) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (c client) put(name, spec string) {
	c.t.Helper()
	if code, b := c.do("PUT", "/v1/schedulers/"+name, []byte(spec)); code != http.StatusCreated && code != http.StatusOK {
		c.t.Fatalf("PUT %s: %d %s", name, code, b)
	}
}

func (c client) allocate(name string, s *policy.Snapshot) []byte {
	c.t.Helper()
	body, err := json.Marshal(s)
	if err != nil {
		c.t.Fatal(err)
	}
	code, b := c.do("POST", "/v1/allocate?scheduler="+name, body)
	if code != http.StatusOK {
		c.t.Fatalf("allocate on %s: %d %s", name, code, b)
	}
	return b
}

// local decides as the service should: in process, never stopped.
func local(t testing.TB, name, config string, s *policy.Snapshot, p *policy.Policy) (*policy.Decision, []byte) {
	t.Helper()
	if *p == nil {
		var err error
		if *p, err = policy.New(name, []byte(config)); err != nil {
			t.Fatal(err)
		}
	}
	// Round trip the snapshot through JSON, as the service sees it.
	b, _ := json.Marshal(s)
	snap, err := policy.DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	d, err := (*p).Allocate(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	a, err := service.Answer(snap, d)
	if err != nil {
		t.Fatal(err)
	}
	return d, a
}

// Over a run of rounds with arrivals and departures, the service answers
// every round exactly as the policy in process does, for stateful policies
// too, when the service is dropped without warning after any round and
// started again on its directory. (Themis' and Gandiva's answers depend on
// their saved state here: without RestoreState, both fail.)
func TestRestartEqualsNeverStopped(t *testing.T) {
	for _, name := range []string{"gavel.las", "tiresias.las", "themis", "gandiva"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, c := start(t, service.Config{Dir: dir})
			c.put("a", `{"policy": "`+name+`"}`)
			tr := simtest.NewTrace(24)
			var p policy.Policy
			for round := range 20 {
				if round%3 == 2 { // a crash: nothing is shut down or flushed
					_, c = start(t, service.Config{Dir: dir})
				}
				s := tr.Snapshot()
				got := c.allocate("a", s)
				d, want := local(t, name, "", s, &p)
				if !bytes.Equal(got, want) {
					t.Fatalf("round %d: service answered\n%s\nin process\n%s", round, got, want)
				}
				tr.Advance(d)
			}
		})
	}
}

// A decision whose state cannot be saved is a 500, and leaves the scheduler
// at its last saved state: once the directory is back, the same round is
// answered as if the failed call had never been made.
func TestSaveFailureRestores(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	_, c := start(t, service.Config{Dir: dir})
	c.put("a", `{"policy": "themis"}`)
	tr := simtest.NewTrace(9)
	var p policy.Policy
	for round := range 8 {
		s := tr.Snapshot()
		if round == 4 {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(s)
			code, b := c.do("POST", "/v1/allocate?scheduler=a", body)
			if code != http.StatusInternalServerError || !strings.Contains(string(b), "saving state") {
				t.Fatalf("without its directory: %d %s, want 500 saving state", code, b)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		got := c.allocate("a", s)
		d, want := local(t, "themis", "", s, &p)
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: service answered\n%s\nin process\n%s", round, got, want)
		}
		tr.Advance(d)
	}
}

func TestErrors(t *testing.T) {
	_, c := start(t, service.Config{MaxBytes: 4096})
	c.put("default", `{"policy": "gavel.fifo"}`)
	snap, _ := json.Marshal(simtest.NewTrace(3).Snapshot())
	bad := strings.Replace(string(snap), `"gpus":1`, `"gpus":-1`, 1)
	for _, tc := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"POST", "/v1/allocate?scheduler=nope", string(snap), 404, `no such scheduler: \"nope\"`},
		{"POST", "/v1/allocate", "{", 400, "invalid snapshot"},
		{"POST", "/v1/allocate", `{"cluster": {}, "jobs": [], "extra": 1}`, 400, "extra"},
		{"POST", "/v1/allocate?lenient=1", `{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 1}]}, "jobs": [], "extra": 1}`, 200, `"policy"`},
		{"POST", "/v1/allocate", `{"cluster": {}, "jobs": []} {}`, 400, "trailing data"},
		{"POST", "/v1/allocate", `{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 1}]}, "jobs": []}` + strings.Repeat(" ", 5000), 413, "over 4096 bytes"},
		{"POST", "/v1/allocate", bad, 200, `"j00":"gpus: -1 is negative"`}, // left out by name and field
		{"GET", "/v1/allocate", "", 405, ""},
		{"PUT", "/v1/schedulers/Bad!", `{"policy": "gavel.fifo"}`, 400, "invalid scheduler name"},
		{"PUT", "/v1/schedulers/b", `{"policy": "nope"}`, 400, "unknown policy"},
		{"PUT", "/v1/schedulers/b", `{"policy": "gavel.las", "config": {"nope": 1}}`, 400, "nope"},
		{"PUT", "/v1/schedulers/b", `{"polcy": "gavel.las"}`, 400, "polcy"},
		{"PUT", "/v1/schedulers/default", `{"policy": "gavel.las"}`, 409, "gavel.fifo"},
		{"PUT", "/v1/schedulers/default", `{"config": {}, "policy": "gavel.fifo"}`, 200, "gavel.fifo"},
		{"DELETE", "/v1/schedulers/nope", "", 404, "no such scheduler"},
	} {
		code, b := c.do(tc.method, tc.path, []byte(tc.body))
		if code != tc.code || !strings.Contains(string(b), tc.says) {
			t.Errorf("%s %s %.40q: %d %s, want %d with %q", tc.method, tc.path, tc.body, code, b, tc.code, tc.says)
		}
	}
}

// A decision that outlasts the timeout is a 503 naming the timeout.
func TestTimeout(t *testing.T) {
	_, c := start(t, service.Config{Timeout: time.Nanosecond})
	c.put("default", `{"policy": "gavel.fifo"}`)
	snap, _ := json.Marshal(simtest.NewTrace(3).Snapshot())
	code, b := c.do("POST", "/v1/allocate", snap)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(b), "decision timed out after 1ns") {
		t.Errorf("%d %s, want 503 naming the timeout", code, b)
	}
}

// Schedulers live in their files: listed, reloaded, and deleted with them.
func TestSchedulers(t *testing.T) {
	dir := t.TempDir()
	_, c := start(t, service.Config{Dir: dir})
	c.put("b", `{"policy": "tiresias.las", "strict": true}`)
	c.put("a", `{"policy": "gavel.fifo"}`)
	c.allocate("a", simtest.NewTrace(3).Snapshot())
	_, c = start(t, service.Config{Dir: dir})
	code, b := c.do("GET", "/v1/schedulers", nil)
	want := `[{"name":"a","policy":"gavel.fifo","decisions":1},{"name":"b","policy":"tiresias.las","strict":true,"decisions":0}]` + "\n"
	if code != 200 || string(b) != want {
		t.Errorf("GET /v1/schedulers: %d %s, want %s", code, b, want)
	}
	if code, b := c.do("DELETE", "/v1/schedulers/a", nil); code != http.StatusNoContent {
		t.Errorf("DELETE: %d %s", code, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.json")); !os.IsNotExist(err) {
		t.Errorf("a.json after DELETE: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(`{"policy": "gavel.fifo", "state": 1`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := service.New(service.Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "c.json") {
		t.Errorf("New over a truncated file: %v, want an error naming c.json", err)
	}
}

func TestMetrics(t *testing.T) {
	_, c := start(t, service.Config{})
	c.put("default", `{"policy": "gavel.fifo"}`)
	tr := simtest.NewTrace(5)
	tr.Now = time.Hour // all five have arrived
	for range 3 {
		c.allocate("default", tr.Snapshot())
	}
	c.do("POST", "/v1/allocate", []byte("{"))
	c.do("POST", "/v1/allocate?scheduler=x", nil)
	code, b := c.do("GET", "/metrics", nil)
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, line := range []string{
		`dlsched_decision_seconds_count{scheduler="default"} 3`,
		`dlsched_jobs{scheduler="default"} 5`,
		`dlsched_gpus{scheduler="default"} 16`,
		`dlsched_gpus_allocated{scheduler="default"} 10`, // 1+2+4+1+2
		`dlsched_errors_total{reason="invalid",scheduler="default"} 1`,
		`dlsched_requests_total{code="200",endpoint="POST /v1/allocate"} 3`,
		`dlsched_requests_total{code="400",endpoint="POST /v1/allocate"} 1`,
		`dlsched_requests_total{code="404",endpoint="POST /v1/allocate"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(b), line) {
			t.Errorf("metrics lack %q", line)
		}
	}
	if code, b := c.do("GET", "/healthz", nil); code != 200 || string(b) != "ok\n" {
		t.Errorf("GET /healthz: %d %q", code, b)
	}
}
