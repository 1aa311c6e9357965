package service_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/service"
)

// Whatever the body, POST /v1/allocate answers 200 or a 4xx with a JSON
// error, never a 500 (a policy must refuse bad input, not fail on it) and
// never a panic.
func FuzzAllocate(f *testing.F) {
	snap, _ := json.Marshal(simtest.NewTrace(6).Snapshot())
	for _, seed := range []string{string(snap), "{", "null", `{"cluster": {}, "jobs": []}`,
		`{"now": -1, "cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 1}]}, "jobs": [{"id": "a", "gpus": 2, "throughput": {"v100": 1}}]}`} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	svc, err := service.New(service.Config{MaxBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{"gavel.fifo", "tiresias.las"} {
		if _, err := svc.Add(p, service.Spec{Policy: p}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, body string, las bool) {
		url := "/v1/allocate?scheduler=gavel.fifo"
		if las {
			url = "/v1/allocate?scheduler=tiresias.las"
		}
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			svc.ServeHTTP(rec, httptest.NewRequest("POST", url, bytes.NewReader([]byte(body))))
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer after 10 s to %q", body)
		}
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code >= 500) {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%d: answer is not JSON: %s", rec.Code, rec.Body)
		}
	})
}
