package workload

import "errors"

// Sentinel errors, wrapped with detail; callers classify with errors.Is.
var (
	// ErrFormat reports malformed input: a row or field of a trace that cannot be read.
	ErrFormat = errors.New("workload: bad input")
	// ErrInvalid reports an invalid configuration of a generator or driver.
	ErrInvalid = errors.New("workload: invalid configuration")
)
