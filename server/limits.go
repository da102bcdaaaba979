package server

import "unicode/utf8"

// limits validates ids and sizes against the configured bounds.
type limits struct{ Config }

// id checks an identifier field: present when required, valid UTF-8, and
// within MaxIDBytes.
func (l limits) id(field, v string, required bool) error {
	switch {
	case v == "" && required:
		return invalid(field, "is required")
	case len(v) > l.MaxIDBytes:
		return invalid(field, "is %d bytes, more than the limit of %d", len(v), l.MaxIDBytes)
	case !utf8.ValidString(v):
		return invalid(field, "is not valid UTF-8")
	}
	return nil
}
