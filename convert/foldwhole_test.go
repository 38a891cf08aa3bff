package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/safefile"
)

// inlineSource is one shard of small files whose payloads are in the rows.
type inlineSource struct{ rows []dataset.Row }

func samples(n int, tag string) *inlineSource {
	s := &inlineSource{}
	for i := 0; i < n; i++ {
		for _, ext := range []string{"jpg", "cls"} {
			body := []byte(fmt.Sprintf("%s-%d-%s", tag, i, ext))
			s.rows = append(s.rows, dataset.Row{Name: []byte(fmt.Sprintf("k%03d.%s", i, ext)), Kind: dataset.KindFile, Size: int64(len(body)), Mode: 0o644, Inline: body})
		}
	}
	return s
}

func (s *inlineSource) NumShards() int       { return 1 }
func (s *inlineSource) ShardName(int) string { return "inline" }
func (s *inlineSource) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	return emit(append([]dataset.Row(nil), s.rows...))
}

// listDir lists a directory's file names, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestWriteFoldWhole: a fold written into a directory that holds more
// shards of the same fold from an earlier run is refused, naming the
// shards it would leave, and the earlier fold stays as it was; with
// Replace the new fold replaces the earlier one whole; a failed run with
// Replace leaves the earlier fold intact.
func TestWriteFoldWhole(t *testing.T) {
	dir := t.TempDir()
	src5 := &wrapPayload{samples(10, "old")}
	st, err := fold.Write(context.Background(), src5, fold.WriteOptions{Dir: dir, MaxMembers: 4})
	if err != nil || len(st.Shards) != 5 {
		t.Fatalf("first fold: %v %+v", err, st)
	}
	// A shard of another fold stays whatever happens.
	os.WriteFile(filepath.Join(dir, "val_0000.tar"), []byte("other fold"), 0o644)
	before := readTree(t, dir)

	_, err = fold.Write(context.Background(), &wrapPayload{samples(6, "new")}, fold.WriteOptions{Dir: dir, MaxMembers: 4})
	if !errors.Is(err, fold.ErrExists) || !strings.Contains(err.Error(), "train_0003.tar, train_0004.tar (2 in all)") {
		t.Fatalf("error %v, want fold.ErrExists naming train_0003.tar and train_0004.tar", err)
	}
	after := readTree(t, dir)
	if len(after) != len(before) {
		t.Fatalf("files %v, want the earlier %d", listDir(t, dir), len(before))
	}
	for name, b := range before {
		if string(after[name]) != string(b) {
			t.Errorf("%s changed", name)
		}
	}

	// Replace, but the run fails: the earlier fold is intact.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fold.Write(ctx, &wrapPayload{samples(6, "new")}, fold.WriteOptions{Dir: dir, MaxMembers: 4, Replace: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled run: %v", err)
	}
	if after := readTree(t, dir); len(after) != len(before) || string(after["train_0004.tar"]) != string(before["train_0004.tar"]) {
		t.Fatalf("a failed run changed the earlier fold: %v", listDir(t, dir))
	}

	st, err = fold.Write(context.Background(), &wrapPayload{samples(6, "new")}, fold.WriteOptions{Dir: dir, MaxMembers: 4, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"train.taridx", "train_0000.tar", "train_0001.tar", "train_0002.tar", "val_0000.tar"}
	if got := listDir(t, dir); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", got, want)
	}
	if len(st.Replaced) != 2 || filepath.Base(st.Replaced[0]) != "train_0003.tar" {
		t.Errorf("replaced %v", st.Replaced)
	}
	x, err := taridx.ReadFile(filepath.Join(dir, "train.taridx"))
	if err != nil || x.Len() != 12 || x.Header.NStems != 6 {
		t.Fatalf("index: %v", err)
	}
	var members []string
	for _, e := range readTarDir(t, st.Shards) {
		members = append(members, e.body)
	}
	if len(members) != 12 || members[0] != "new-0-jpg" || members[11] != "new-5-cls" {
		t.Errorf("members %q", members)
	}
}

// wrapPayload makes an inlineSource a PayloadSource.
type wrapPayload struct{ *inlineSource }

func (w *wrapPayload) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return nil, errors.New("inline only")
}

// TestSCDLExportAppearsWhole: while the cells fold is being written, no
// file of the scdlmeta fold is under its final name (a kill then leaves
// only temporary files); an error in the cells fold leaves nothing; a
// rerun over a killed run's temporary files succeeds and sweeps them.
func TestSCDLExportAppearsWhole(t *testing.T) {
	src := scdlCases(t)["basic_50x30_f32"]
	a, err := scdl.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var during []string
	_, err = SCDLToTar(ctx, a, SCDLExportOptions{Dir: dir, CellsPerShard: 10, Progress: func(dataset.Progress) {
		if during == nil {
			during = listDir(t, dir)
		}
		cancel() // an error in the second fold
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	for _, name := range during {
		if !strings.HasPrefix(name, safefile.TempPrefix) {
			t.Errorf("while writing the cells, %s is already under its final name", name)
		}
	}
	if left := listDir(t, dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	// A killed run leaves temporary files of a process that is gone (in a
	// directory of its own: a process sweeps each directory once).
	dir = t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no process to wait for:", err)
	}
	for _, name := range []string{"scdlmeta_0.tar", "scdlmeta.taridx", "cells_0.tar"} {
		leftover := fmt.Sprintf("%s%d-%s-123", safefile.TempPrefix, dead.Process.Pid, name)
		if err := os.WriteFile(filepath.Join(dir, leftover), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := SCDLToTar(context.Background(), a, SCDLExportOptions{Dir: dir})
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	got := listDir(t, dir)
	want := []string{"cells.taridx", filepath.Base(st.Fold.Shards[0]), "scdlmeta.taridx", filepath.Base(st.Meta.Shards[0])}
	sort.Strings(want)
	if len(st.Fold.Shards) != 1 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", got, want)
	}
}
