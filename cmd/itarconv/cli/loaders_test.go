package cli

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/dali"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/loaders"
)

// TestIndexDALI: --format all writes, from the same pass, the TARIDX the
// default writes and each shard's DALI index, whose every component
// addresses its member's payload; --out-dir takes the DALI indexes too.
func TestIndexDALI(t *testing.T) {
	dir, payloads := writeShards(t, 2, 5)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "train.taridx"))
	os.Remove(filepath.Join(dir, "train.taridx"))
	if code, _, stderr := run(t, "index", "-q", "--format", "all", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "train.taridx")); !bytes.Equal(got, want) {
		t.Error("the TARIDX differs when DALI's indexes are written beside it")
	}
	seen := 0
	for _, shard := range []string{"train_0000", "train_0001"} {
		b, err := os.ReadFile(filepath.Join(dir, shard+".idx"))
		if err != nil {
			t.Fatal(err)
		}
		samples, err := dali.Parse(bytes.NewReader(b))
		if err != nil || len(samples) != 5 {
			t.Fatalf("%s.idx: %d samples, %v", shard, len(samples), err)
		}
		tarBytes, _ := os.ReadFile(filepath.Join(dir, shard+".tar"))
		for _, s := range samples {
			if len(s) != 2 || s[0].Ext != "jpg" || s[1].Ext != "cls" {
				t.Errorf("%s: sample %+v", shard, s)
			}
			for _, c := range s {
				if got := string(tarBytes[c.Offset : c.Offset+c.Size]); got != string(payloads[c.Name]) {
					t.Errorf("%s: %s at %d: not its payload", shard, c.Name, c.Offset)
				}
				seen++
			}
		}
	}
	if seen != len(payloads) {
		t.Errorf("%d components, %d members", seen, len(payloads))
	}
	// DALI alone, elsewhere: no TARIDX, the same index files.
	out := t.TempDir()
	if code, _, stderr := run(t, "index", "-q", "--format", "dali", "--out-dir", out, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 2 || entries[0].Name() != "train_0000.idx" {
		t.Errorf("--out-dir holds %v", entries)
	}
	a, _ := os.ReadFile(filepath.Join(out, "train_0001.idx"))
	b, _ := os.ReadFile(filepath.Join(dir, "train_0001.idx"))
	if !bytes.Equal(a, b) {
		t.Error("the index in --out-dir differs")
	}
	for _, args := range [][]string{
		{"index", "--format", "dali,webdataset", dir},
		{"index", "--format", "dali", "--compat", "glzn", dir},
	} {
		if code, _, stderr := run(t, args...); code != ExitUsage || !strings.HasPrefix(stderr, "itarconv: ") {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
	}
}

// writeTar writes a tar of regular members, each holding its own name.
func writeTar(t *testing.T, path string, names ...string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(n)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(n))
	}
	tw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loaderIndexes are, for each loader, the index files `index --format`
// writes for dir's two shards train_0000.tar and train_0001.tar, the one
// describing train_0001.tar first.
var loaderIndexes = map[string][]string{
	"energon":    {"train_0001.tar.idx", "train_0000.tar.idx", ".nv-meta"},
	"dali":       {"train_0001.idx", "train_0000.idx"},
	"wids":       {"shardindex.json"},
	"ratarmount": {"train_0001.tar.index.sqlite", "train_0000.tar.index.sqlite"},
}

