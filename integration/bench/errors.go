package bench

import "errors"

// ErrConfig reports an invalid Config; the message names the field.
var ErrConfig = errors.New("bench: invalid config")

// ErrSetup reports that the run could not start: the router refused a replica registration or
// the index preload.
var ErrSetup = errors.New("bench: setup failed")
