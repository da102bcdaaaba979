package index

import "testing"

// TestBetterIsATotalOrder checks that of two different overlaps exactly one is better, so the
// best over a replica's DP ranks does not depend on the order they are compared in (the
// fuzz corpus entry 9a5b2c87bf7a38e3 once found two ranks tying on every criterion but the
// last).
func TestBetterIsATotalOrder(t *testing.T) {
	var all []Overlap
	for dev := range 3 {
		for prefix := dev; prefix <= 3; prefix++ {
			for host := 0; host <= prefix-dev; host++ {
				for devBest := dev; devBest <= prefix-host; devBest++ {
					for pred := 0; pred <= devBest; pred++ {
						all = append(all, Overlap{Device: dev, Prefix: prefix, Predicted: pred,
							Tiers: [NumTiers]int{devBest, host, prefix - host - devBest}})
					}
				}
			}
		}
	}
	for _, a := range all {
		if a.better(a) {
			t.Fatalf("%+v is better than itself", a)
		}
		for _, b := range all {
			if a != b && a.better(b) == b.better(a) {
				t.Fatalf("%+v and %+v: better both ways or neither", a, b)
			}
		}
	}
}