// TestCheckLoaderIndexes: verify and inspect take each loader's index,
// find its shards, and say OK while they match; a member added to a shard
// after indexing is reported (verify exits 1, inspect 0).
func TestCheckLoaderIndexes(t *testing.T) {
	for _, loader := range loaders.Names() {
		t.Run(loader, func(t *testing.T) {
			dir, _ := writeShards(t, 2, 3)
			if code, _, stderr := run(t, "index", "-q", "--format", loader, dir); code != 0 {
				t.Fatalf("index: exit %d: %s", code, stderr)
			}
			for _, idx := range loaderIndexes[loader] {
				code, stdout, stderr := run(t, "verify", filepath.Join(dir, idx))
				if code != 0 || !strings.Contains(stdout, ": OK") || !strings.Contains(stdout, "keys OK: ") {
					t.Fatalf("verify %s: exit %d: %s%s", idx, code, stdout, stderr)
				}
			}
			// The same members, and one more at the end.
			writeTar(t, filepath.Join(dir, "train_0001.tar"),
				"s000003.jpg", "s000003.cls", "s000004.jpg", "s000004.cls", "s000005.jpg", "s000005.cls", "s000006.jpg")
			idx := filepath.Join(dir, loaderIndexes[loader][0])
			before, _ := os.ReadFile(idx)
			code, stdout, _ := runResult(t, "verify", "--json", idx)
			var rep struct {
				OK       bool
				Loader   string
				Problems []struct{ Kind, Shard, Name string }
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("verify --json: %v: %s", err, stdout)
			}
			if code != 1 || rep.Loader != loader || len(rep.Problems) == 0 {
				t.Fatalf("verify of a stale index: exit %d, %+v", code, rep)
			}
			if code, stdout, _ := run(t, "inspect", idx); code != 0 || !strings.Contains(stdout, "STALE") {
				t.Errorf("inspect of a stale index: exit %d: %s", code, stdout)
			}
			if after, _ := os.ReadFile(idx); !bytes.Equal(after, before) {
				t.Error("checking the index changed it")
			}
			if loader == "energon" {
				code, stdout, _ := run(t, "verify", filepath.Join(dir, ".nv-meta"))
				if code != 1 || !strings.Contains(stdout, `missing "s000006"`) {
					t.Errorf("verify .nv-meta of a stale dataset: exit %d: %s", code, stdout)
				}
			}
		})
	}
}

