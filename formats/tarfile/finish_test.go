package tarfile

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFinishRenamesNothing: Finish completes the shards under temporary
// names and says what they will be called; Commit renames them; Abort
// after Finish leaves nothing.
func TestFinishRenamesNothing(t *testing.T) {
	for _, commit := range []bool{true, false} {
		dir := t.TempDir()
		w, err := Create(WriterOptions{Dir: dir, Fold: "train", MaxMembers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a.txt", "b.txt"} {
			if _, err := w.AddBytes(Member{Name: []byte(name), Typeflag: tar.TypeReg, Size: 2, Mode: 0o644}, []byte("hi")); err != nil {
				t.Fatal(err)
			}
		}
		names, err := w.Finish()
		if err != nil || len(names) != 2 || names[1] != filepath.Join(dir, "train_0001.tar") {
			t.Fatalf("finish: %v %v", names, err)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".itarconv-tmp-") {
				t.Errorf("after Finish: %s under its final name", e.Name())
			}
		}
		if commit {
			got, err := w.Commit()
			if err != nil || len(got) != 2 {
				t.Fatalf("commit: %v %v", got, err)
			}
			for _, p := range names {
				if st, err := os.Stat(p); err != nil || st.Size() != 2048 {
					t.Errorf("%s: %v", p, err)
				}
			}
			continue
		}
		w.Abort()
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("after Abort: %d files left", len(entries))
		}
		if _, err := w.Commit(); err == nil {
			t.Error("Commit after Abort succeeded")
		}
	}
}
