//go:build !unix

package cpu

import "time"

func used() (time.Duration, bool) { return wall(), false }
