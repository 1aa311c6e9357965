//go:build !cgo || noclp

package allocation

import "github.com/dlsched/dlsched/internal/lp"

func clpEngine() lp.Engine { return nil }
