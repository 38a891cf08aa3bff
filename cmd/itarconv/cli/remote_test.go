package cli

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/testing/netproxy"
	"github.com/itarconv/itarconv/testing/s3server"
)

// remoteShards writes a fold of shards, small members and one shard of
// large ones (which a scan crosses by seeking, not streaming), and serves
// its directory by the standard library's file server and by a real S3
// server (versitygw) as bucket "shards". It returns the local paths and
// both URL forms of each.
func remoteShards(t *testing.T) (local, viaHTTP, viaS3 []string) {
	t.Helper()
	dir := t.TempDir()
	local = makeShards(t, dir, 30, 50, 10)
	big := filepath.Join(dir, "data-00003.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range 3 {
		payload := bytes.Repeat([]byte{byte('a' + i)}, 3<<20+i*1000)
		tw.WriteHeader(&tar.Header{Name: "big/b" + string(rune('0'+i)) + ".bin", Size: int64(len(payload)), Mode: 0o644})
		tw.Write(payload)
	}
	tw.Close()
	if err := os.WriteFile(big, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	local = append(local, big)

	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	s3 := s3server.Start(t, map[string]string{"shards": dir})
	s3.SetEnv(t)
	for _, p := range local {
		viaHTTP = append(viaHTTP, srv.URL+"/"+filepath.Base(p))
		viaS3 = append(viaS3, "s3://shards/"+filepath.Base(p))
	}
	return local, viaHTTP, viaS3
}

// TestRemoteShards: every command over URLs (HTTP and S3, in each
// shard-set form) writes what it writes over the same shards on disk,
// byte for byte; commands given only the index read the members where
// they live.
func TestRemoteShards(t *testing.T) {
	local, viaHTTP, viaS3 := remoteShards(t)
	base := strings.TrimSuffix(viaHTTP[0], "/data-00000.tar")

	type outputs struct {
		files            map[string][]byte
		ls, cat, inspect string
		barecat          string
		verify           string
	}
	runAll := func(t *testing.T, shards ...string) outputs {
		t.Helper()
		out := t.TempDir()
		args := append([]string{"index", "-q", "--format", "all", "--out-dir", out}, shards...)
		if code, _, stderr := run(t, args...); code != 0 {
			t.Fatalf("index %v: %d: %s", shards, code, stderr)
		}
		idx := filepath.Join(out, "data.taridx")
		var o outputs
		var code int
		var stderr string
		if code, o.ls, stderr = run(t, "ls", idx); code != 0 {
			t.Fatalf("ls: %d %s", code, stderr)
		}
		if code, o.cat, stderr = run(t, "cat", idx, "sub/s00042.jpg"); code != 0 {
			t.Fatalf("cat: %d %s", code, stderr)
		}
		if code, o.verify, stderr = run(t, "verify", "--data", idx); code != 0 {
			t.Fatalf("verify: %d %s %s", code, o.verify, stderr)
		}
		if code, o.inspect, stderr = runResult(t, "inspect", "--json", idx); code != 0 {
			t.Fatalf("inspect: %d %s", code, stderr)
		}
		for _, target := range []string{"x.tbl", "x.barecat"} {
			args := append([]string{"convert", "-q"}, shards...)
			if code, _, stderr := run(t, append(args, filepath.Join(out, target))...); code != 0 {
				t.Fatalf("convert to %s: %d %s", target, code, stderr)
			}
		}
		// Given only the index: the shards come from its manifest.
		if code, _, stderr := run(t, "convert", "-q", idx, filepath.Join(out, "fromindex.tbl")); code != 0 {
			t.Fatalf("convert from the index: %d %s", code, stderr)
		}
		if code, o.barecat, stderr = run(t, "ls", filepath.Join(out, "x.barecat")); code != 0 {
			t.Fatalf("ls x.barecat: %d %s", code, stderr)
		}
		o.verify = strings.ReplaceAll(o.verify, out, "OUT")
		if code, stdout, stderr := run(t, "verify", filepath.Join(out, "shardindex.json")); code != 0 {
			t.Fatalf("verify shardindex.json: %d %s %s", code, stdout, stderr)
		}
		o.files = collect(t, out, nil)
		manifest := o.files["data.taridx"+fold.ManifestSuffix]
		if !bytes.Contains(manifest, []byte(`"size":`)) {
			t.Fatalf("manifest %s", manifest)
		}
		// What names the shards' location: the manifest; wids' index
		// (by URL); the SQLite of Barecat (compared by listing) and of
		// ratarmount, which records the archive's stat.
		for name := range o.files {
			if strings.HasSuffix(name, fold.ManifestSuffix) || strings.HasSuffix(name, ".index.sqlite") || name == "x.barecat" {
				delete(o.files, name)
			}
		}
		return o
	}
	want := runAll(t, local...)
	wantWids := want.files["shardindex.json"]
	delete(want.files, "shardindex.json")
	for _, c := range []struct {
		name   string
		shards []string
	}{
		{"http list", viaHTTP},
		{"http braces", []string{base + "/data-{00000..00003}.tar"}},
		{"s3 list", viaS3},
		{"s3 glob", []string{"s3://shards/data-*.tar"}},
		{"s3 braces", []string{"s3://shards/data-0000{0..3}.tar"}},
		{"@file", []string{"@" + writeList(t, viaS3)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runAll(t, c.shards...)
			// wids' index names each shard by its URL (and the dataset
			// after the URLs' path).
			sameWids(t, got.files["shardindex.json"], wantWids)
			delete(got.files, "shardindex.json")
			sameFiles(t, c.name, got.files, want.files)
			for what, pair := range map[string][2]string{"ls": {got.ls, want.ls}, "cat": {got.cat, want.cat}, "verify": {got.verify, want.verify},
				"ls x.barecat": {got.barecat, want.barecat}} {
				if pair[0] != pair[1] {
					t.Errorf("%s: %q, on disk %q", what, pair[0], pair[1])
				}
			}
		})
	}

	// Remote shards into a local fold: each copied as it is, and indexed.
	fo := filepath.Join(t.TempDir(), "fold")
	if code, _, stderr := run(t, append(append([]string{"convert", "-q"}, viaS3...), fo)...); code != 0 {
		t.Fatalf("convert into a fold: %d %s", code, stderr)
	}
	for i, p := range local {
		got, _ := os.ReadFile(filepath.Join(fo, filepath.Base(p)))
		if want, _ := os.ReadFile(p); !bytes.Equal(got, want) {
			t.Errorf("fold shard %d differs from %s", i, p)
		}
	}
	if code, stdout, stderr := run(t, "verify", "--data", filepath.Join(fo, "data.taridx")); code != 0 {
		t.Errorf("verify the fold: %d %s %s", code, stdout, stderr)
	}

	// energon's .nv-meta cannot name shards of two locations.
	mixed := []string{viaS3[0], viaHTTP[1]}
	code, _, stderr := run(t, append([]string{"index", "-q", "--format", "energon", "--out-dir", t.TempDir()}, mixed...)...)
	if code == 0 || !strings.Contains(stderr, "under several") {
		t.Errorf("energon over two locations: exit %d, %s", code, stderr)
	}

	// A partitioned run over URLs: two tasks, then the merge, write the
	// index one run over the files writes.
	out := t.TempDir()
	idx := filepath.Join(out, "data.taridx")
	for k := range 2 {
		if code, _, stderr := run(t, append([]string{"index", "-q", "--task", fmt.Sprintf("%d/2", k), "-o", idx}, viaS3...)...); code != 0 {
			t.Fatalf("task %d: %d %s", k, code, stderr)
		}
	}
	if code, _, stderr := run(t, "merge", "-q", idx); code != 0 {
		t.Fatalf("merge: %d %s", code, stderr)
	}
	// A conversion over URLs runs as tasks too, each fetching its own
	// shards, and merges into what one run writes.
	tbl := filepath.Join(out, "x.tbl")
	for k := range 2 {
		if code, _, stderr := run(t, append(append([]string{"convert", "-q", "--task", fmt.Sprintf("%d/2", k)}, viaS3...), tbl)...); code != 0 {
			t.Fatalf("convert --task %d/2 over URLs: exit %d, %s", k, code, stderr)
		}
	}
	if code, _, stderr := run(t, "merge", "-q", tbl); code != 0 {
		t.Fatalf("merge of the conversion over URLs: %d %s", code, stderr)
	}
	one := filepath.Join(t.TempDir(), "one.tbl")
	if code, _, stderr := run(t, append(append([]string{"convert", "-q"}, local...), one)...); code != 0 {
		t.Fatal(stderr)
	}
	if a, b := readOrNil(one), readOrNil(tbl); len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the TBL merged from tasks over URLs differs from one run's over the files (%d and %d bytes)", len(b), len(a))
	}
	got, err := os.ReadFile(idx)
	if err != nil || !bytes.Equal(got, want.files["data.taridx"]) {
		t.Errorf("the merged index over URLs differs from one run's over the files (%v)", err)
	}
}

