package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/itarconv/itarconv/internal/human"
)

// slowServer serves dir at about rate bytes a second per response, in
// small flushed writes: a remote store a run waits on.
func slowServer(t *testing.T, dir string, rate int) *httptest.Server {
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		files.ServeHTTP(&slowWriter{ResponseWriter: w, rate: rate}, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type slowWriter struct {
	http.ResponseWriter
	rate int
}

func (s *slowWriter) Write(p []byte) (int, error) {
	const chunk = 4 << 10
	n := 0
	for len(p) > 0 {
		k := min(len(p), chunk)
		w, err := s.ResponseWriter.Write(p[:k])
		n += w
		if err != nil {
			return n, err
		}
		s.ResponseWriter.(http.Flusher).Flush()
		time.Sleep(time.Duration(k) * time.Second / time.Duration(s.rate))
		p = p[k:]
	}
	return n, nil
}

// smallMemberShards writes n shards of members of 300 random bytes:
// headers and padding are most of a shard's bytes, as with small images'
// labels and captions. With gz, each shard is gzip-compressed too.
func smallMemberShards(t *testing.T, dir string, n, perShard int, gz bool) (names []string, sizes []int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	for s := range n {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i := range perShard {
			body := make([]byte, 300)
			for j := range body {
				body[j] = byte(rng.Uint32())
			}
			tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("k%d_%05d.bin", s, i), Size: int64(len(body)), Mode: 0o644})
			tw.Write(body)
		}
		tw.Close()
		data, name := buf.Bytes(), fmt.Sprintf("data-%06d.tar", s)
		if gz {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(data)
			zw.Close()
			data, name = z.Bytes(), name+".gz"
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		names, sizes = append(names, name), append(sizes, int64(len(data)))
	}
	return names, sizes
}

// ptyRun runs the command line in a process of its own whose standard
// error is a terminal (a pseudo-terminal 200 columns wide), and returns
// what it drew there.
func ptyRun(t *testing.T, args ...string) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 200})
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ITARCONV_TEST_MAIN=1")
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	_, err = io.Copy(&out, ptmx)
	if err != nil && !errors.Is(err, syscall.EIO) { // EIO: the terminal's other end is closed
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, out.String())
	}
	return out.String()
}

var barFrame = regexp.MustCompile(`^(\w+): shard (\d+)/(\d+), (\d+) members  +(\d+)% (.+?)/(.+?)(  .*/s  ETA \S+)?$`)

// checkBar reads a run's terminal output: the bar's frames, then its
// final line. Every frame's total is the shards' bytes; its percentage
// never goes backwards and never lags the shards already written (it
// counts bytes of input, headers and padding and compression included,
// not payload bytes); the last line says 100% of that total.
func checkBar(t *testing.T, out, label string, sizes []int64, members int) {
	t.Helper()
	var total int64
	prefix := []int64{0}
	for _, s := range sizes {
		total += s
		prefix = append(prefix, total)
	}
	lines := strings.FieldsFunc(strings.ReplaceAll(out, "\033[K", ""), func(r rune) bool { return r == '\r' || r == '\n' })
	if len(lines) < 2 {
		t.Fatalf("no bar drawn: %q", out)
	}
	want := regexp.MustCompile(fmt.Sprintf(`^%s: shard %d/%d, %d members  100%% %s in \d+s \(.+/s\)$`,
		label, len(sizes), len(sizes), members, regexp.QuoteMeta(human.Bytes(total))))
	last, frames, finals := -1, 0, 0
	for _, l := range lines {
		if want.MatchString(l) {
			finals++
			continue
		}
		m := barFrame.FindStringSubmatch(l)
		if m == nil {
			continue // the summary, after the bar
		}
		if finals > 0 {
			t.Errorf("a frame after the final line: %q", l)
		}
		frames++
		pct, _ := strconv.Atoi(m[5])
		done, _ := strconv.Atoi(m[2])
		if pct < last {
			t.Errorf("the bar went back from %d%% to %d%%: %q", last, pct, l)
		}
		last = pct
		if m[7] != human.Bytes(total) {
			t.Errorf("total %s, want the shards' %s: %q", m[7], human.Bytes(total), l)
		}
		// 100% is for the final line: a frame drawn after the last shard
		// and before the end (the index being finished) says 99%.
		if floor := min(int(prefix[done]*100/total), 99); pct < floor {
			t.Errorf("%d shards written but %d%% shown, want at least %d%%: %q", done, pct, floor, l)
		}
	}
	if frames < 3 || last > 99 {
		t.Errorf("%d frames before the end, the last at %d%%: want the bar to move as the run goes\n%q", frames, last, out)
	}
	if finals != 1 {
		t.Errorf("%d final lines %s in %q", finals, want, out)
	}
}

