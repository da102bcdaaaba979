package switchyard

import (
	"math/rand/v2"
	"time"
)

// backoffDelay is the wait after the n-th consecutive failure (n >= 1):
// min doubled per failure, capped at max, drawn uniformly from its upper half
// so that many clients restarting together do not retry in step.
func backoffDelay(minD, maxD time.Duration, n int) time.Duration {
	d := maxD
	if n < 1 {
		n = 1
	}
	if n <= 30 {
		if v := minD << (n - 1); v > 0 && v < maxD {
			d = v
		}
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
