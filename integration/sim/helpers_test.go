package sim

import "time"

func secs(n int) time.Duration { return time.Duration(n) * time.Second }
