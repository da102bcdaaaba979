// Package containers holds switchyard's container tests: the real binary, in a FROM scratch
// image built from the repository's Dockerfile with testcontainers-go, run as a router and
// three engine-sims on their own Docker network, and broken on purpose (engines killed,
// restarted and cut off the network, the router restarted) while a Go data plane keeps
// sending requests. It is a package of its own so that testcontainers-go's dependencies stay
// out of every other test binary.
//
// The tests skip when no Docker engine is reachable, except under CI=true, where that fails.
// Ryuk (testcontainers' reaper) is disabled since its image cannot be pulled; containers and
// networks left by a killed run are removed by label at the next run.
package containers