// TestProgressOnTerminal: the bar, drawn on a real terminal, counts the
// bytes of the input as its total does, for plain shards read from a
// slow server (where headers and padding are three quarters of the bytes:
// before, the bar showed the rows' payload bytes against the shards'
// sizes, and sat at a quarter of the way when the run was done) and for
// gzip-compressed ones (whose payload bytes exceed their compressed
// total). Before, no bar was drawn at all: standard error reached it
// through the writer that redacts URLs, which is no terminal.
func TestProgressOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 2 s")
	}
	const shards, perShard = 4, 160 // 160 KiB a shard, 1,024 bytes a member
	dir := t.TempDir()
	plain, plainSizes := smallMemberShards(t, dir, shards, perShard, false)
	packed, packedSizes := smallMemberShards(t, dir, shards, perShard, true)
	// About 0.6 s for the 640 KiB of plain shards, and 0.8 s for the
	// 200 KiB of compressed ones, two fetched at a time.
	srv := slowServer(t, dir, 1<<20)
	slower := slowServer(t, dir, 128<<10)
	urls := func(srv *httptest.Server, names []string) []string {
		var u []string
		for _, n := range names {
			u = append(u, srv.URL+"/"+n)
		}
		return u
	}
	out := t.TempDir()
	args := append([]string{"index", "--workers", "1", "--connections", "1", "-o", filepath.Join(out, "data.taridx")}, urls(srv, plain)...)
	checkBar(t, ptyRun(t, args...), "data", plainSizes, shards*perShard)

	// Local shards: the total is their sizes, the stats the command made
	// (none is opened before the run: index refuses compressed shards by
	// their scan); as one run and as a task; and a conversion's. Too fast
	// for frames: the final line.
	local := func(names []string) []string {
		var p []string
		for _, n := range names {
			p = append(p, filepath.Join(dir, n))
		}
		return p
	}
	var total int64
	for _, n := range plainSizes {
		total += n
	}
	for _, c := range []struct {
		label string
		args  []string
	}{
		{"data", []string{"index", "--workers", "1", "-o", filepath.Join(t.TempDir(), "data.taridx")}},
		{"data", []string{"index", "--workers", "1", "--task", "0/1", "-o", filepath.Join(t.TempDir(), "data.taridx")}},
		// The shards the command found, several told plain at once.
		{"tbl", []string{"convert", "--workers", "1"}},
	} {
		args = append(c.args, local(plain)...)
		if c.label == "tbl" {
			args = append(args, filepath.Join(t.TempDir(), "out.tbl"))
		}
		final := fmt.Sprintf("%s: shard %d/%d, %d members  100%% %s in ", c.label, shards, shards, shards*perShard, human.Bytes(total))
		if out := ptyRun(t, args...); !strings.Contains(out, final) {
			t.Errorf("%q: no final line %q: %q", args, final, out)
		}
	}

	args = append([]string{"convert", "--workers", "1", "--connections", "1", "--fold", "data"}, urls(slower, packed)...)
	checkBar(t, ptyRun(t, append(args, filepath.Join(out, "unpacked"))...), "data", packedSizes, shards*perShard)
}

// TestProgressRate: the rate is an average that a burst does not swing,
// and neither it nor the time left is shown before etaAfter.
func TestProgressRate(t *testing.T) {
	start := time.Unix(1000, 0)
	p := &progress{label: "x", unit: "members", total: 100 << 20, start: start, sampled: start}
	// 1 MiB a second, arriving as one 4 MiB burst every 4 s.
	for tick := 1; tick <= 200; tick++ {
		now := start.Add(time.Duration(tick) * drawEvery)
		if tick%40 == 0 {
			p.shown += 4 << 20
		}
		p.sample(now)
		line := p.line(now)
		if now.Sub(start) < etaAfter && strings.Contains(line, "ETA") {
			t.Fatalf("at %v: %q, before there is enough to go on", now.Sub(start), line)
		}
		if tick > 80 && (p.rate < 0.5*(1<<20) || p.rate > 2*(1<<20)) {
			t.Fatalf("at %v: rate %.0f B/s, want about 1 MiB/s", now.Sub(start), p.rate)
		}
	}
	if line := p.line(start.Add(20 * time.Second)); !strings.Contains(line, "20% 20.0 MiB/100.0 MiB") || !strings.Contains(line, "ETA 1m") {
		t.Errorf("%q", line)
	}
}
