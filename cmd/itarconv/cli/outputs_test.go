package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// TestOverwriteRule: every conversion refuses an existing output, naming
// it and leaving it as it was (exit 1), and replaces it with --force.
func TestOverwriteRule(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	work := t.TempDir()
	bc := filepath.Join(work, "x.barecat")
	tb := filepath.Join(work, "x.tbl")
	for _, c := range []struct {
		name  string
		first []string // makes the output
		again []string // the same output again (also run with --force)
		out   string   // a file of the output to compare
	}{
		{"tar to TBL", []string{"convert", "-q", "--fold", "train", src, tb}, []string{"convert", "-q", "--tbl-version", "1", "--fold", "train", src, tb}, tb},
		{"tar to Barecat", []string{"convert", "-q", "--fold", "train", src, bc}, []string{"convert", "-q", "--fold", "train", src, bc}, bc},
		{"Barecat to tar", []string{"convert", "-q", bc, filepath.Join(work, "fromb")}, []string{"convert", "-q", "--shard-size", "1K", bc, filepath.Join(work, "fromb")}, filepath.Join(work, "fromb", "train_0000.tar")},
		{"TBL to tar", []string{"convert", "-q", tb, filepath.Join(work, "fromt")}, []string{"convert", "-q", tb, filepath.Join(work, "fromt")}, filepath.Join(work, "fromt", "train.taridx")},
	} {
		if code, _, stderr := run(t, c.first...); code != 0 {
			t.Fatalf("%s: first run: exit %d: %s", c.name, code, stderr)
		}
		before, _ := os.ReadFile(c.out)
		code, _, stderr := run(t, c.again...)
		if code != ExitData || !strings.Contains(stderr, "exists; --force replaces it") {
			t.Errorf("%s: again: exit %d, %q", c.name, code, stderr)
		}
		if after, _ := os.ReadFile(c.out); !bytes.Equal(after, before) || len(before) == 0 {
			t.Errorf("%s: the refused run changed %s", c.name, c.out)
		}
		forced := append([]string{"convert", "--force"}, c.again[1:]...)
		if code, _, stderr := run(t, forced...); code != 0 {
			t.Errorf("%s: --force: exit %d: %s", c.name, code, stderr)
		}
	}
	// The forced runs wrote new content: TBL v1, and shards of 1 KiB with no
	// stale shard of the first run left.
	if b, _ := os.ReadFile(tb); len(b) < 4 || string(b[:4]) != "TBL\x01" {
		t.Errorf("x.tbl was not replaced by a v1 file")
	}
	if code, stdout, stderr := run(t, "verify", filepath.Join(work, "fromb")); code != 0 {
		t.Errorf("verify after --force: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "verify", bc); code != 0 {
		t.Errorf("verify x.barecat after --force: exit %d: %s%s", code, stdout, stderr)
	}
}

// TestSCDLOverwriteRule: SCDL outputs follow the same rule; --force puts
// the new archive in place of the old one.
func TestSCDLOverwriteRule(t *testing.T) {
	src := scdlCase(t, "basic_50x30_f32")
	dir := filepath.Join(t.TempDir(), "tars")
	if code, _, stderr := run(t, "convert", "-q", src, dir); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "convert", "-q", src, dir); code != ExitData || !strings.Contains(stderr, "exists; --force replaces it") {
		t.Errorf("export again: exit %d, %q", code, stderr)
	}
	if code, _, stderr := run(t, "convert", "-q", "--force", "--cells-per-shard", "10", src, dir); code != 0 {
		t.Errorf("export --force: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := run(t, "verify", dir); code != 0 {
		t.Errorf("verify: exit %d: %s%s", code, stdout, stderr)
	}
	back := filepath.Join(t.TempDir(), "back")
	os.Mkdir(back, 0o755)
	os.WriteFile(filepath.Join(back, "old"), []byte("old"), 0o644)
	if code, _, stderr := run(t, "convert", "-q", "--to", "scdl", dir, back); code != ExitData || !strings.Contains(stderr, "exists; --force replaces it") {
		t.Errorf("import over a directory: exit %d, %q", code, stderr)
	}
	// --force replaces an SCDL archive only: a directory of something
	// else is refused and keeps what it holds.
	if code, _, stderr := run(t, "convert", "-q", "--force", "--to", "scdl", dir, back); code != ExitData || !strings.Contains(stderr, "not an SCDL archive") {
		t.Errorf("import --force over a directory that is no archive: exit %d, %q", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(back, "old")); err != nil || string(b) != "old" {
		t.Errorf("the refused --force changed the directory: %q, %v", b, err)
	}
	back = filepath.Join(t.TempDir(), "back")
	if code, _, stderr := run(t, "convert", "-q", "--to", "scdl", dir, back); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "convert", "-q", "--force", "--to", "scdl", dir, back); code != 0 {
		t.Fatalf("import --force over an archive: exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(src, "header.sch"))
	if got, _ := os.ReadFile(filepath.Join(back, "header.sch")); !bytes.Equal(got, want) {
		t.Error("header.sch differs from the original")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(back), ".itarconv-tmp-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestFailedConversionCleansUp: arguments are checked before anything is
// created, and a failed conversion removes the directories it created.
func TestFailedConversionCleansUp(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	work := t.TempDir()
	bc := filepath.Join(work, "x.barecat")
	if code, _, stderr := run(t, "convert", "-q", "--fold", "train", src, bc); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, fold := range []string{"../x", "a/b", ".", "..", "a_b", " "} {
		out := filepath.Join(work, "new1")
		if code, _, stderr := run(t, "convert", "-q", "--fold", fold, bc, out); code != ExitUsage || !strings.Contains(stderr, "--fold") {
			t.Errorf("--fold %q: exit %d, %q", fold, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--fold %q: %s was created", fold, out)
		}
	}
	// A crc32c error halfway: the new directories go.
	shard := bc + "-shard-00000"
	b, _ := os.ReadFile(shard)
	b[len(b)/2] ^= 0xff
	os.WriteFile(shard, b, 0o644)
	out := filepath.Join(work, "new2")
	code, _, stderr := run(t, "convert", "-q", bc, out)
	if code != ExitData || !strings.Contains(stderr, "CRC-32C mismatch") {
		t.Errorf("corrupt Barecat: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "new2")); err == nil {
		t.Error("a failed conversion left its new directory behind")
	}
	// A directory that was there stays, with what it held.
	keep := filepath.Join(work, "keep")
	os.Mkdir(keep, 0o755)
	os.WriteFile(filepath.Join(keep, "mine.txt"), []byte("mine"), 0o644)
	if code, _, _ := run(t, "convert", "-q", bc, keep); code != ExitData {
		t.Errorf("corrupt Barecat into an existing directory: exit %d", code)
	}
	if entries, _ := os.ReadDir(keep); len(entries) != 1 {
		t.Errorf("the existing directory holds %d entries, want 1", len(entries))
	}
	// A file output into a directory that does not exist: a failed run
	// removes the directory it made.
	if code, _, _ := run(t, "convert", "-q", bc, filepath.Join(work, "nope", "y.tbl")); code != ExitData {
		t.Errorf("corrupt Barecat into a new directory: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(work, "nope")); err == nil {
		t.Error("the failed run left the directory it made")
	}
}

// TestCorruptInputsByClaim: damaged inputs are reported as the format they
// claim to be, with exit 1; usage errors exit 2.
func TestCorruptInputsByClaim(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	empty := write("empty.tbl", nil)
	badMagic := write("bad.tbl", append([]byte("XBL\x02"), make([]byte, 60)...))
	random := write("r.barecat", bytes.Repeat([]byte{0x5a, 0x17, 0xc3}, 700))
	garbage := write("g.taridx", bytes.Repeat([]byte("garbage!"), 20))
	scdlDir := scdlCase(t, "basic_50x30_f32")
	os.Remove(filepath.Join(scdlDir, "header.sch"))
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", empty}, "corrupt TBL: " + empty},
		{[]string{"convert", empty, out}, "corrupt TBL: " + empty},
		{[]string{"verify", badMagic}, "corrupt TBL: " + badMagic},
		{[]string{"inspect", badMagic}, "corrupt TBL: " + badMagic},
		{[]string{"inspect", random}, "corrupt Barecat: "},
		{[]string{"convert", random, out}, "corrupt Barecat: "},
		{[]string{"inspect", scdlDir}, "corrupt SCDL: " + scdlDir + ": header.sch missing"},
		{[]string{"convert", scdlDir, out}, "corrupt SCDL: " + scdlDir + ": header.sch missing"},
		{[]string{"inspect", garbage}, "corrupt TARIDX: "},
		{[]string{"ls", garbage}, "corrupt TARIDX: "},
	} {
		code, _, stderr := run(t, c.args...)
		if code != ExitData || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output was created")
	}
	if code, _, _ := run(t, "frobnicate"); code != ExitUsage {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
}

// TestEnvErrorClass: errors of the environment are told apart however
// deeply they are wrapped.
func TestEnvErrorClass(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("writing x: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), true},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", syscall.EDQUOT)), true},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}, true},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}, true},
		{os.ErrPermission, true},
		{os.ErrNotExist, false},
		{fmt.Errorf("crc32c mismatch"), false},
	} {
		if got := envError(c.err); got != c.want {
			t.Errorf("envError(%v) = %v", c.err, got)
		}
	}
}

// TestExitIO: a full disk and a read-only file system exit 3, naming the
// output; nothing is left behind. It needs to mount a small tmpfs.
func TestExitIO(t *testing.T) {
	mnt := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	src := copyCase(t, "ustar_basic")
	big := filepath.Join(t.TempDir(), "big.tar")
	// A shard larger than the file system: the conversion runs out of space.
	if err := exec.Command("tar", "-cf", big, "-C", src, ".").Run(); err != nil {
		t.Skip("tar not available")
	}
	pad := bytes.Repeat([]byte{'x'}, 200<<10)
	os.WriteFile(filepath.Join(src, "pad.bin"), pad, 0o644)
	exec.Command("tar", "-cf", big, "-C", src, "pad.bin").Run()
	code, _, stderr := run(t, "convert", "-q", big, filepath.Join(mnt, "x.tbl"))
	if code != ExitIO || !strings.Contains(stderr, "no space left") || !strings.Contains(stderr, "x.tbl") {
		t.Errorf("full disk: exit %d, %q", code, stderr)
	}
	if entries, _ := os.ReadDir(mnt); len(entries) != 0 {
		t.Errorf("left on the full disk: %v", entries)
	}
	if err := exec.Command("mount", "-o", "remount,ro", mnt).Run(); err != nil {
		t.Skipf("remount read-only: %v", err)
	}
	code, _, stderr = run(t, "convert", "-q", filepath.Join(src, "train_0000.tar"), filepath.Join(mnt, "y.tbl"))
	if code != ExitIO || !strings.Contains(stderr, "read-only file system") {
		t.Errorf("read-only: exit %d, %q", code, stderr)
	}
}

// TestProgressText: a bar counts what the user knows, and shows shards
// only where they are the user's files.
func TestProgressText(t *testing.T) {
	pr := dataset.Progress{ShardsDone: 3, Shards: 8, Rows: 1200}
	if got := describe("train", "members", true, pr); got != "train: shard 3/8, 1200 members" {
		t.Errorf("tar: %q", got)
	}
	if got := describe("tbl", "files", false, pr); got != "tbl: 1200 files" {
		t.Errorf("Barecat: %q", got)
	}
	var p *progress // not a terminal: no bar, and every call is a no-op
	p.of("samples").update("x", pr)
	p.done(nil)
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		5 << 20: "5.0 MiB", 1181116006: "1.1 GiB", 3 << 40: "3.0 TiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
