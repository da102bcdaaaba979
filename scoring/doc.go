// Package scoring is switchyard's routing brain: the replica registry (fleet), the per-replica
// token-load tracker fed by request lifecycle events, the routing policies, and the Router whose
// Pick selects a replica and reserves the request on it atomically.
//
// A Pick resolves its candidates (the request's list intersected with the ready replicas of the
// model), hashes the prompt into chained block hashes, asks the model's KV index for every
// candidate's overlap outside any lock, and then, under the model's lock, snapshots the candidates'
// loads, lets the policy rank them, and books the request on the winner, so that concurrent picks
// always see each other's bookings. The winner also receives short-lived predicted index entries,
// so sibling requests arriving before the engine reports its cache still see the overlap.
//
// Policies are small named types behind the Policy interface, configured from a name and a
// parameter map whose defaults are the peers' own (see the Policy* names, NewPolicy and
// Policy.Specs); Config.Extra adds the caller's own, such as an oracle told each request's true
// output length through PolicyInput.ExpectedOutputTokens. The default,
// token_load, balances the prefill work a replica would still have to do (KV overlap is the
// estimate of what is saved, per tier) against the decode blocks it is holding, optionally
// projected over each request's expected output length.
//
// scoring holds no transport code and knows nothing of protobuf; package server maps its types.
package scoring
