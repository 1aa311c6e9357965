package gavel

import (
	"reflect"

	"github.com/dlsched/dlsched/policy"
)

// Terms lets the external tests recompute max-min terms independently of the LP.
var Terms = terms

// Warm reports a policy's Warm switch, through the Rounds that wraps it;
// false for a policy without one.
func Warm(p policy.Policy) bool {
	if r, ok := p.(*policy.Rounds); ok {
		p = r.Shares
	}
	f := reflect.ValueOf(p).Elem().FieldByName("Warm")
	return f.IsValid() && f.Bool()
}
