// Package index is switchyard's memory of which replica holds which KV-cache
// blocks, on which tier.
package index
