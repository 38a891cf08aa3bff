package convert

import (
	"archive/tar"
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// Concat numbers the parts' shards one after the other, prefixes names,
// and opens each row's payload in its own part; TarShards.ReadPayloads
// gives the same bytes in the rows.
func TestConcatAndReadPayloads(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	writeTar(t, a, []member{{name: "x.txt", typ: tar.TypeReg, body: "first"}, {name: "d/", typ: tar.TypeDir}, {name: "d/y.txt", typ: tar.TypeReg, body: "second one"}})
	writeTar(t, b, []member{{name: "z.bin", typ: tar.TypeReg}, {name: "w.bin", typ: tar.TypeReg, body: "last"}})
	want := map[string]string{"p/x.txt": "first", "p/d/y.txt": "second one", "z.bin": "", "w.bin": "last"}
	for _, inline := range []bool{false, true} {
		c := dataset.NewConcat(dataset.Part{Source: tarSource([]string{a}, nil, inline), Prefix: "p/"}, dataset.Part{Source: tarSource([]string{b}, nil, inline)})
		if c.NumShards() != 2 || c.ShardName(1) != "b.tar" {
			t.Fatalf("%d shards, the second %q", c.NumShards(), c.ShardName(1))
		}
		got := map[string]string{}
		err := dataset.Run(context.Background(), c, dataset.RowFunc(func(shard int, r *dataset.Row) error {
			if r.Kind != dataset.KindFile {
				return nil
			}
			rd, err := c.OpenPayload(r)
			if err != nil {
				return err
			}
			body, err := io.ReadAll(rd)
			if inline && string(r.Inline) != string(body) {
				t.Errorf("%s: inline %q, payload %q", r.Name, r.Inline, body)
			}
			got[string(r.Name)] = string(body)
			return err
		}), dataset.Options{Workers: 2})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("inline %v: %v, want %v", inline, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("inline %v: %s = %q, want %q", inline, k, got[k], v)
			}
		}
	}
}
