package sqliteuri

import (
	"path/filepath"
	"testing"
)

func TestFile(t *testing.T) {
	tests := []struct{ path, query, want string }{
		{"/d/x.sqlite", "", "file:/d/x.sqlite"},
		{"/d/x.sqlite", "mode=ro", "file:/d/x.sqlite?mode=ro"},
		{"/d/a%b?c#d.sqlite", "mode=ro&immutable=1", "file:/d/a%25b%3Fc%23d.sqlite?mode=ro&immutable=1"},
	}
	for _, tt := range tests {
		got, err := File(filepath.FromSlash(tt.path), tt.query)
		if err != nil || got != tt.want {
			t.Errorf("File(%q, %q) = %q, %v; want %q", tt.path, tt.query, got, err, tt.want)
		}
	}
}
