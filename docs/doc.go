// Package docs holds the project's documents (ARCHITECTURE.md) and the
// test that keeps them, and the package tree they describe, honest: the
// layers import only what their rules allow, every package says in its
// doc.go what it is for, and every path the documents name exists.
//
// It holds tests only; nothing imports it.
package docs
