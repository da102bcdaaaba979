// Package integration holds switchyard's end-to-end tests: the real server
// started on a loopback port and driven through its public clients (the
// generated gRPC client, Connect with JSON, gRPC-Web), and the real binary
// run as a process.
package integration
