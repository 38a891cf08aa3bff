//go:build !unix

package ratarmount

import "testing"

func mkfifo(t *testing.T, path string) { t.Skip("no fifos here") }
