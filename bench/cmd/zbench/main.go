package main

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/itarconv/itarconv/bench"
	"github.com/itarconv/itarconv/formats/compressed"
)

const targetRatio = 1.0

type codec struct {
	name, tool, suffix string
}

var codecs = []codec{{"gzip", "gzip", ".tar.gz"}, {"zstd", "zstd", ".tar.zst"}}

// targets are the conversions timed: the output's name in the work
// directory, and how to check it.
var targets = []struct{ name, out string }{
	{"tbl", "x.tbl"}, {"barecat", "x.barecat"}, {"tar fold", "fold"},
}

func main() {
	dir := flag.String("dir", "", "keep the dataset (plain and compressed) here and reuse it on later runs")
	reps := flag.Int("reps", 5, "timed runs per tool (the median is reported)")
	quick := flag.Bool("quick", false, "smoke run: a tiny dataset, one rep")
	flag.Parse()
	if *quick {
		*reps = 1
	}
	if err := run(*dir, *reps, *quick); err != nil {
		fmt.Fprintf(os.Stderr, "zbench: %v\n", err)
		os.Exit(1)
	}
}

func run(keep string, reps int, quick bool) error {
	tmp, err := os.MkdirTemp("", "zbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root := keep
	if root == "" {
		root = tmp
	}
	bin := filepath.Join(tmp, "itarconv")
	if err := bench.BuildItarconv(bin); err != nil {
		return err
	}
	members, nShards := 40_000, 8
	if quick {
		members = 2_000
	}
	plainDir := filepath.Join(root, fmt.Sprintf("zbench-%d", members))
	shards, err := generate(plainDir, members, nShards)
	if err != nil {
		return err
	}
	plainBytes := total(shards)
	zdirs := map[string]string{}
	var warm []string
	for _, c := range codecs {
		zdir := plainDir + "-" + c.name
		zs, err := compressAll(c, shards, zdir)
		if err != nil {
			return err
		}
		zdirs[c.name] = zdir
		warm = append(warm, zs...)
		fmt.Printf("%s: %d shards, %.0f MiB -> %.0f MiB\n", c.name, len(zs), float64(plainBytes)/(1<<20), float64(total(zs))/(1<<20))
	}
	if err := bench.Warm(append(warm, shards...)); err != nil {
		return err
	}
	work, err := os.MkdirTemp(root, "zbench-work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fmt.Printf("dataset: %d members in %d shards (half random .jpg bytes, half .json text of random words), %.0f MiB plain; %d reps, medians; page cache warm\n\n",
		members, nShards, float64(plainBytes)/(1<<20), reps)

	// Decompression on one core.
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "decompression, one core\ttool s\titarconv s\ttool MB/s\titarconv MB/s\titarconv/tool\t")
	for _, c := range codecs {
		zs, _ := filepath.Glob(filepath.Join(zdirs[c.name], "*"+c.suffix))
		var tool, ours []float64
		for range reps {
			t, err := timeShell(fmt.Sprintf("%s -dc %s > /dev/null", c.tool, strings.Join(zs, " ")))
			if err != nil {
				return err
			}
			tool = append(tool, t)
			start := time.Now()
			var n int64
			for _, z := range zs {
				_, k, err := compressed.DecompressFile(context.Background(), z, io.Discard)
				if err != nil {
					return err
				}
				n += k
			}
			if n != plainBytes {
				return fmt.Errorf("%s: decompressed %d bytes, want %d", c.name, n, plainBytes)
			}
			ours = append(ours, time.Since(start).Seconds())
		}
		mt, mo := bench.Median(tool), bench.Median(ours)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.0f\t%.0f\t%.2fx\t\n", c.name, mt, mo, float64(plainBytes)/1e6/mt, float64(plainBytes)/1e6/mo, mo/mt)
	}
	tw.Flush()
	fmt.Println()

	// Conversions against the two-step route.
	tw = tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conversion\ttwo-step s\titarconv s\titarconv/two-step\ttarget\t")
	for _, c := range codecs {
		for _, tg := range targets {
			out := filepath.Join(work, tg.out)
			staged := filepath.Join(work, "plain")
			decompress := fmt.Sprintf("mkdir %s && ls %s/*%s | xargs -P 2 -I{} sh -c '%s -dc {} > %s/$(basename {} %s).tar'",
				staged, zdirs[c.name], c.suffix, c.tool, staged, c.suffix)
			// Into TBL or Barecat, the plain shards are converted; into a
			// fold, they are one already, and are indexed.
			twoStep := fmt.Sprintf("%s && %s convert -q %s %s", decompress, bin, staged, out)
			if tg.name == "tar fold" {
				// The fold itarconv writes is durable (fsync'd, as every
				// output), so the plain files are synced here too.
				twoStep = fmt.Sprintf("%s && sync && %s index -q %s", decompress, bin, staged)
				out = staged
			}
			direct := fmt.Sprintf("%s convert -q --workers 2 %s %s", bin, zdirs[c.name], filepath.Join(work, tg.out))
			var a, b []float64
			for rep := range reps {
				// Alternate which goes first, so neither always meets a
				// page cache the other just filled.
				order := []string{"two", "direct"}
				if rep%2 == 1 {
					slices.Reverse(order)
				}
				for _, which := range order {
					cleanup(work)
					cmd := twoStep
					if which == "direct" {
						cmd = direct
					}
					t, err := timeShell(cmd)
					if err != nil {
						return err
					}
					checked := out
					if which == "direct" {
						checked = filepath.Join(work, tg.out)
					}
					if err := check(bin, checked, members); err != nil {
						return fmt.Errorf("%s %s (%s): %w", c.name, tg.name, which, err)
					}
					if which == "direct" {
						b = append(b, t)
					} else {
						a = append(a, t)
					}
				}
			}
			cleanup(work)
			ma, mb := bench.Median(a), bench.Median(b)
			fmt.Fprintf(tw, "%s -> %s\t%.3f\t%.3f\t%.2fx\t%s\t\n", c.name, tg.name, ma, mb, mb/ma, bench.Verdict(mb/ma <= targetRatio))
		}
	}
	tw.Flush()
	fmt.Println("\ntwo-step: the codec's tool (gzip -dc, zstd -dc) decompresses each shard into a plain file, two at a time (xargs -P 2), then itarconv converts those (or, for a fold, syncs and indexes them); itarconv: convert of the compressed shards, --workers 2.")
	return nil
}

