//go:build !unix

package safefile

// processAlive cannot tell here: assume the process runs, and keep its files.
func processAlive(int) bool { return true }
