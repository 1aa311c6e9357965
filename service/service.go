package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dlsched/dlsched/policy"
)

// Defaults for a Config's zero fields.
const (
	DefaultMaxBytes = 64 << 20
	DefaultTimeout  = time.Minute
)

// Config configures a Service. The zero Config serves from memory alone.
type Config struct {
	// Dir is the directory that keeps each scheduler's spec and state;
	// empty keeps them in memory only, lost when the process ends.
	Dir string
	// MaxBytes is the largest request body accepted; zero means
	// DefaultMaxBytes.
	MaxBytes int64
	// Timeout bounds one decision, from the moment its request is read;
	// zero means DefaultTimeout.
	Timeout time.Duration
}

// Spec says which policy a scheduler runs.
type Spec struct {
	// Policy is a registered policy's name (policy.Registered).
	Policy string `json:"policy"`
	// Config is the policy's configuration; empty means its defaults.
	Config json.RawMessage `json:"config,omitempty"`
	// Strict makes a decision that would leave a job out fail with 400
	// instead (policy.Strict).
	Strict bool `json:"strict,omitempty"`
}

// Errors of Add and Remove.
var (
	ErrConflict = errors.New("service: scheduler exists with another spec")
	ErrNotFound = errors.New("service: no such scheduler")
	ErrName     = errors.New("service: invalid scheduler name")
)

// names are file names on every platform, and path segments in a URL.
var names = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// Service serves named schedulers over HTTP; it is an http.Handler. Its
// methods are safe for concurrent use.
type Service struct {
	cfg     Config
	metrics *metrics
	mux     *http.ServeMux

	mu     sync.RWMutex
	byName map[string]*scheduler
}

// New returns a Service configured by c, with every scheduler saved in
// c.Dir, which it creates if need be. A saved file that does not load is
// an error naming the file: the service refuses to start rather than
// forget a scheduler's state.
func New(c Config) (*Service, error) {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	s := &Service{cfg: c, metrics: newMetrics(), byName: make(map[string]*scheduler)}
	s.routes()
	if c.Dir == "" {
		return s, nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("service: state directory: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(c.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if !names.MatchString(name) {
			continue
		}
		sc, err := load(f, name)
		if err != nil {
			return nil, err
		}
		s.byName[name] = sc
	}
	return s, nil
}

// Metrics returns the registry behind GET /metrics, for a caller that
// serves metrics elsewhere or adds its own.
func (s *Service) Metrics() *prometheus.Registry { return s.metrics.registry }

// Add creates the scheduler name running spec, saved at once if the
// Service has a directory. If name exists with an equal spec Add does
// nothing and reports created false; with another spec it fails with
// ErrConflict.
func (s *Service) Add(name string, spec Spec) (created bool, err error) {
	if !names.MatchString(name) {
		return false, fmt.Errorf("%w %q: want 1 to 63 of a-z, 0-9, '.', '_', '-', starting with a letter or digit", ErrName, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byName[name]; ok {
		if !old.spec.equal(spec) {
			return false, fmt.Errorf("%w: %q runs %s", ErrConflict, name, old.spec)
		}
		return false, nil
	}
	sc, err := newScheduler(name, spec, s.path(name))
	if err != nil {
		return false, err
	}
	if err := sc.persist(nil, 0); err != nil {
		return false, err
	}
	s.byName[name] = sc
	return true, nil
}

// Remove deletes the scheduler name and its saved state.
func (s *Service) Remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.byName[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	if sc.file != "" {
		if err := os.Remove(sc.file); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("service: removing %q: %w", name, err)
		}
	}
	delete(s.byName, name)
	s.metrics.forget(name)
	return nil
}

// Schedulers lists the schedulers by name.
func (s *Service) Schedulers() []Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Status, 0, len(s.byName))
	for _, name := range slices.Sorted(maps.Keys(s.byName)) {
		out = append(out, s.byName[name].status())
	}
	return out
}

func (s *Service) scheduler(name string) (*scheduler, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sc, ok := s.byName[name]
	return sc, ok
}

func (s *Service) path(name string) string {
	if s.cfg.Dir == "" {
		return ""
	}
	return filepath.Join(s.cfg.Dir, name+".json")
}

func (s Spec) equal(t Spec) bool {
	return s.Policy == t.Policy && s.Strict == t.Strict && sameJSON(s.Config, t.Config)
}

func (s Spec) String() string {
	c := "{}"
	if len(s.Config) > 0 {
		c = string(s.Config)
	}
	return fmt.Sprintf("%s with config %s (strict %v)", s.Policy, c, s.Strict)
}

// sameJSON compares two configurations by value, so that key order and
// spacing do not make a conflict; empty equals {}.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 {
		a = []byte("{}")
	}
	if len(b) == 0 {
		b = []byte("{}")
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// build returns spec's policy, strict if asked.
func (s Spec) build() (policy.Policy, error) {
	p, err := policy.New(s.Policy, s.Config)
	if err != nil {
		return nil, err
	}
	if s.Strict {
		p = policy.Strict(p)
	}
	return p, nil
}
