package jobrunners

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// repoRoot is the checkout's root, two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// itarconv builds ./cmd/itarconv once for the tests of the package and
// returns the binary's path.
func itarconv(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "jobrunners-bin-")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "itarconv")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/itarconv")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/itarconv: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// env is this process's environment less whatever would make itarconv or
// sbatch take the runs for tasks of a job (as when the tests themselves run
// in a Slurm job), plus extra.
func env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SLURM_") || strings.HasPrefix(name, "SBATCH_") ||
			name == "JOB_COMPLETION_INDEX" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}

// run runs a command with the given environment, for at most limit, and
// returns its standard output; it fails the test when the command fails.
func run(t *testing.T, limit time.Duration, environ []string, dir string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(limit, environ, dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

// runErr runs a command as run does and returns its error, its standard
// error within.
func runErr(limit time.Duration, environ []string, dir string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = environ
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("not done after %v", limit)
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String(), nil
}

// writeShards writes n tar shards train-00000.tar ... into dir, each of
// perShard members: samples of a .jpg of random bytes (some empty, some
// of whole 512-byte blocks), a .cls and a .json, of sizes that vary from
// shard to shard. It returns the shards' paths.
func writeShards(t *testing.T, dir string, n, perShard int) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	sample := 0
	for s := range n {
		rng := rand.New(rand.NewPCG(uint64(s), 7))
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for m := 0; m < perShard; sample++ {
			key := fmt.Sprintf("%08d", sample)
			jpg := make([]byte, rng.IntN(6000))
			switch rng.IntN(6) {
			case 0:
				jpg = jpg[:0]
			case 1:
				jpg = make([]byte, 512*(1+rng.IntN(4)))
			}
			for i := range jpg {
				jpg[i] = byte(rng.Uint32())
			}
			members := []struct {
				ext  string
				body []byte
			}{
				{"jpg", jpg},
				{"cls", fmt.Appendf(nil, "%d\n", rng.IntN(1000))},
				{"json", fmt.Appendf(nil, `{"key":%q,"w":%d,"h":%d}`, key, rng.IntN(4096), rng.IntN(4096))},
			}
			for _, mem := range members {
				if m == perShard {
					break
				}
				hdr := &tar.Header{
					Name:    key + "." + mem.ext,
					Mode:    0o644,
					Size:    int64(len(mem.body)),
					ModTime: time.Unix(1700000000+int64(sample), 0),
					Format:  tar.FormatUSTAR,
				}
				if err := tw.WriteHeader(hdr); err != nil {
					t.Fatal(err)
				}
				if _, err := tw.Write(mem.body); err != nil {
					t.Fatal(err)
				}
				m++
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("train-%05d.tar", s))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// sameFiles checks that every file a single run wrote into want is in got
// with the same bytes (got may hold more: the parts).
func sameFiles(t *testing.T, want, got string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(want, p)
		if err != nil {
			return err
		}
		w, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		g, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil {
			t.Errorf("the single run wrote %s, the partitioned run not: %v", rel, err)
			return nil
		}
		n++
		if !bytes.Equal(w, g) {
			i := 0
			for i < len(w) && i < len(g) && w[i] == g[i] {
				i++
			}
			t.Errorf("%s: merged output differs from the single run's: %d bytes, want %d; first difference at byte %d", rel, len(g), len(w), i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("the single run wrote nothing into %s", want)
	}
}

// lines splits a command's output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
