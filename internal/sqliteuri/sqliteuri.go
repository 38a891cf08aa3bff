package sqliteuri

import (
	"fmt"
	"path/filepath"
	"strings"
)

// File is the "file:" URI of the file at path (made absolute), with the
// characters that URIs reserve percent-encoded, and the given query
// (without "?").
func File(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(abs); i++ {
		switch c := abs[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	if query != "" {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String(), nil
}
