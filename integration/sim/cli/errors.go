package cli

import "errors"

// ErrUsage reports bad command-line usage (an unknown flag value, a missing workload).
var ErrUsage = errors.New("replay: usage")

var errUsage = ErrUsage
