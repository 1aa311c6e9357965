package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Times are time.Duration in Go and seconds in JSON. Each type below marshals
// through an alias of itself (which drops the methods, so no recursion) with
// its duration fields shadowed by float seconds.

func seconds(d time.Duration) float64 { return d.Seconds() }

// duration converts JSON seconds, rejecting values a Duration cannot hold.
func duration(field string, s float64) (time.Duration, error) {
	// float64(MaxInt64) rounds up to 2⁶³, so ns must stay strictly below it.
	ns := math.Round(s * 1e9)
	if math.IsNaN(ns) || ns < math.MinInt64 || ns >= math.MaxInt64 {
		return 0, fmt.Errorf("%w: %s: %v seconds is out of range", ErrInvalidSnapshot, field, s)
	}
	return time.Duration(ns), nil
}

// MarshalJSON encodes Now in seconds.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	type plain Snapshot
	return json.Marshal(struct {
		Now float64 `json:"now"`
		plain
	}{seconds(s.Now), plain(s)})
}

// UnmarshalJSON decodes Now from seconds.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	type plain Snapshot
	v := struct {
		Now float64 `json:"now"`
		*plain
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	s.Now, err = duration("now", v.Now)
	return err
}

// MarshalJSON encodes Arrival and Deadline in seconds.
func (j Job) MarshalJSON() ([]byte, error) {
	type plain Job
	return json.Marshal(struct {
		plain
		Arrival  float64 `json:"arrival"`
		Deadline float64 `json:"deadline,omitempty"`
	}{plain(j), seconds(j.Arrival), seconds(j.Deadline)})
}

// UnmarshalJSON decodes Arrival and Deadline from seconds.
func (j *Job) UnmarshalJSON(b []byte) error {
	type plain Job
	v := struct {
		*plain
		Arrival  float64 `json:"arrival"`
		Deadline float64 `json:"deadline"`
	}{plain: (*plain)(j)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	if j.Arrival, err = duration(fmt.Sprintf("job %q: arrival", j.ID), v.Arrival); err != nil {
		return err
	}
	j.Deadline, err = duration(fmt.Sprintf("job %q: deadline", j.ID), v.Deadline)
	return err
}

// MarshalJSON encodes Wake in seconds.
func (d Decision) MarshalJSON() ([]byte, error) {
	type plain Decision
	return json.Marshal(struct {
		plain
		Wake float64 `json:"wake,omitempty"`
	}{plain(d), seconds(d.Wake)})
}

// UnmarshalJSON decodes Wake from seconds.
func (d *Decision) UnmarshalJSON(b []byte) error {
	type plain Decision
	v := struct {
		*plain
		Wake float64 `json:"wake"`
	}{plain: (*plain)(d)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	d.Wake, err = duration("wake", v.Wake)
	return err
}
