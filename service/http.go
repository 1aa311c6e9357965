package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dlsched/dlsched/policy"
)

// DefaultScheduler is the scheduler POST /v1/allocate serves when the
// request names none.
const DefaultScheduler = "default"

var errTimeout = errors.New("decision timed out")

func (s *Service) routes() {
	s.mux = http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) { s.mux.Handle(pattern, s.count(pattern, h)) }
	handle("POST /v1/allocate", s.allocate)
	handle("GET /v1/schedulers", s.list)
	handle("PUT /v1/schedulers/{name}", s.put)
	handle("DELETE /v1/schedulers/{name}", s.remove)
	handle("GET /v1/policies", s.policies)
	handle("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
}

// ServeHTTP implements http.Handler.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// count wraps h to count its requests by status code.
func (s *Service) count(endpoint string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, code: http.StatusOK}
		h(rec, r)
		s.metrics.requests.WithLabelValues(endpoint, strconv.Itoa(rec.code)).Inc()
	})
}

type recorder struct {
	http.ResponseWriter
	code int
}

func (r *recorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Service) allocate(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("scheduler")
	if name == "" {
		name = DefaultScheduler
	}
	sc, ok := s.scheduler(name)
	if !ok {
		fail(w, http.StatusNotFound, fmt.Errorf("%w: %q (PUT /v1/schedulers/%s creates it)", ErrNotFound, name, name))
		return
	}
	body, code, err := s.read(w, r)
	if err != nil {
		s.metrics.errors.WithLabelValues(name, "invalid").Inc()
		fail(w, code, err)
		return
	}
	lenient, _ := strconv.ParseBool(r.URL.Query().Get("lenient"))
	snap, err := Decode(body, lenient)
	if err != nil {
		s.metrics.errors.WithLabelValues(name, "invalid").Inc()
		fail(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeoutCause(r.Context(), s.cfg.Timeout, errTimeout)
	defer cancel()
	start := time.Now()
	d, err := sc.decide(ctx, snap)
	if err != nil {
		if errors.Is(context.Cause(ctx), errTimeout) {
			err = fmt.Errorf("%w after %v: %w", errTimeout, s.cfg.Timeout, err)
		}
		code, reason := classify(ctx, err)
		s.metrics.errors.WithLabelValues(name, reason).Inc()
		fail(w, code, fmt.Errorf("scheduler %q: %w", name, err))
		return
	}
	s.metrics.decided(name, snap, d, time.Since(start).Seconds())
	b, err := Answer(snap, d)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// classify maps a failed decision to its status code and metric reason.
func classify(ctx context.Context, err error) (int, string) {
	var se stateError
	switch {
	case errors.Is(err, policy.ErrInvalidSnapshot):
		return http.StatusBadRequest, "invalid"
	case ctx.Err() != nil:
		return http.StatusServiceUnavailable, "timeout"
	case errors.As(err, &se):
		return http.StatusInternalServerError, "state"
	}
	return http.StatusInternalServerError, "failed"
}

// read reads a request body up to MaxBytes; a failure comes with its
// status code.
func (s *Service) read(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBytes))
	var big *http.MaxBytesError
	switch {
	case errors.As(err, &big):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", big.Limit)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err)
	}
	return body, 0, nil
}

func (s *Service) put(w http.ResponseWriter, r *http.Request) {
	body, code, err := s.read(w, r)
	if err != nil {
		fail(w, code, err)
		return
	}
	var spec Spec
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&spec); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("scheduler spec: %w", err))
		return
	}
	created, err := s.Add(r.PathValue("name"), spec)
	switch {
	case errors.Is(err, ErrConflict):
		fail(w, http.StatusConflict, err)
	case errors.Is(err, ErrName) || errors.Is(err, policy.ErrUnknownPolicy) || errors.Is(err, policy.ErrInvalidConfig):
		fail(w, http.StatusBadRequest, err)
	case err != nil:
		fail(w, http.StatusInternalServerError, err)
	case created:
		reply(w, http.StatusCreated, spec)
	default:
		reply(w, http.StatusOK, spec)
	}
}

func (s *Service) remove(w http.ResponseWriter, r *http.Request) {
	err := s.Remove(r.PathValue("name"))
	switch {
	case errors.Is(err, ErrNotFound):
		fail(w, http.StatusNotFound, err)
	case err != nil:
		fail(w, http.StatusInternalServerError, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Service) list(w http.ResponseWriter, _ *http.Request) {
	reply(w, http.StatusOK, s.Schedulers())
}

func (s *Service) policies(w http.ResponseWriter, _ *http.Request) {
	type info struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var out []info
	for _, p := range policy.Registered() {
		out = append(out, info{p.Name, p.Description})
	}
	reply(w, http.StatusOK, out)
}

func reply(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func fail(w http.ResponseWriter, code int, err error) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// Decode reads exactly one JSON snapshot: strictly, as
// policy.DecodeSnapshot does, or, if lenient, ignoring unknown keys and
// matching keys in any case. Every error wraps policy.ErrInvalidSnapshot.
func Decode(data []byte, lenient bool) (*policy.Snapshot, error) {
	if !lenient {
		return policy.DecodeSnapshot(data)
	}
	snap := new(policy.Snapshot)
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(snap); err != nil {
		if errors.Is(err, policy.ErrInvalidSnapshot) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", policy.ErrInvalidSnapshot, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: trailing data after the snapshot", policy.ErrInvalidSnapshot)
	}
	return snap, nil
}

// Answer encodes a decision as the service and dlsched allocate answer it:
// the Decision's JSON with one more field, "changes", what a binder does to
// enact it (policy.Changes against the snapshot's placements).
func Answer(s *policy.Snapshot, d *policy.Decision) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	if fields["changes"], err = json.Marshal(policy.Changes(s, d)); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}
