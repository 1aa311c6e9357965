//go:build unix

package cpu

import (
	"syscall"
	"time"
)

func used() (time.Duration, bool) {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return wall(), false
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()), true
}
