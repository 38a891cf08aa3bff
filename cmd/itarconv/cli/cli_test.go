package cli

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/testing/testutil"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

// copyCase copies a conformance case's shards (not its index) to a new
// directory: tests never write into shared/.
func copyCase(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(testutil.Conformance(t, "taridx"), name)
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tar") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// writeShards writes nShards tar shards of samples (key.jpg + key.cls) with
// Go's archive/tar and returns the directory and every payload by name.
func writeShards(t *testing.T, nShards, perShard int) (string, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	payloads := map[string][]byte{}
	k := 0
	for s := 0; s < nShards; s++ {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i := 0; i < perShard; i++ {
			key := fmt.Sprintf("s%06d", k)
			k++
			for _, ext := range []string{"jpg", "cls"} {
				body := bytes.Repeat([]byte(key+ext), 1+k%37)
				name := key + "." + ext
				payloads[name] = body
				if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
					t.Fatal(err)
				}
				tw.Write(body)
			}
		}
		tw.Close()
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("train_%04d.tar", s)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, payloads
}

func TestIndexMatchesGLZN(t *testing.T) {
	dir := copyCase(t, "ustar_basic")
	code, _, stderr := run(t, "index", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, fold := range []string{"train", "val"} {
		got, _ := os.ReadFile(filepath.Join(dir, fold+".taridx"))
		want, _ := os.ReadFile(filepath.Join(testutil.Conformance(t, "taridx"), "ustar_basic", fold+".taridx"))
		if !bytes.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s.taridx differs from glzn's", fold)
		}
	}
	if !strings.Contains(stderr, "train: 12 members (6 samples, 2 extensions) from 2 shards") {
		t.Errorf("summary line missing: %q", stderr)
	}
}

func TestIndexJSON(t *testing.T) {
	dir := copyCase(t, "multidot_names")
	code, stdout, stderr := runResult(t, "index", "--json", "-q", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Folds []indexResult `json:"folds"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(res.Folds) != 1 {
		t.Fatalf("%d folds", len(res.Folds))
	}
	f := res.Folds[0]
	if f.Rows != 16 || f.Members != 19 || f.NoExtension != 2 || f.SpaceInExt != 1 {
		t.Errorf("got %+v", f)
	}
	if !strings.Contains(stderr, `warning: train: 3 members skipped (2 without an extension, 1 with white space in it`) {
		t.Errorf("warning missing: %q", stderr)
	}
}

func TestIndexWorkersDeterministic(t *testing.T) {
	dir, _ := writeShards(t, 7, 300)
	var outs [][]byte
	// The last run spills its rows beside the output past --memory.
	for _, flags := range [][]string{{"--workers", "1"}, {"--workers", "2"}, {"--workers", "5", "--memory", "16KiB"}} {
		out := filepath.Join(t.TempDir(), "x.taridx")
		shards, _ := filepath.Glob(filepath.Join(dir, "*.tar"))
		args := append(append([]string{"index", "-q"}, flags...), "-o", out)
		if code, _, stderr := run(t, append(args, shards...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", flags, code, stderr)
		}
		b, _ := os.ReadFile(out)
		outs = append(outs, b)
	}
	if len(outs[0]) != 64+len("jpg\ncls")+7*600*32 {
		t.Fatalf("index of %d bytes", len(outs[0]))
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Errorf("output %d differs from workers=1", i)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir, _ := writeShards(t, 1, 2)
	shard := filepath.Join(dir, "train_0000.tar")
	for _, args := range [][]string{
		{"index"},
		{"index", "--bogus", dir},
		{"index", "--compat", "webdataset", dir},
		{"index", "--stem", "dirname", dir},
		{"index", "--compat", "glzn", "--stem", "path", dir},
		{"index", "-o", "x.taridx", "--out-dir", dir, shard}, // one or the other
		{"index", "--fold", "train", shard},                  // --fold is for a directory
		{"index", "-o", "x.taridx", dir},                     // -o is for files
		{"index", "--workers", "0", dir},
		{"index", "--memory", "lots", dir},
		{"index", "--read-strategy", "mapped", dir},
		{"cat", dir},
		{"inspect"},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, ExitUsage, stderr)
		}
		if !strings.HasPrefix(stderr, "itarconv: ") {
			t.Errorf("%q: stderr %q", args, stderr)
		}
	}
}

// TestFailureLeavesNothing: a data error exits 1, names the shard and the
// offset, keeps an existing index as it was and leaves no temporary file.
func TestFailureLeavesNothing(t *testing.T) {
	dir, _ := writeShards(t, 2, 20)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	idx := filepath.Join(dir, "train.taridx")
	before, _ := os.ReadFile(idx)

	// Corrupt the second shard: a checksum byte of its third header.
	shard := filepath.Join(dir, "train_0001.tar")
	b, _ := os.ReadFile(shard)
	off := 0
	for i := 0; i < 2; i++ { // hop two members
		var size int64
		fmt.Sscanf(strings.Trim(string(b[off+124:off+136]), " \x00"), "%o", &size)
		off += 512 + int((size+511)/512*512)
	}
	b[off+150] ^= 0x01
	os.WriteFile(shard, b, 0o644)

	code, _, stderr := run(t, "index", "-q", dir)
	if code != ExitData {
		t.Fatalf("exit %d, want %d: %s", code, ExitData, stderr)
	}
	if !strings.Contains(stderr, shard) || !strings.Contains(stderr, fmt.Sprintf("offset %d", off)) || !strings.Contains(stderr, "bad header checksum") {
		t.Errorf("error does not name shard, offset and problem: %q", stderr)
	}
	after, _ := os.ReadFile(idx)
	if !bytes.Equal(before, after) {
		t.Error("the existing index changed")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}

	// verify reports the same problem against the old index, and exits 1.
	code, stdout, _ := run(t, "verify", dir)
	if code != ExitData || !strings.Contains(stdout, "train_0001.tar (fid 1)") {
		t.Errorf("verify: exit %d: %s", code, stdout)
	}
}

// TestOtherShardNames: glzn refuses my_train_0000.tar (two "_"); the
// name's trailing number makes it fold my_train, whose index names its
// shard in a manifest.
func TestOtherShardNames(t *testing.T) {
	dir := copyCase(t, "bad_naming")
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %q", code, stderr)
	}
	idx := filepath.Join(dir, "my_train.taridx")
	m, err := fold.ReadManifest(idx)
	if err != nil || len(m.Shards) != 1 || m.Shards[0].Path != "my_train_0000.tar" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	code, stdout, stderr := run(t, "ls", idx)
	if code != 0 || strings.Count(stdout, "\n") != 1 || !strings.Contains(stdout, "my_train_0000.tar") {
		t.Errorf("ls: exit %d: %q %q", code, stdout, stderr)
	}
}

func TestCatLsVerify(t *testing.T) {
	dir, payloads := writeShards(t, 3, 10)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"s000000.jpg", "s000017.cls", "s000029.jpg"} {
		code, stdout, stderr := run(t, "cat", dir, name)
		if code != 0 || stdout != string(payloads[name]) {
			t.Errorf("cat %s: exit %d, %d bytes, want %d (%s)", name, code, len(stdout), len(payloads[name]), stderr)
		}
	}
	if code, _, stderr := run(t, "cat", dir, "s999999.jpg"); code != ExitData || !strings.Contains(stderr, "no such member") {
		t.Errorf("cat missing: exit %d: %s", code, stderr)
	}

	code, stdout, _ := run(t, "ls", dir)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 60 || lines[3] != "train\ttrain_0000.tar\t"+fmt.Sprint(lsOffset(payloads, 3))+"\t"+fmt.Sprint(len(payloads["s000001.cls"]))+"\ts000001.cls" {
		t.Errorf("ls: exit %d, %d lines, line 3 %q", code, len(lines), lines[3])
	}

	code, stdout, _ = runResult(t, "verify", "--data", "--json", dir)
	var rep struct {
		OK    bool `json:"ok"`
		Folds []struct {
			Rows      int   `json:"rows"`
			DataBytes int64 `json:"data_bytes_read"`
		} `json:"folds"`
	}
	json.Unmarshal([]byte(stdout), &rep)
	var total int64
	for _, p := range payloads {
		total += int64(len(p))
	}
	if code != 0 || !rep.OK || rep.Folds[0].Rows != 60 || rep.Folds[0].DataBytes != total {
		t.Errorf("verify: exit %d: %s", code, stdout)
	}

	// Replace a shard with one whose members differ: verify names it.
	other, _ := writeShards(t, 1, 4)
	b, _ := os.ReadFile(filepath.Join(other, "train_0000.tar"))
	os.WriteFile(filepath.Join(dir, "train_0002.tar"), b, 0o644)
	code, stdout, _ = run(t, "verify", dir)
	if code != ExitData || !strings.Contains(stdout, "STALE") || !strings.Contains(stdout, "train_0002.tar (fid 2) row 40") {
		t.Errorf("verify stale: exit %d: %s", code, stdout)
	}
}

// lsOffset computes the header offset of the i-th member of the first shard
// written by writeShards.
func lsOffset(payloads map[string][]byte, i int) int {
	off := 0
	for k := 0; k < i; k++ {
		name := fmt.Sprintf("s%06d.%s", k/2, []string{"jpg", "cls"}[k%2])
		off += 512 + (len(payloads[name])+511)/512*512
	}
	return off
}

func TestInspectJSON(t *testing.T) {
	dir := copyCase(t, "duplicates")
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, _ := runResult(t, "inspect", "--json", filepath.Join(dir, "train.taridx"))
	var info taridx.Info
	if err := json.Unmarshal([]byte(stdout), &info); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, stdout)
	}
	if info.Header.NRows != 8 || info.Header.NStems != 3 || info.Contiguous || info.Header.Contiguous || info.NDuplicates != 3 ||
		len(info.Extensions) != 2 || info.Extensions[0].Rows != 6 || info.Runs != 5 {
		t.Errorf("got %+v", info)
	}
}

func TestConvertBarecat(t *testing.T) {
	dir, payloads := writeShards(t, 3, 10)
	out := t.TempDir()
	bc := filepath.Join(out, "d.barecat")
	if code, _, stderr := run(t, "convert", "-q", dir, bc); code != 0 {
		t.Fatalf("to barecat: exit %d: %s", code, stderr)
	}
	code, stdout, _ := runResult(t, "inspect", "--json", bc)
	var info barecat.Info
	if err := json.Unmarshal([]byte(stdout), &info); err != nil || code != 0 || info.Files != 60 || info.FilesWithCRC != 60 || info.Layout != "0.3" {
		t.Fatalf("inspect: exit %d, %v: %s", code, err, stdout)
	}
	if code, stdout, _ := run(t, "verify", bc); code != 0 || !strings.Contains(stdout, "OK: 60 files (60 crc32c checked") {
		t.Errorf("verify: exit %d: %s", code, stdout)
	}
	back := filepath.Join(out, "back")
	if code, _, stderr := run(t, "convert", "-q", "--order", "address", "--fold", "val", bc, back); code != 0 {
		t.Fatalf("to tar: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"s000004.jpg", "s000029.cls"} {
		if code, stdout, stderr := run(t, "cat", back, name); code != 0 || stdout != string(payloads[name]) {
			t.Errorf("cat %s after the round trip: exit %d (%s)", name, code, stderr)
		}
	}

	wrapped := filepath.Join(out, "w.barecat")
	if code, _, stderr := run(t, "convert", "-q", "--wrap", dir, wrapped); code != 0 {
		t.Fatalf("wrap: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "convert", "-q", "--reuse-tars", wrapped, dir); code != 0 {
		t.Fatalf("reuse-tars: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := run(t, "verify", dir); code != 0 || !strings.Contains(stdout, "OK: 60 members in 3 shards") {
		t.Errorf("verify after --reuse-tars: exit %d: %s", code, stdout)
	}

	// A corrupted shard byte: verify names the file, exit 1.
	shard := bc + "-shard-00000"
	b, _ := os.ReadFile(shard)
	b[100] ^= 0xff
	os.WriteFile(shard, b, 0o644)
	if code, stdout, _ := run(t, "verify", bc); code != ExitData || !strings.Contains(stdout, "CRC-32C mismatch") {
		t.Errorf("verify corrupted: exit %d: %s", code, stdout)
	}

	for _, args := range [][]string{
		{"convert", "--crc", dir, filepath.Join(out, "x.barecat")},
		{"convert", "--on-duplicate", "middle", dir, filepath.Join(out, "x.barecat")},
		{"convert", dir, filepath.Join(out, "x.zip")},
		{"convert", "--shard-size", "lots", dir, filepath.Join(out, "x.barecat")},
	} {
		if code, _, stderr := run(t, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, ExitUsage, stderr)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "512MiB": 512 << 20, "1G": 1 << 30, "4096": 4096, "1.5KiB": 1536} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "0", "MiB", "1XB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): want an error", in)
		}
	}
}

func TestConvertTBL(t *testing.T) {
	dir, payloads := writeShards(t, 2, 10)
	out := t.TempDir()
	x := filepath.Join(out, "d.tbl")
	if code, _, stderr := run(t, "convert", "-q", "--lz4", dir, x); code != 0 {
		t.Fatalf("to tbl: exit %d: %s", code, stderr)
	}
	code, stdout, _ := runResult(t, "inspect", "--json", x)
	var info tbl.Info
	if err := json.Unmarshal([]byte(stdout), &info); err != nil || code != 0 || info.Samples != 40 || info.Version != 2 || info.Formats["jpeg"] != 20 || info.WithMetadata != 40 {
		t.Fatalf("inspect: exit %d, %v: %s", code, err, stdout)
	}
	if code, stdout, _ := run(t, "verify", x); code != 0 || !strings.Contains(stdout, "OK: 40 samples") {
		t.Errorf("verify: exit %d: %s", code, stdout)
	}
	back := filepath.Join(out, "back")
	if code, _, stderr := run(t, "convert", "-q", x, back); code != 0 {
		t.Fatalf("to tar: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := run(t, "cat", back, "s000013.cls"); code != 0 || stdout != string(payloads["s000013.cls"]) {
		t.Errorf("cat after the round trip: exit %d (%s)", code, stderr)
	}
	// v1 keeps no names: the command says so.
	if code, _, stderr := run(t, "convert", "--tbl-version", "1", dir, filepath.Join(out, "v1.tbl")); code != 0 || !strings.Contains(stderr, "names are not stored") {
		t.Errorf("v1: exit %d: %s", code, stderr)
	}
	// A flipped payload byte: verify names the sample.
	b, _ := os.ReadFile(x)
	b[64+24*40+10] ^= 0xff // in the first sample's bytes
	os.WriteFile(x, b, 0o644)
	if code, stdout, _ := run(t, "verify", x); code != ExitData || !strings.Contains(stdout, "sample 0") {
		t.Errorf("verify corrupted: exit %d: %s", code, stdout)
	}
	for _, args := range [][]string{
		{"convert", "--tbl-version", "3", dir, filepath.Join(out, "y.tbl")},
		{"convert", "--tbl-version", "1", "--lz4", dir, filepath.Join(out, "y.tbl")},
		{"convert", "--compat", "glzn", dir, filepath.Join(out, "y.tbl")},
	} {
		if code, _, stderr := run(t, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, ExitUsage, stderr)
		}
	}
}

// TestCompatGLZNNames: --compat glzn refuses the shard names glzn refuses
// (my_train_0000.tar: "Invalid delimiter"), in a directory and given by
// name, writing nothing; the default mode indexes them with a manifest.
func TestCompatGLZNNames(t *testing.T) {
	dir := copyCase(t, "bad_naming")
	shard := filepath.Join(dir, "my_train_0000.tar")
	for _, args := range [][]string{
		{"index", "-q", "--compat", "glzn", dir},
		{"index", "-q", "--compat", "glzn", "-o", filepath.Join(dir, "x.taridx"), shard},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitData || !strings.Contains(stderr, "my_train_0000.tar") || !strings.Contains(stderr, "Invalid delimiter") {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
		if idx, _ := filepath.Glob(filepath.Join(dir, "*.taridx*")); len(idx) != 0 {
			t.Errorf("%q wrote %v", args, idx)
		}
	}
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Errorf("default mode: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "my_train.taridx.shards.json")); err != nil {
		t.Errorf("default mode: no manifest: %v", err)
	}
}

// TestVerifyCorruptRow: verify reads an index's rows as it goes; a row
// whose extension id points past the table is the same error, and exit
// status, as when the whole index is read first.
func TestVerifyCorruptRow(t *testing.T) {
	dir, _ := writeShards(t, 2, 10)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	idx := filepath.Join(dir, "train.taridx")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	x, err := taridx.Parse(idx, b)
	if err != nil {
		t.Fatal(err)
	}
	at := int(x.Header.OffArr) + 7*taridx.RecordSize + 18
	b[at] = 9 // row 7's extension id
	if err := os.WriteFile(idx, b, 0o644); err != nil {
		t.Fatal(err)
	}
	lsCode, _, lsErr := run(t, "ls", idx)
	code, _, stderr := run(t, "verify", idx)
	if code != lsCode || code == 0 || !strings.Contains(stderr, fmt.Sprintf("offset %d: corrupt TARIDX file: row 7: extid 9", at)) || stderr != lsErr {
		t.Errorf("verify: exit %d, %q; ls: exit %d, %q", code, stderr, lsCode, lsErr)
	}
}

// TestVersionAndCompletion: `version` and `--version` print one line,
// the same, naming the Go release; completion scripts come for the shells.
func TestVersionAndCompletion(t *testing.T) {
	code, out, stderr := run(t, "version")
	code2, out2, _ := run(t, "--version")
	if code != 0 || code2 != 0 || out != out2 || !strings.HasPrefix(out, "itarconv ") ||
		!strings.HasSuffix(out, " "+runtime.Version()+"\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("version: exit %d, %q, %q; --version: exit %d, %q", code, out, stderr, code2, out2)
	}
	for shell, marker := range map[string]string{"bash": "# bash completion", "zsh": "#compdef itarconv", "fish": "# fish completion for itarconv"} {
		code, out, stderr := run(t, "completion", shell)
		if code != 0 || !strings.HasPrefix(out, marker) {
			t.Errorf("completion %s: exit %d, %.60q, %q", shell, code, out, stderr)
		}
	}
}
