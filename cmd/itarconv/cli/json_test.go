package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var snake = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// keysOf checks every object key in v, at any depth.
func keysOf(t *testing.T, what string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snake.MatchString(k) {
				t.Errorf("%s: key %q is not snake_case", what, k)
			}
			keysOf(t, what, e)
		}
	case []any:
		for _, e := range x {
			keysOf(t, what, e)
		}
	}
}

// TestJSONSnakeCase: every command's --json output speaks snake_case, at
// every depth (conversions embed their index's figures).
func TestJSONSnakeCase(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	work := t.TempDir()
	scdlSrc := scdlCase(t, "basic_50x30_f32")
	bc, tb := filepath.Join(work, "x.barecat"), filepath.Join(work, "x.tbl")
	for _, args := range [][]string{
		{"index", "--json", "-q", src},
		{"inspect", "--json", filepath.Join(src, "train.taridx")},
		{"verify", "--json", src},
		{"ls", "--json", src},
		{"convert", "--json", "-q", "--fold", "train", src, bc},
		{"inspect", "--json", bc},
		{"verify", "--json", bc},
		{"convert", "--json", "-q", bc, filepath.Join(work, "b")},
		{"convert", "--json", "-q", "--fold", "train", src, tb},
		{"inspect", "--json", tb},
		{"verify", "--json", tb},
		{"convert", "--json", "-q", tb, filepath.Join(work, "t")},
		{"inspect", "--json", scdlSrc},
		{"verify", "--json", scdlSrc},
		{"convert", "--json", "-q", scdlSrc, filepath.Join(work, "s")},
		{"convert", "--json", "-q", "--to", "scdl", filepath.Join(work, "s"), filepath.Join(work, "back")},
	} {
		code, stdout, stderr := run(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
			continue
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		n := 0
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Errorf("%v: not JSON: %v\n%s", args, err, stdout)
				break
			}
			keysOf(t, strings.Join(args[:2], " "), v)
			n++
		}
		if n == 0 {
			t.Errorf("%v: no JSON", args)
		}
	}
}
