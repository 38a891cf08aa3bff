// Package netproxy is an HTTP reverse proxy on loopback that makes a
// server nearby behave like one far away: each round trip is delayed, each
// client connection's bandwidth is capped, as an object store caps each
// connection, and faults can be injected at chosen rates. Benches put it
// in front of a local file server to time reads from a remote store;
// tests put it there to check how readers survive a failing one.
//
// Bodies are streamed, never held whole (a shard can be gigabytes), and
// the Host header reaches the upstream as the client sent it, so that
// URLs signed for the proxy's address (S3 presigned URLs sign the host)
// stay valid behind it.
//
// It is for tests and benchmarks only: no product package imports it.
package netproxy
