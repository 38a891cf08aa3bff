package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/internal/safefile"
)

// TestSpoolHugeClaim: a server whose Content-Range claims 2^62 bytes (which
// package remote refuses as no file's size) or 2^49 (512 TiB: more than the
// spool's disk holds) is an error naming its URL, with or without Prefetch:
// no panic, no allocation sized from the claim, nothing left behind.
func TestSpoolHugeClaim(t *testing.T) {
	for _, claim := range []int64{1 << 62, 1 << 49} {
		t.Run(fmt.Sprint(claim), func(t *testing.T) { spoolHugeClaim(t, claim) })
	}
}

func spoolHugeClaim(t *testing.T, claim int64) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a, b int64
		if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b); err != nil || b-a > 1<<16 {
			// A part of the copy: the lie goes no further.
			http.Error(w, "gone", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, claim))
		w.Header().Set("Content-Length", fmt.Sprint(b-a+1))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(make([]byte, b-a+1))
	}))
	defer srv.Close()
	for _, prefetch := range []bool{false, true} {
		t.Run(fmt.Sprintf("prefetch=%v", prefetch), func(t *testing.T) {
			url := srv.URL + "/huge.tar"
			out := t.TempDir()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s := New(out, nil)
			if prefetch {
				s.Prefetch(context.Background(), []string{url})
			}
			_, err := s.Plain(context.Background(), url)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), url) {
				t.Fatalf("Plain: %v, want an error naming %s", err, url)
			}
			if _, ok := freeSpace(out); ok && claim < 1<<50 && !errors.Is(err, ErrTooLarge) {
				t.Errorf("Plain: %v, want ErrTooLarge", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d bytes for one claim", grew)
			}
			s.Close()
			if left, _ := os.ReadDir(out); len(left) != 0 {
				t.Errorf("left after Close: %v", left)
			}
		})
	}
}

// TestSpoolCloseCanceled: a copy canceled mid-way, and one asked for
// after Close, leave nothing in the spool's directory.
func TestSpoolCloseCanceled(t *testing.T) {
	out := t.TempDir()
	pr, pw := io.Pipe()
	defer pw.Close()
	s := New(out, pr)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		pw.Write(testutil.CompressWith(t, "gzip", testutil.PlainData(1<<20))[:1000]) // then the stream stalls
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	if _, err := s.Plain(ctx, Stdin); !errors.Is(err, context.Canceled) {
		t.Errorf("Plain of a stalled stream, canceled: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left after a canceled copy: %v", left)
	}
	gz := filepath.Join(t.TempDir(), "a.tar.gz")
	os.WriteFile(gz, testutil.CompressWith(t, "gzip", testutil.PlainData(1<<16)), 0o644)
	s.Close()
	if _, err := s.Plain(context.Background(), gz); !errors.Is(err, ErrClosed) {
		t.Errorf("Plain after Close: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left by a copy asked for after Close: %v", left)
	}
}

// TestSpoolSweepsDeadCopies: a new spool removes the copies that a dead
// process of this host left in its directory (a run killed by SIGPIPE or
// SIGKILL cannot), and keeps those of live processes and of other hosts.
func TestSpoolSweepsDeadCopies(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no process to outlive:", err)
	}
	// A copy's name as a process of pid would make it on this host.
	copyOf := func(pid int) string {
		n := strings.Replace(safefile.TempName("stdin.plain.tar"), "-"+strconv.Itoa(os.Getpid())+".", "-"+strconv.Itoa(pid)+".", 1)
		return strings.Replace(n, "*", "123", 1)
	}
	deadName := copyOf(dead.Process.Pid)
	liveName := copyOf(os.Getppid())
	host := strings.SplitN(strings.TrimPrefix(deadName, safefile.TempPrefix), "-", 2)[0] // pid.hosttag
	otherName := strings.Replace(deadName, host, strconv.Itoa(dead.Process.Pid)+".00000000", 1)
	if otherName == deadName {
		otherName = strings.Replace(deadName, host, strconv.Itoa(dead.Process.Pid)+".00000001", 1)
	}
	dir := t.TempDir()
	for _, n := range []string{deadName, liveName, otherName, "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	s := New(dir, nil)
	defer s.Close()
	if _, err := os.Stat(filepath.Join(dir, deadName)); !os.IsNotExist(err) {
		t.Errorf("a dead process's copy %s is still there: %v", deadName, err)
	}
	for _, n := range []string{liveName, otherName, "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	// Copies are named so: the spool's own is swept by the next run once
	// this process is gone.
	gz := filepath.Join(t.TempDir(), "a.tar.gz")
	os.WriteFile(gz, testutil.CompressWith(t, "gzip", testutil.PlainData(1<<16)), 0o644)
	p, err := s.Plain(context.Background(), gz)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(safefile.TempName("a.tar.gz.plain.tar"), "*"); !strings.HasPrefix(filepath.Base(p), want) {
		t.Errorf("copy named %s, want %s*", filepath.Base(p), want)
	}
}

// TestSpoolWaitCanceled: a caller waiting for a copy another caller is
// making (of a stalled stream) returns when its own context ends, not
// when the other's copy does; Close then still waits for that copy and
// removes it.
func TestSpoolWaitCanceled(t *testing.T) {
	out := t.TempDir()
	pr, pw := io.Pipe()
	defer pw.Close()
	s := New(out, pr)
	first, stopFirst := context.WithCancel(context.Background())
	defer stopFirst()
	made := make(chan error, 1)
	go func() {
		_, err := s.Plain(first, Stdin)
		made <- err
	}()
	pw.Write(testutil.CompressWith(t, "gzip", testutil.PlainData(1<<20))[:1000]) // the first caller is copying; then the stream stalls
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		_, err := s.Plain(ctx, Stdin)
		waited <- err
	}()
	select {
	case err := <-waited:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the waiting caller: %v, want its deadline", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting caller still waits after its context ended")
	}
	stopFirst()
	if err := <-made; !errors.Is(err, context.Canceled) {
		t.Errorf("the copying caller: %v", err)
	}
	s.Close()
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
}