// TestLoaderIndexKeys: the keys the loaders trip over are reported, with
// counts and names.
func TestLoaderIndexKeys(t *testing.T) {
	dir := t.TempDir()
	writeTar(t, filepath.Join(dir, "train_0000.tar"), "a.jpg", "b.jpg", "a.cls", "c.jpg", "noext")
	writeTar(t, filepath.Join(dir, "train_0001.tar"), "c.cls", "f.jpg")
	if code, _, stderr := run(t, "index", "-q", "--format", "dali", dir); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	code, stdout, _ := runResult(t, "verify", "--json", filepath.Join(dir, "train_0000.idx"))
	var rep struct {
		Keys struct {
			Members, Samples int
			SplitKeys        struct {
				Count    int
				Examples []string
			} `json:"split_keys"`
			RepeatedKeys struct {
				Count    int
				Examples []string
			} `json:"repeated_keys"`
			Unusable map[string]struct {
				Count    int
				Examples []string
			} `json:"unusable_names"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	k := rep.Keys
	if code != 0 || k.Members != 5 || k.Samples != 4 || k.SplitKeys.Count != 1 || !strings.HasSuffix(k.SplitKeys.Examples[0], ": a") {
		t.Errorf("exit %d, keys %+v", code, k)
	}
	// Verifying one shard's index looks at that shard's keys only.
	if k.RepeatedKeys.Count != 0 || k.Unusable["no extension"].Count != 1 {
		t.Errorf("keys %+v", k)
	}
	// DALI's index of a name with a space in it is one DALI cannot read.
	writeTar(t, filepath.Join(dir, "train_0001.tar"), "c.cls", "f g.jpg")
	if code, _, stderr := run(t, "index", "-q", "--format", "dali", dir); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	code, stdout, _ = run(t, "verify", filepath.Join(dir, "train_0001.idx"))
	if code != 1 || !strings.Contains(stdout, "unreadable") || !strings.Contains(stdout, "names with white space: 1") {
		t.Errorf("exit %d: %s", code, stdout)
	}
}

// TestLoaderIndexesShardSet: shards of a set from several directories get
// the dataset's indexes in the directory holding them all, naming them
// relative to it; --out-dir takes every file, under the same names.
func TestLoaderIndexesShardSet(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		os.Mkdir(filepath.Join(root, d), 0o755)
	}
	writeTar(t, filepath.Join(root, "a", "part-000.tar"), "x/s1.jpg", "x/s1.cls")
	writeTar(t, filepath.Join(root, "b", "part-001.tar"), "x/s2.jpg", "x/s2.cls")
	list := filepath.Join(root, "shards.txt")
	os.WriteFile(list, []byte("a/part-000.tar\nb/part-001.tar\n"), 0o644)
	if code, _, stderr := run(t, "index", "-q", "--format", "energon,wids", "@"+list); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	info, err := os.ReadFile(filepath.Join(root, ".nv-meta", ".info.json"))
	if err != nil || !strings.Contains(string(info), `"a/part-000.tar": 1`) || !strings.Contains(string(info), `"b/part-001.tar": 1`) {
		t.Errorf(".info.json: %v\n%s", err, info)
	}
	ix, err := os.ReadFile(filepath.Join(root, "shardindex.json"))
	if err != nil || !strings.Contains(string(ix), `"url": "a/part-000.tar"`) || !strings.Contains(string(ix), `"url": "b/part-001.tar"`) {
		t.Errorf("shardindex.json: %v\n%s", err, ix)
	}
	for _, idx := range []string{".nv-meta", "shardindex.json", "a/part-000.tar.idx"} {
		if code, stdout, _ := run(t, "verify", filepath.Join(root, idx)); code != 0 {
			t.Errorf("verify %s: exit %d: %s", idx, code, stdout)
		}
	}
	out := t.TempDir()
	if code, _, stderr := run(t, "index", "-q", "--format", "all", "--out-dir", out, "@"+list); code != 0 {
		t.Fatalf("--out-dir: exit %d: %s", code, stderr)
	}
	var names []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".nv-meta", "part-000.idx", "part-000.tar.idx", "part-000.tar.index.sqlite", "part-001.idx", "part-001.tar.idx", "part-001.tar.index.sqlite", "part.taridx", "part.taridx.shards.json", "shardindex.json"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("--out-dir holds %q, want %q", names, want)
	}
}

// TestVerifyDuplicateShard: a loader index listing one shard 20 times (by
// the same name, or another name of the same file) fails verify with a
// "duplicate" problem per extra listing; before, it verified OK.
func TestVerifyDuplicateShard(t *testing.T) {
	dir, _ := writeShards(t, 1, 3)
	if code, _, stderr := run(t, "index", "-q", "--format", "wids", dir); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	idx := filepath.Join(dir, "shardindex.json")
	var doc map[string]any
	b, _ := os.ReadFile(idx)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	one := doc["shardlist"].([]any)[0].(map[string]any)
	var list []any
	for i := range 20 {
		e := map[string]any{}
		for k, v := range one {
			e[k] = v
		}
		if i == 19 {
			e["url"] = "./" + e["url"].(string) // the same file by another name
		}
		list = append(list, e)
	}
	doc["shardlist"] = list
	b, _ = json.Marshal(doc)
	os.WriteFile(idx, b, 0o644)
	code, stdout, stderr := runResult(t, "verify", "--json", idx)
	var rep struct {
		Problems []struct{ Kind, Shard, What string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("verify --json: exit %d: %v: %s%s", code, err, stdout, stderr)
	}
	dups := 0
	for _, p := range rep.Problems {
		if p.Kind == "duplicate" {
			dups++
		}
	}
	if code != ExitData || dups != 19 {
		t.Errorf("verify of an index naming one shard 20 times: exit %d, %d duplicate problems (want 19): %+v", code, dups, rep.Problems)
	}
}

// toyLoader is a loader's index for TestToyLoader: <shard>.toy beside each
// shard, its regular members' names, a line each.
type toyLoader struct{}

func (toyLoader) Name() string { return "toy" }

func (toyLoader) Outputs(shards []string) []string {
	var outs []string
	for _, s := range shards {
		outs = append(outs, s+".toy")
	}
	return outs
}

func (toyLoader) ShardFile(shard string) string { return shard + ".toy" }

func (toyLoader) Shard(_ context.Context, path string) loaders.ShardIndexer {
	return &toyIndexer{out: path + ".toy"}
}

func (toyLoader) Finish(context.Context, []string) (int, error) { return 0, nil }

type toyIndexer struct {
	out   string // "" for a check's, kept in memory
	names []string
}

func (x *toyIndexer) Member(m *tarfile.Member) {
	if m.IsRegular() {
		x.names = append(x.names, string(m.Name))
	}
}

func (x *toyIndexer) End(int64) (int, error) {
	if x.out == "" {
		return 0, nil
	}
	return 1, loaders.WriteFile(x.out, []byte(strings.Join(x.names, "\n")+"\n"))
}

func toyEntries(shard string, names []string) []loaders.Entry {
	var es []loaders.Entry
	for _, n := range names {
		es = append(es, loaders.Entry{Shard: shard, Name: n, What: "a member"})
	}
	return es
}

// TestToyLoader: a loader registered with package loaders is one the
// index command writes (--format, all) and verify and inspect check, with
// no change to the command line.
func TestToyLoader(t *testing.T) {
	loaders.Register(&loaders.Plugin{Name: "toy", Order: 1000,
		New: func(loaders.Options) loaders.Loader { return toyLoader{} },
		Indexes: []*loaders.Index{{Unit: "members",
			Detect: func(path string) bool { return strings.HasSuffix(path, ".tar.toy") },
			Shards: func(_ context.Context, path string) ([]string, error) {
				return []string{strings.TrimSuffix(path, ".toy")}, nil
			},
			Read: func(_ context.Context, path string, shards []string) ([]loaders.Entry, error) {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				return toyEntries(shards[0], strings.Fields(string(b))), nil
			},
			Expect: func(_ context.Context, _ string, shards []string) (func(string) fold.MemberSink, func() ([]loaders.Entry, error)) {
				return loaders.PerShard(shards, func(string) *toyIndexer { return &toyIndexer{} },
					func(shard string, x *toyIndexer) ([]loaders.Entry, error) { return toyEntries(shard, x.names), nil })
			},
		}}})
	t.Cleanup(func() { loaders.Unregister("toy") })

	dir, _ := writeShards(t, 2, 2)
	if code, _, stderr := run(t, "index", "-q", "--format", "toy", dir); code != 0 {
		t.Fatalf("index --format toy: exit %d: %s", code, stderr)
	}
	idx := filepath.Join(dir, "train_0001.tar.toy")
	b, err := os.ReadFile(idx)
	if err != nil || string(b) != "s000002.jpg\ns000002.cls\ns000003.jpg\ns000003.cls\n" {
		t.Fatalf("%s: %q %v", idx, b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "train.taridx")); !os.IsNotExist(err) {
		t.Errorf("--format toy wrote TARIDX too: %v", err)
	}
	code, stdout, stderr := run(t, "verify", idx)
	if code != 0 || !strings.Contains(stdout, "toy index of 1 shard, 4 members: OK") {
		t.Fatalf("verify: exit %d: %s%s", code, stdout, stderr)
	}
	writeTar(t, filepath.Join(dir, "train_0001.tar"), "s000002.jpg", "s000002.cls", "s000003.jpg", "s000003.cls", "s000009.jpg")
	if code, stdout, _ := run(t, "verify", idx); code != 1 || !strings.Contains(stdout, `missing "s000009.jpg"`) {
		t.Errorf("verify of a stale index: exit %d: %s", code, stdout)
	}
	if code, stdout, _ := run(t, "inspect", idx); code != 0 || !strings.Contains(stdout, "STALE: 1 problems") {
		t.Errorf("inspect of a stale index: exit %d: %s", code, stdout)
	}
	if code, _, stderr := run(t, "index", "-q", "--format", "nosuch", dir); code == 0 || !strings.Contains(stderr, "ratarmount, toy, all") {
		t.Errorf("--format nosuch: exit %d: %s", code, stderr)
	}
}
