// Package human prints figures as people read them.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package human
