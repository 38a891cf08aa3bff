// Package remote reads shards where they live: files on HTTP(S) servers
// and objects in S3 (or a store that speaks its protocol), read by byte
// ranges, each request retried alone when the server fails it for a
// while, with a bounded number of requests in flight across all files.
//
// A File is an io.ReaderAt: one ReadAt is one ranged GET, which is what a
// reader of one member wants (cat). A scan of a shard's headers reads
// through a Sequential reader instead, which plans its requests from the
// gaps it is asked to cross: it streams a region whole while the members
// are small (a request per header would cost a round trip each) and seeks
// past payloads larger than what the link carries in a round trip.
//
// S3 objects are read by presigned GET URLs (package remote/s3 gives
// them, from the standard AWS configuration), so they share the HTTP
// path: the same retries, planning and connection limit.
//
// Every response is checked against what is known of the file (its size,
// its ETag, or its Last-Modified when it has no ETag): a file that
// changed is refused (ErrChanged), never read in part from another
// version. A response that sends nothing for Options.Idle, or less than
// Options.MinRate over that long, is abandoned and retried.
//
// No credential reaches a message: files are named by Redact's form of
// their URL, and S3 objects as s3://bucket/key, never by a presigned URL.
// Requests for http(s) URLs are authenticated without secrets in the URL
// by the netrc file and by the header HeaderEnv holds (see Open).
//
// A Client holds what reads need: the HTTP client, the bound on requests
// in flight, the retry policy. The caller makes one and passes it in the
// context (WithClient); library code takes it from there (ClientFrom),
// the documented DefaultClient when none was given. The package keeps no
// configuration of its own: only what it learnt of files (Known) and of
// the link (its round trip and rate, which plan Sequential's requests).
//
// It imports no command line, no test helper and no benchmark.
package remote
