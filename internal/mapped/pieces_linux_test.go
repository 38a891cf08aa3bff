package mapped

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// Pieces are written from mappings of a source's files: a
// source cut short after it was mapped is an error naming the output and
// the offset (ErrGone), not a crash nor a short shard.
func TestWritePiecesSourceCutShort(t *testing.T) {
	dir := t.TempDir()
	src, f := testutil.SourceFile(t, dir, "src.tar", 64<<10)
	m, err := Map(f, 0, 64<<10) // over readBelow: mapped, not read
	if err != nil {
		t.Skip(err)
	}
	defer m.Close()
	if err := os.Truncate(src, 0); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "shard.00000.mds"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	err = WritePieces(out, [][]byte{[]byte("head"), m.Bytes(8192, 32<<10)}, 100)
	if !errors.Is(err, ErrGone) {
		t.Fatalf("writing from a mapping of a file cut short: %v, want ErrGone", err)
	}
	if want := "shard.00000.mds at offset 104"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	// The piece that could not be written, and where it came from.
	var ge *GoneError
	if !errors.As(err, &ge) || ge.Piece == nil {
		t.Fatalf("%v: no piece said", err)
	}
	if name, off, ok := m.Where(ge.Piece); !ok || name != src || off != 8192 {
		t.Errorf("the piece lies at %s, %d, %v; want %s, 8192", name, off, ok, src)
	}
	if _, _, ok := m.Where([]byte("head")); ok {
		t.Error("bytes of the heap said to lie in the mapping")
	}
}
