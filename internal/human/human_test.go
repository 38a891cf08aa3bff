package human

import (
	"strings"
	"testing"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 30: "3.0 GiB", 5 << 50: "5.0 PiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestName(t *testing.T) {
	if got := Name("a\nb.jpg"); got != `"a\nb.jpg"` {
		t.Errorf("Name(short) = %s", got)
	}
	long := strings.Repeat("x", 50<<20)
	got := Name(long)
	want := `"` + strings.Repeat("x", MaxName) + `"... (52428800 bytes)`
	if got != want {
		t.Errorf("Name(50 MiB) = %.40s... (%d bytes), want %d bytes", got, len(got), len(want))
	}
	if got := NameBytes([]byte(long)); got != want {
		t.Errorf("NameBytes(50 MiB) differs from Name")
	}
	// A cut inside a multi-byte character backs up to its start.
	euro := strings.Repeat("x", MaxName-1) + "€€"
	if got := Name(euro); got != `"`+strings.Repeat("x", MaxName-1)+`"... (261 bytes)` {
		t.Errorf("Name(cut in a rune) = %s", got)
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 shards"}, {1, "1 shard"}, {2, "2 shards"}} {
		if got := Count(c.n, "shard"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
