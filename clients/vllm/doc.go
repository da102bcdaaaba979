// Package vllm ingests vLLM's native KV-cache event stream.
//
// A vLLM engine started with --kv-events-config publishes every change to its
// prefix cache (blocks stored, blocks removed, cache cleared) on a ZeroMQ PUB
// socket, and keeps its recent batches on an optional ROUTER socket for
// replay. This package subscribes to those sockets with the pure-Go
// github.com/go-zeromq/zmq4, decodes the msgpack payloads defensively (both the
// positional and the map event encodings that vLLM versions in the field
// emit), tracks each publisher's sequence numbers, repairs gaps through
// replay and turns engine restarts and unrepairable gaps into an explicit
// reset, so the consumer never keeps state the engine no longer has.
//
// The package knows nothing about the KV index: decoded batches go to a Sink,
// an interface the caller implements (switchyard's server adapts it to the
// index). The pieces are usable on their own: Decoder turns one payload into
// events, ParseFrames checks one live message, and Subscriber runs the sockets.
package vllm
