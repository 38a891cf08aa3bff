// Package s3 finds and signs objects in S3 and S3-compatible stores, so
// that their bytes can be read by plain ranged HTTP GETs.
//
// The SDK is used only for what it does best: configuration, credentials,
// endpoint resolution, presigning and listing. The bytes themselves are
// fetched through a presigned GET URL by the caller's own HTTP path, so
// that S3 objects share the planner, retries and connection limit of every
// other remote file.
//
// It imports no command line, no test helper and no benchmark.
package s3
