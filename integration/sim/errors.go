package sim

import "errors"

// ErrInvalid reports an invalid simulation configuration or policy spec.
var ErrInvalid = errors.New("sim: invalid configuration")
