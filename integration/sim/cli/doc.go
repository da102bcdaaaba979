// Package cli implements `switchyard replay`: it loads or generates a workload, simulates it on
// a fleet once per routing policy (package sim), prints the side-by-side table and writes the
// JSON report and SVG plots.
package cli