func writeList(t *testing.T, groups ...[]string) string {
	p := filepath.Join(t.TempDir(), "shards.txt")
	var b strings.Builder
	for _, g := range groups {
		for _, s := range g {
			b.WriteString(s + "\n")
		}
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameWids compares two wids indexes' shard lists: each shard's samples
// and size, and its URL's last element.
func sameWids(t *testing.T, got, want []byte) {
	t.Helper()
	type list struct {
		Shards []struct {
			URL      string `json:"url"`
			NSamples int    `json:"nsamples"`
			FileSize int64  `json:"filesize"`
		} `json:"shardlist"`
	}
	var g, w list
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if len(g.Shards) != len(w.Shards) || len(g.Shards) == 0 {
		t.Fatalf("wids: %d shards, want %d", len(g.Shards), len(w.Shards))
	}
	for i := range g.Shards {
		gs, ws := g.Shards[i], w.Shards[i]
		if path.Base(gs.URL) != path.Base(ws.URL) || !strings.Contains(gs.URL, "://") || gs.NSamples != ws.NSamples || gs.FileSize != ws.FileSize {
			t.Errorf("wids shard %d: %+v, want %+v", i, gs, ws)
		}
	}
}

// TestRemoteFaults: a server behind a proxy that fails a share of the
// requests (503, 429) and cuts a share of the bodies mid-way: every
// command still writes what it writes over the files on disk, each failed
// range retried alone. A server that ignores ranges fails the run at once
// with an error naming the URL.
func TestRemoteFaults(t *testing.T) {
	local, viaHTTP, viaS3 := remoteShards(t)
	upstream := viaHTTP[0][:strings.LastIndex(viaHTTP[0], "/")]
	outputs := func(t *testing.T, shards []string) (files map[string][]byte, cat string) {
		t.Helper()
		out := t.TempDir()
		idx := filepath.Join(out, "x.taridx")
		if code, _, stderr := run(t, append([]string{"index", "-q", "-o", idx}, shards...)...); code != 0 {
			t.Fatalf("index: %d %s", code, stderr)
		}
		code, cat, stderr := run(t, "cat", idx, "big/b1.bin")
		if code != 0 {
			t.Fatalf("cat: %d %s", code, stderr)
		}
		if code, _, stderr := run(t, append(append([]string{"convert", "-q"}, shards...), filepath.Join(out, "x.tbl"))...); code != 0 {
			t.Fatalf("convert: %d %s", code, stderr)
		}
		files = collect(t, out, nil)
		delete(files, "x.taridx"+fold.ManifestSuffix)
		return files, cat
	}
	wantFiles, wantCat := outputs(t, local)

	p, err := netproxy.Start(netproxy.Config{Upstream: upstream, Faults: netproxy.Faults{Seed: 7, Fail503: 0.15, Throttle429: 0.05, CutBody: 0.15}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var flaky []string
	for _, u := range viaHTTP {
		flaky = append(flaky, p.URL()+u[len(upstream):])
	}
	start := time.Now()
	files, cat := outputs(t, flaky)
	sameFiles(t, "through faults", files, wantFiles)
	if cat != wantCat {
		t.Errorf("cat through faults: %d bytes, want %d", len(cat), len(wantCat))
	}
	st := p.Stats()
	if st.Faults.Fail503 == 0 || st.Faults.CutBody == 0 {
		t.Errorf("no fault was injected: %+v", st)
	}
	t.Logf("%d requests, faults %+v, in %v", st.Requests, st.Faults, time.Since(start))

	// S3 through the same faults: the client's endpoint is the proxy,
	// which passes the host it was asked on, so signatures hold.
	s3up, err := netproxy.Start(netproxy.Config{Upstream: os.Getenv("AWS_ENDPOINT_URL"), Faults: netproxy.Faults{Seed: 11, Fail503: 0.15, CutBody: 0.15}})
	if err != nil {
		t.Fatal(err)
	}
	defer s3up.Close()
	t.Setenv("AWS_ENDPOINT_URL", s3up.URL())
	t.Setenv("AWS_ENDPOINT_URL_S3", s3up.URL())
	files, cat = outputs(t, viaS3)
	sameFiles(t, "s3 through faults", files, wantFiles)
	if cat != wantCat || s3up.Stats().Faults.Fail503 == 0 {
		t.Errorf("cat from s3 through faults: %d bytes, want %d; %+v", len(cat), len(wantCat), s3up.Stats())
	}

	// A server that keeps failing: the conversion fails naming the URL
	// and the offset, and leaves nothing in the output's directory.
	down, err := netproxy.Start(netproxy.Config{Upstream: upstream, Faults: netproxy.Faults{Fail503: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	outDir := t.TempDir()
	u0 := down.URL() + viaHTTP[0][len(upstream):]
	code, _, stderr := run(t, "convert", "-q", u0, filepath.Join(outDir, "x.barecat"))
	if left, _ := os.ReadDir(outDir); code == 0 || !strings.Contains(stderr, u0+": byte 0") || !strings.Contains(stderr, "kept failing") || len(left) != 0 {
		t.Errorf("a server that keeps failing: exit %d, %s; left %v", code, stderr, left)
	}

	noRange, err := netproxy.Start(netproxy.Config{Upstream: upstream, Faults: netproxy.Faults{IgnoreRange: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer noRange.Close()
	u := noRange.URL() + viaHTTP[3][len(upstream):]
	code, _, stderr = run(t, "index", "-q", "-o", filepath.Join(t.TempDir(), "x.taridx"), u)
	if code == 0 || !strings.Contains(stderr, u) || !strings.Contains(stderr, "does not honour range requests") {
		t.Errorf("a server without ranges: exit %d, %s", code, stderr)
	}
}

// readOrNil is the file's bytes, nil when it cannot be read.
func readOrNil(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
