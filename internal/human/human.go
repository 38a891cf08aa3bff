package human

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Bytes prints a byte count: 512 B, 1.5 KiB, 3.2 GiB.
func Bytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB", "PiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// MaxName is how many bytes of a name Name keeps.
const MaxName = 256

// Name prints a name taken from an input for a message: quoted as Go
// quotes strings (so control bytes and invalid UTF-8 cannot garble a
// terminal), and cut after MaxName bytes with the name's full length,
// so that one hostile field (a 50 MiB path) cannot make a message, or
// the memory that builds it, grow with it.
func Name(name string) string {
	if len(name) <= MaxName {
		return strconv.Quote(name)
	}
	return cut(name[:MaxName], len(name))
}

// NameBytes is Name for a name held as bytes; only the bytes kept are
// copied.
func NameBytes(name []byte) string {
	if len(name) <= MaxName {
		return strconv.Quote(string(name))
	}
	return cut(string(name[:MaxName]), len(name))
}

func cut(head string, n int) string {
	// Cut on a character boundary where one is near.
	for i := 0; i < utf8.UTFMax && !utf8.ValidString(head); i++ {
		head = head[:len(head)-1]
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(head), n)
}

// Count says n things: "1 shard", "3 shards" (noun takes an s).
func Count[N ~int | ~int64 | ~uint64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
