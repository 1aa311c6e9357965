package cpu

import "time"

var origin = time.Now()

// wall is the fallback of Used: time since the package was loaded.
func wall() time.Duration { return time.Since(origin) }
