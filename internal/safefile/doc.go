// Package safefile writes a file so that it appears under its name only when
// complete: bytes go to a temporary file in the same directory, which is
// synced and renamed to the target on Commit. A failure, or a kill, leaves
// any earlier file of that name untouched and, after Abort, nothing behind.
//
// Commit never replaces a file: when the target appeared meanwhile (another
// run writing the same output), it fails with ErrExists and that file stays
// as its writer left it. Replacing is asked for by CommitReplace.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package safefile
