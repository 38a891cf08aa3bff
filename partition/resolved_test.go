package partition

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/itarconv/itarconv/internal/sharedrec"
	"github.com/itarconv/itarconv/shardset"
)

// resolvedRun is a run's shards and the @LIST naming them.
func resolvedRun(t *testing.T, n int) (dir, list, out string, shards []string) {
	t.Helper()
	dir = t.TempDir()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("s%02d.tar", i))
		if err := os.WriteFile(p, make([]byte, 1000+100*i), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, p)
	}
	list = filepath.Join(dir, "shards.list")
	var body []byte
	for _, s := range shards {
		body = append(body, filepath.Base(s)+"\n"...)
	}
	if err := os.WriteFile(list, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, list, filepath.Join(dir, "out.tbl"), shards
}

// counted is shardset.ResolveInfo of args, counting its calls.
func counted(ctx context.Context, args []string, calls *int) func() ([]string, []fs.FileInfo, error) {
	return func() ([]string, []fs.FileInfo, error) {
		*calls++
		return shardset.ResolveInfo(ctx, args)
	}
}

// TestResolveShared: the first task resolves an @LIST and records it; a
// later task takes the record (the same shards; each stat's size, time
// and file), checking only its own shards. A record is not taken where a
// task's own shard changed, the list was written again, the record is
// damaged, or an argument is no list; nothing is recorded for URLs.
func TestResolveShared(t *testing.T) {
	if _, _, ok := fileID(mustStat(t, t.TempDir())); !ok {
		t.Skip("no file identity here: nothing is recorded")
	}
	ctx := context.Background()
	dir, list, out, shards := resolvedRun(t, 6)
	args := []string{"@" + list}
	var calls int
	names, infos, err := ResolveShared(ctx, args, out, Task{K: 0, N: 3}, counted(ctx, args, &calls))
	if err != nil || calls != 1 || !slices.Equal(names, shards) {
		t.Fatalf("first task: %v, %d resolves, %v", names, calls, err)
	}
	got, gotInfos, err := ResolveShared(ctx, args, out, Task{K: 2, N: 3}, counted(ctx, args, &calls))
	if err != nil || calls != 1 || !slices.Equal(got, shards) {
		t.Fatalf("later task: %v, %d resolves (want the record's), %v", got, calls, err)
	}
	for i, fi := range gotInfos {
		st := mustStat(t, shards[i])
		if !sameRecorded(st, fi) || !fi.Mode().IsRegular() || fi.Size() != infos[i].Size() {
			t.Errorf("%s: recorded %v, stat %v", shards[i], fi, st)
		}
	}

	// Task 2 of 3 owns the last shards: one of them touched is resolved
	// again; one of task 0's is not this task's to check.
	later := time.Now().Add(time.Hour)
	os.Chtimes(shards[5], later, later)
	if _, _, err := ResolveShared(ctx, args, out, Task{K: 2, N: 3}, counted(ctx, args, &calls)); err != nil || calls != 2 {
		t.Errorf("own shard changed: %d resolves, want 2 (%v)", calls, err)
	}
	os.Chtimes(shards[0], later, later)
	if _, _, err := ResolveShared(ctx, args, out, Task{K: 2, N: 3}, counted(ctx, args, &calls)); err != nil || calls != 2 {
		t.Errorf("another task's shard changed: %d resolves, want 2 (the record of the last resolve)", calls)
	}
	if _, _, err := ResolveShared(ctx, args, out, Task{K: 0, N: 3}, counted(ctx, args, &calls)); err != nil || calls != 3 {
		t.Errorf("the owner of the changed shard: %d resolves, want 3", calls)
	}

	// The list written again: another record.
	os.Chtimes(list, later, later)
	if _, _, err := ResolveShared(ctx, args, out, Task{K: 1, N: 3}, counted(ctx, args, &calls)); err != nil || calls != 4 {
		t.Errorf("the list written again: %d resolves, want 4", calls)
	}

	// A damaged record is resolved again.
	recs, _ := filepath.Glob(filepath.Join(PartsDir(out), SharedPrefix+"resolved-*"))
	if len(recs) != 2 {
		t.Fatalf("records: %v, want one for each version of the list", recs)
	}
	for _, r := range recs {
		b, _ := os.ReadFile(r)
		b[len(b)/2] ^= 1
		os.WriteFile(r, b, 0o600)
	}
	if _, _, err := ResolveShared(ctx, args, out, Task{K: 1, N: 3}, counted(ctx, args, &calls)); err != nil || calls != 5 {
		t.Errorf("a damaged record: %d resolves, want 5", calls)
	}

	// Arguments that are not all lists are resolved, and not recorded.
	extra := filepath.Join(dir, "extra.tar")
	os.WriteFile(extra, make([]byte, 512), 0o644)
	plain := []string{extra, "@" + list}
	out2 := filepath.Join(dir, "other.tbl")
	for range 2 {
		if _, _, err := ResolveShared(ctx, plain, out2, Task{K: 0, N: 2}, counted(ctx, plain, &calls)); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 7 {
		t.Errorf("a shard and a list: %d resolves, want 7", calls)
	}
	if _, err := os.Stat(PartsDir(out2)); err == nil {
		t.Errorf("a record was left for arguments that are not all lists")
	}
}

func mustStat(t *testing.T, p string) fs.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// FuzzDecodeResolved: a record's decoder takes any bytes without
// panicking or allocating past what they hold; what it takes has a name
// and a size for each shard.
func FuzzDecodeResolved(f *testing.F) {
	dir := f.TempDir()
	var names []string
	var infos []fs.FileInfo
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("s%d.tar", i))
		os.WriteFile(p, make([]byte, i*512), 0o644)
		fi, err := os.Lstat(p)
		if err != nil {
			f.Fatal(err)
		}
		names, infos = append(names, p), append(infos, fi)
	}
	if rec, ok := encodeResolved(names, infos); ok {
		f.Add(rec)
		f.Add(sharedrec.Seal("x", rec))
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		names, infos, ok := decodeResolved(b)
		if !ok {
			return
		}
		if len(names) != len(infos) || len(names) > len(b) {
			t.Fatalf("%d names, %d infos from %d bytes", len(names), len(infos), len(b))
		}
		for i, fi := range infos {
			if names[i] == "" || fi.Size() < 0 {
				t.Fatalf("shard %d: %q, size %d", i, names[i], fi.Size())
			}
		}
	})
}

// TestResolveSharedMakesNoOutputDir: a task whose output's directory is
// not there yet records nothing, and makes no directory (the command
// makes the output's directories once its checks pass, and takes them
// away again if the run fails).
func TestResolveSharedMakesNoOutputDir(t *testing.T) {
	ctx := context.Background()
	dir, list, _, _ := resolvedRun(t, 3)
	args := []string{"@" + list}
	out := filepath.Join(dir, "new", "out.tbl")
	var calls int
	if _, _, err := ResolveShared(ctx, args, out, Task{K: 0, N: 2}, counted(ctx, args, &calls)); err != nil || calls != 1 {
		t.Fatalf("%d resolves, %v", calls, err)
	}
	if _, err := os.Stat(filepath.Dir(out)); err == nil {
		t.Errorf("the output's directory was made before the command's checks")
	}
}
