package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dlsched/dlsched/allocation"
)

// Policy decides how a cluster's resources are shared among its jobs.
//
// Allocate must not modify the snapshot and must honour ctx (returning an
// error that wraps ctx.Err() once it is done). It fails only for a snapshot
// that is malformed as a whole (see Screen), with an error wrapping
// ErrInvalidSnapshot; a job that is invalid, lacks a fact the policy needs
// or can never fit is left out in Decision.Unscheduled, and the others are
// scheduled. A Policy that keeps state across rounds implements Stateful;
// such a Policy is not safe for concurrent use.
type Policy interface {
	// Name returns the registered name, e.g. "gavel.las".
	Name() string
	Allocate(ctx context.Context, s *Snapshot) (*Decision, error)
}

// Decision is a policy's answer for one round.
type Decision struct {
	// Policy is the name of the policy that decided.
	Policy string `json:"policy"`
	// Objective is the optimal value of the policy's objective, where it has
	// one (documented by each policy), and zero otherwise.
	Objective float64 `json:"objective"`
	// Allocation holds each job's time shares and resources.
	Allocation allocation.Allocation `json:"allocation"`
	// Placement is the concrete assignment of GPUs for the next round, by
	// job ID: every job that runs in it is listed, every worker on one
	// server; a job that is absent does not run. Every registered policy
	// fills it, and Changes turns it into what a binder does.
	Placement map[string][]allocation.Assignment `json:"placement,omitempty"`
	// Unscheduled holds the jobs left out of this round and why, by job ID:
	// invalid jobs, jobs that can never fit on the cluster, and jobs that
	// lack a fact the policy needs.
	Unscheduled map[string]string `json:"unscheduled,omitempty"`
	// Warnings report what the policy had to give up, for example
	// constraints it dropped because they could not all be met.
	Warnings []string `json:"warnings,omitempty"`
	// Wake is when the policy wants to be asked again even if no job arrives
	// or finishes, on the clock of Snapshot.Now; zero means no such time.
	Wake time.Duration `json:"-"`
}

// Stateful is a Policy that keeps memory across rounds (queues, accounts,
// plans, a search's population). Its state is a JSON value: a scheduler
// saves it after a decision and restores it into a fresh policy of the same
// name and configuration after a restart, which then decides exactly as the
// policy that was never stopped.
type Stateful interface {
	Policy
	// SaveState returns the policy's state as JSON.
	SaveState() (json.RawMessage, error)
	// RestoreState replaces the policy's state with one SaveState
	// returned; empty input restores the initial state. A state that does
	// not decode is an error wrapping ErrInvalidConfig, and leaves the
	// policy as it was.
	RestoreState(json.RawMessage) error
}

// Warmer is a Policy that can start each call's solve where its last call
// ended (a solver's bases): much faster when the jobs change little between
// calls, with decisions equal to a cold start's only within the solver's
// tolerance, not bit for bit. The warm state is not part of a Stateful
// policy's state, so a restored policy starts cold: a scheduler that must
// decide after a restart exactly as before leaves it off, which is the
// default. A simulation, which calls one policy from start to end, turns
// it on.
type Warmer interface {
	Policy
	SetWarm(on bool)
}

// SetWarm turns warm starts on or off in p if it is a Warmer.
func SetWarm(p Policy, on bool) {
	if w, ok := p.(Warmer); ok {
		w.SetWarm(on)
	}
}

// SaveState marshals a policy's state value, for implementations of
// Stateful.SaveState.
func SaveState(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("policy: save state: %w", err)
	}
	return b, nil
}

// RestoreState decodes a saved state into a new value of type T, strictly
// (an unknown field is an error), for implementations of
// Stateful.RestoreState. Empty input gives the zero T.
func RestoreState[T any](b json.RawMessage) (T, error) {
	var v T
	if len(bytes.TrimSpace(b)) == 0 {
		return v, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return v, fmt.Errorf("%w: state: %v", ErrInvalidConfig, err)
	}
	if d.More() {
		return v, fmt.Errorf("%w: state: trailing data", ErrInvalidConfig)
	}
	return v, nil
}

