// Package switchyard is the Go client for a switchyard router: the calls a
// data plane makes on its hot path, and the helpers that keep the router's
// view of the fleet current without slowing that path down.
//
// A data plane asks [Client.Pick] which replica gets a request, then tells
// the router how the request progresses (admitted, first token, progress,
// done) so the replica's token load stays accurate. Reporting one RPC per
// event would cost more than the request itself, so a [Reporter] queues
// events and streams them in batches over StreamLifecycle: Report never
// blocks, batches leave every few milliseconds or every N events, a broken
// stream is reopened with exponential backoff and its unconfirmed events are
// sent again (the router ignores duplicates), and the queue is bounded: when
// it overflows the oldest events are dropped and counted in [ReporterStats].
//
// Engine sidecars that feed the router's KV index use a [KVPublisher], which
// numbers batches for the router's gap detection and marks the loss
// explicitly when it has to open a new stream.
//
// Every call takes a context; unary calls without a deadline get the
// client's default timeout ([WithTimeout]). Failed calls return an [*Error]
// that matches the sentinel errors of this package (and context.Canceled or
// context.DeadlineExceeded) with errors.Is.
//
// The import path ends in "go"; the package name is switchyard.
package switchyard
