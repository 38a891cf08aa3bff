// Package pyutf8 decodes bytes to text exactly as Python 3's
// bytes.decode("utf-8", "replace") does, which indexes written by Python
// tools (glzn's TARIDX, ratarmount's SQLite) depend on: a stem, a hash key
// or an xattr name computed here must be the one Python computed.
//
// It is a leaf: it imports only the standard library, so that every format
// package may use it.
package pyutf8
