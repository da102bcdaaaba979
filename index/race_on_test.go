//go:build race

package index

// raceEnabled shortens stress tests under the race detector, which slows
// them tenfold.
const raceEnabled = true
