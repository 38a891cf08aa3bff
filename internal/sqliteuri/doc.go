// Package sqliteuri names a database file for SQLite drivers that take
// URIs ("file:..."), so that options such as mode=ro or immutable=1 can
// follow the path whatever characters the path holds.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package sqliteuri