// Strict returns a policy that fails the round, with an error wrapping
// ErrInvalidSnapshot that names the job, whenever p would leave a job out:
// any snapshot that fails Validate, and any decision with Unscheduled jobs.
// It is for callers who prefer the whole round to fail over scheduling the
// rest. The result is Stateful when p is.
func Strict(p Policy) Policy {
	if sp, ok := p.(Stateful); ok {
		return strictStateful{strict{p}, sp}
	}
	return strict{p}
}

type strict struct{ Policy }

// Facts implements Reader: the facts of the policy it wraps.
func (s strict) Facts() (uses, needs Facts) { return FactsOf(s.Policy) }

func (s strict) Allocate(ctx context.Context, snap *Snapshot) (*Decision, error) {
	if err := Validate(snap); err != nil {
		return nil, err
	}
	d, err := s.Policy.Allocate(ctx, snap)
	if err != nil {
		return nil, err
	}
	if len(d.Unscheduled) > 0 {
		id := slices.Min(slices.Collect(maps.Keys(d.Unscheduled)))
		return nil, fmt.Errorf("%w: job %q: %s", ErrInvalidSnapshot, id, d.Unscheduled[id])
	}
	return d, nil
}

type strictStateful struct {
	strict
	s Stateful
}

func (s strictStateful) SaveState() (json.RawMessage, error)  { return s.s.SaveState() }
func (s strictStateful) RestoreState(b json.RawMessage) error { return s.s.RestoreState(b) }

// Errors returned by this package and by policies.
var (
	// ErrInvalidSnapshot reports input that fails Validate or lacks a fact
	// the policy needs.
	ErrInvalidSnapshot = errors.New("invalid snapshot")
	// ErrUnknownPolicy reports a name that no policy registered.
	ErrUnknownPolicy = errors.New("unknown policy")
	// ErrInvalidConfig reports a configuration a policy cannot use.
	ErrInvalidConfig = errors.New("invalid policy configuration")
)

// Factory builds a policy from its configuration, a JSON object. An empty or
// nil config selects the policy's defaults.
type Factory func(config []byte) (Policy, error)

// Info describes a registered policy.
type Info struct {
	Name        string
	Description string
}

var registry struct {
	sync.RWMutex
	info      []Info
	factories map[string]Factory
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9]*(\.[a-z0-9][a-z0-9-]*)?$`)

// Register makes a policy available to New under name, which must have the
// form "<system>" or "<system>.<variant>" in lower case. It is meant to be
// called from a policy package's init function, and panics if name is malformed or taken:
// both are programming errors.
func Register(name, description string, f Factory) {
	if !validName.MatchString(name) {
		panic(fmt.Sprintf("policy: Register: malformed name %q", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.factories == nil {
		registry.factories = make(map[string]Factory)
	}
	if _, dup := registry.factories[name]; dup {
		panic(fmt.Sprintf("policy: Register: %q registered twice", name))
	}
	registry.factories[name] = f
	i, _ := slices.BinarySearchFunc(registry.info, name, func(a Info, n string) int {
		return strings.Compare(a.Name, n)
	})
	registry.info = slices.Insert(registry.info, i, Info{Name: name, Description: description})
}

// Configured returns a Factory for a policy whose configuration is its own
// JSON: it decodes the configuration (DecodeConfig) into a new zero P and,
// when check is not nil, returns check's error for it.
func Configured[T any, P interface {
	*T
	Policy
}](check func(P) error) Factory {
	return func(config []byte) (Policy, error) {
		p := P(new(T))
		if err := DecodeConfig(config, p); err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(p); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
}

// New returns the policy registered under name, configured by config (a JSON
// object; nil selects the defaults). Policies register when their package is
// imported.
func New(name string, config []byte) (Policy, error) {
	registry.RLock()
	f, ok := registry.factories[name]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (registered: %v)", ErrUnknownPolicy, name, names())
	}
	return f(config)
}

// Registered lists the registered policies, sorted by name.
func Registered() []Info {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.info)
}

func names() []string {
	var ns []string
	for _, i := range Registered() {
		ns = append(ns, i.Name)
	}
	return ns
}

// DecodeConfig decodes a policy configuration into v, rejecting unknown
// fields so that a misspelt knob is an error rather than a silent default.
// Empty input leaves v unchanged.
func DecodeConfig(config []byte, v any) error {
	if len(bytes.TrimSpace(config)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(config))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if d.More() {
		return fmt.Errorf("%w: trailing data after the configuration object", ErrInvalidConfig)
	}
	return nil
}
