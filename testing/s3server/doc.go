// Package s3server runs a real S3 server on loopback for tests: the
// versitygw gateway with its POSIX backend, over a temporary directory in
// which each top-level folder is a bucket and each file an object.
//
// Tests talk to it with SigV4 and real HTTP, as to any S3-compatible
// store, so that what they check (ranges, ETags, If-Match, listing pages,
// refused credentials) is what S3 does, not what a stand-in guesses.
//
// It is for tests and benchmarks only: no product package imports it.
package s3server