// generate writes a WebDataset-like fold of shards, shard-NNNNNN.tar, into
// dir (reused when its stamp says so): samples of a .jpg of random bytes
// (as incompressible as a real JPEG) and a .json of random words (text that
// compresses about as JSON does), 1 to 20 KiB each.
func generate(dir string, members, nShards int) ([]string, error) {
	stamp := filepath.Join(dir, fmt.Sprintf("zbench-%d-%d.stamp", members, nShards))
	var paths []string
	for i := range nShards {
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("shard-%06d.tar", i)))
	}
	if _, err := os.Stat(stamp); err == nil {
		return paths, nil
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	words := strings.Fields("the label of a sample caption image width height class score bbox text key value url source license " +
		"annotation category person dog cat car tree house street city river mountain sky water green blue red small large")
	rng := rand.New(rand.NewPCG(1, 2))
	per := members / nShards / 2
	buf := make([]byte, 20<<10)
	for i, p := range paths {
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		tw := tar.NewWriter(bw)
		for k := range per {
			key := fmt.Sprintf("%07d", i*per+k)
			for _, ext := range []string{"jpg", "json"} {
				size := 1<<10 + rng.IntN(19<<10)
				body := buf[:size]
				if ext == "jpg" {
					for j := 0; j+8 <= size; j += 8 {
						binary.LittleEndian.PutUint64(body[j:], rng.Uint64())
					}
				} else {
					body = body[:0]
					for len(body) < size {
						body = append(body, words[rng.IntN(len(words))]...)
						body = append(body, ' ')
					}
					body = body[:size]
				}
				if err := tw.WriteHeader(&tar.Header{Name: key + "." + ext, Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg}); err != nil {
					return nil, err
				}
				if _, err := tw.Write(body); err != nil {
					return nil, err
				}
			}
		}
		if err := tw.Close(); err != nil {
			return nil, err
		}
		if err := bw.Flush(); err != nil {
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return paths, os.WriteFile(stamp, nil, 0o644)
}

// compressAll compresses each shard with the codec's tool into zdir
// (reused when every file is there and newer than its shard).
func compressAll(c codec, shards []string, zdir string) ([]string, error) {
	if err := os.MkdirAll(zdir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range shards {
		z := filepath.Join(zdir, strings.TrimSuffix(filepath.Base(s), ".tar")+c.suffix)
		out = append(out, z)
		zs, err1 := os.Stat(z)
		ss, err2 := os.Stat(s)
		if err1 == nil && err2 == nil && zs.ModTime().After(ss.ModTime()) && zs.Size() > 0 {
			continue
		}
		if _, err := timeShell(fmt.Sprintf("%s -q -c %s > %s", c.tool, s, z)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// check makes sure an output holds every member.
func check(bin, out string, members int) error {
	b, err := exec.Command(bin, "ls", "--json", out).Output()
	if err != nil {
		return fmt.Errorf("ls %s: %w", out, err)
	}
	var ls struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := bench.Result(b, &ls); err != nil {
		return fmt.Errorf("ls %s: %w", out, err)
	}
	if n := len(ls.Entries); n != members {
		return fmt.Errorf("%s holds %d entries, want %d", out, n, members)
	}
	return nil
}

// cleanup removes every output of the work directory.
func cleanup(work string) {
	entries, _ := os.ReadDir(work)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(work, e.Name()))
	}
	exec.Command("sync").Run()
}

// timeShell runs a shell command and returns its wall time.
func timeShell(script string) (float64, error) {
	cmd := exec.Command("sh", "-c", script)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w", script, err)
	}
	return time.Since(start).Seconds(), nil
}

func total(paths []string) int64 {
	var n int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}
