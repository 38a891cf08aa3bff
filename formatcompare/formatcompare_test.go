package formatcompare

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// smallRun benchmarks a 300-sample synthetic fold, keeping the conversions.
func smallRun(t *testing.T, corrupt string) (*Report, string, error) {
	t.Helper()
	work := t.TempDir()
	rep, err := Run(context.Background(), Options{
		Synthetic: &Synthetic{Samples: 300, Shards: 3, MinSize: 100, MaxSize: 3000, Seed: 7},
		WorkDir:   work, Keep: true, Reads: 200, Reps: 1, Workers: 2, Corrupt: corrupt,
		Command: "itarconv bench --synthetic 300",
	})
	return rep, work, err
}

func sumSizes(t *testing.T, paths ...string) int64 {
	t.Helper()
	var n int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

func TestReport(t *testing.T) {
	rep, work, err := smallRun(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dataset.Samples != 300 || rep.Dataset.Shards != 3 || rep.Dataset.MinSize < 100 || rep.Dataset.MaxSize > 3000 {
		t.Fatalf("dataset %+v", rep.Dataset)
	}
	var names []string
	for _, r := range rep.Formats {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, DefaultFormats()) {
		t.Fatalf("formats %v, want %v", names, DefaultFormats())
	}
	if rep.Settings.Reads != 200 || rep.Settings.Reps != 1 || rep.Settings.CommonReads < 100 {
		t.Fatalf("settings %+v", rep.Settings)
	}
	tars, _ := filepath.Glob(filepath.Join(work, "source", "train_*.tar"))
	if len(tars) != 3 {
		t.Fatalf("source shards %v", tars)
	}
	tarBytes := sumSizes(t, tars...)
	payload := rep.Dataset.PayloadBytes
	for _, r := range rep.Formats {
		t.Run(r.Name, func(t *testing.T) {
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			if r.Samples != 300 || r.RandomReads != 200 || r.SequentialSamples != 300 || r.SequentialBytes != payload {
				t.Errorf("samples %d, reads %d, sequential %d samples %d bytes (payload %d)",
					r.Samples, r.RandomReads, r.SequentialSamples, r.SequentialBytes, payload)
			}
			// Warm-up and one timed pass of each: 400 random reads and 600
			// sequential ones, plus the cold pass (each distinct sample of
			// the list once) when it was measured.
			want := int64(400 + 600)
			if rep.Cold.Measured {
				want += int64(rep.Settings.CommonReads)
				// Every cold read was either timed with its pages not
				// resident, or found them resident and was left out; a
				// read that missed the cache is slower than a warm one.
				if r.ColdReads+r.ColdFoundResident != rep.Settings.CommonReads || r.ColdReads == 0 {
					t.Errorf("cold: %d timed + %d found resident, want %d", r.ColdReads, r.ColdFoundResident, rep.Settings.CommonReads)
				}
				// A format read through the registry does not say which
				// pages a read touches, so its cold reads may find them.
				if r.ColdRandomReadP50Us <= r.RandomReadP50Us && byRegistry(r.Name) == nil {
					t.Errorf("cold p50 %.1f µs <= warm p50 %.1f µs", r.ColdRandomReadP50Us, r.RandomReadP50Us)
				}
			}
			if r.ReadsChecked != want {
				t.Errorf("reads checked %d, want %d", r.ReadsChecked, want)
			}
			if r.CheckP50Us <= 0 {
				t.Errorf("check p50 %v", r.CheckP50Us)
			}
			// Each format's own check, timed apart from the reads.
			own := map[string]string{TarTARIDX: "tar header", Barecat: "crc32c", BarecatWrap: "" /* --wrap stores no crc32c */, TBLv1: "", TBLv2: "CRC-16", TBLv2LZ4: "CRC-16"}[r.Name]
			if r.OwnCheck != own || (own != "") != (r.OwnCheckP50Us > 0) {
				t.Errorf("own check %q %v µs, want %q", r.OwnCheck, r.OwnCheckP50Us, own)
			}
			for name, v := range map[string]float64{"build": r.BuildSeconds, "open": r.IndexOpenUs, "p50": r.RandomReadP50Us,
				"p99": r.RandomReadP99Us, "max": r.RandomReadMaxUs, "seq": r.SequentialMBPerS} {
				if v <= 0 {
					t.Errorf("%s = %v", name, v)
				}
			}
			if !(r.RandomReadP50Us <= r.RandomReadP99Us && r.RandomReadP99Us <= r.RandomReadMaxUs) {
				t.Errorf("p50 %v p99 %v max %v", r.RandomReadP50Us, r.RandomReadP99Us, r.RandomReadMaxUs)
			}
			if len(r.BuildSecondsReps) != 1 || len(r.RandomReadP50UsReps) != 1 || len(r.SequentialMBPerSReps) != 1 {
				t.Errorf("reps %v %v %v", r.BuildSecondsReps, r.RandomReadP50UsReps, r.SequentialMBPerSReps)
			}
			// Sizes are the files on disk.
			dir := filepath.Join(work, r.Name)
			switch {
			case byRegistry(r.Name) != nil:
				var files []string
				filepath.Walk(filepath.Join(dir, "data."+r.Name), func(p string, fi os.FileInfo, err error) error {
					if err == nil && !fi.IsDir() {
						files = append(files, p)
					}
					return err
				})
				if len(files) == 0 || r.TotalBytes != sumSizes(t, files...) || r.WrittenBytes != r.TotalBytes {
					t.Errorf("total %d, written %d, files %v", r.TotalBytes, r.WrittenBytes, files)
				}
			case r.Name == TarTARIDX:
				if r.Bytes != tarBytes || r.IndexBytes != sumSizes(t, filepath.Join(dir, "train.taridx"), filepath.Join(dir, "train.taridx.shards.json")) || r.WrittenBytes != r.IndexBytes {
					t.Errorf("bytes %d (tars %d), index %d, written %d", r.Bytes, tarBytes, r.IndexBytes, r.WrittenBytes)
				}
			case r.Name == Barecat || r.Name == BarecatWrap:
				shards, _ := filepath.Glob(filepath.Join(dir, "data.barecat-shard-*"))
				if r.Bytes != sumSizes(t, shards...) || r.IndexBytes != sumSizes(t, filepath.Join(dir, "data.barecat")) {
					t.Errorf("bytes %d index %d, files: shards %d index %d", r.Bytes, r.IndexBytes,
						sumSizes(t, shards...), sumSizes(t, filepath.Join(dir, "data.barecat")))
				}
				if r.Name == BarecatWrap && (r.Bytes != tarBytes || r.WrittenBytes >= r.IndexBytes+4096) {
					t.Errorf("wrap: bytes %d (tars %d), written %d, index %d", r.Bytes, tarBytes, r.WrittenBytes, r.IndexBytes)
				}
				if r.Name == Barecat && (r.Bytes != payload || r.WrittenBytes != r.TotalBytes) {
					t.Errorf("copy: bytes %d (payload %d), written %d, total %d", r.Bytes, payload, r.WrittenBytes, r.TotalBytes)
				}
			default: // TBL: one file
				if r.TotalBytes != sumSizes(t, filepath.Join(dir, "data.tbl")) || r.WrittenBytes != r.TotalBytes {
					t.Errorf("total %d, written %d, file %d", r.TotalBytes, r.WrittenBytes, sumSizes(t, filepath.Join(dir, "data.tbl")))
				}
				if r.Name != TBLv2LZ4 && r.Bytes != payload {
					t.Errorf("data %d, payload %d", r.Bytes, payload)
				}
				if r.Name == TBLv1 && r.IndexBytes != 32+16*300 {
					t.Errorf("v1 index %d, want %d", r.IndexBytes, 32+16*300)
				}
			}
			if r.TotalBytes != r.Bytes+r.IndexBytes {
				t.Errorf("total %d != %d + %d", r.TotalBytes, r.Bytes, r.IndexBytes)
			}
			wantOver := 100 * float64(r.TotalBytes-payload) / float64(payload)
			if r.OverheadPct != wantOver {
				t.Errorf("overhead %v, want %v", r.OverheadPct, wantOver)
			}
		})
	}

	// The files: every field of the spec in report.json, the table in the
	// markdown, and the four charts.
	out := t.TempDir()
	if err := rep.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Formats []map[string]any `json:"formats"`
		Machine map[string]any   `json:"machine"`
		Command string           `json:"command"`
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Formats) != len(DefaultFormats()) || js.Command != "itarconv bench --synthetic 300" || js.Machine["cores"].(float64) < 1 {
		t.Fatalf("report.json: %d formats, command %q, machine %v", len(js.Formats), js.Command, js.Machine)
	}
	for k, f := range js.Formats {
		for _, key := range []string{"name", "build_seconds", "bytes", "index_bytes", "overhead_pct", "index_open_us",
			"random_read_p50_us", "random_read_p99_us", "random_read_max_us", "sequential_mb_per_s", "build_seconds_reps"} {
			if _, ok := f[key]; !ok {
				t.Errorf("format %d: no %q", k, key)
			}
		}
		if f["name"] != DefaultFormats()[k] || f["bytes"].(float64) != float64(rep.Formats[k].Bytes) {
			t.Errorf("format %d: name %v bytes %v", k, f["name"], f["bytes"])
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"| format | build s |", "| TBL v2 + LZ4 |", "Command: `itarconv bench --synthetic 300`", "cores"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, name := range []string{"size.svg", "latency.svg", "sequential.svg", "build.svg"} {
		svg, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(svg), "<svg") || strings.Count(string(svg), "<rect") < len(AllFormats)+1 || !strings.Contains(string(svg), "Barecat (--wrap)") {
			t.Errorf("%s: %.200s", name, svg)
		}
	}
}

// A byte flipped in a format's data is a failure naming the format. The
// reads do no checking of their own (the formats' checksums are not in
// the read path, as in their loaders): the one check, the same for every
// format, is the comparison with the source.
func TestCorruptionIsCaught(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{TBLv1, "wrong bytes: sample"},
		{Barecat, "wrong bytes: sample"},
		{TBLv2, "wrong bytes: sample"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			rep, _, err := smallRun(t, tc.format)
			if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), tc.format+": ") {
				t.Fatalf("err = %v, want ErrFailed naming %s", err, tc.format)
			}
			if !slices.Equal(rep.Failed, []string{tc.format}) {
				t.Fatalf("failed %v", rep.Failed)
			}
			for _, r := range rep.Formats {
				if r.Name == tc.format {
					if !r.CorruptedForTest || !strings.Contains(r.Error, tc.want) {
						t.Errorf("error %q, want %q", r.Error, tc.want)
					}
				} else if r.Error != "" || r.SequentialSamples != 300 {
					t.Errorf("%s: %q, %d samples", r.Name, r.Error, r.SequentialSamples)
				}
			}
		})
	}
}

func TestCorruptRefusesSourceTars(t *testing.T) {
	_, _, err := smallRun(t, TarTARIDX)
	if err == nil || !strings.Contains(err.Error(), "source's own tars") {
		t.Fatalf("err = %v", err)
	}
}

func TestPercentiles(t *testing.T) {
	for _, tc := range []struct {
		in            []float64
		p50, p99, max float64
	}{
		{[]float64{5}, 5, 5, 5},
		{[]float64{4, 1, 3, 2}, 2, 4, 4},
		{func() []float64 {
			v := make([]float64, 200)
			for i := range v {
				v[i] = float64(200 - i)
			}
			return v
		}(), 100, 198, 200},
	} {
		p50, p99, mx := percentiles(tc.in)
		if p50 != tc.p50 || p99 != tc.p99 || mx != tc.max {
			t.Errorf("percentiles(%v) = %v %v %v, want %v %v %v", tc.in[:min(len(tc.in), 4)], p50, p99, mx, tc.p50, tc.p99, tc.max)
		}
	}
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {nil, 0}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// The default run's work is bounded, whatever the fold: 2,000 random reads
// a repetition (the old default of 10,000, three times over and again
// cold, took 35 s on 3,000 members), 200 cold reads, three of each timing.
func TestDefaultPlanBounded(t *testing.T) {
	p := Options{}.Plan()
	n := len(DefaultFormats())
	want := Plan{Builds: n * 3, RandomReads: n * 2000 * 4, ColdReads: n * 200 * 3, SequentialPasses: n * 4}
	if p != want {
		t.Fatalf("default plan %+v, want %+v", p, want)
	}
	if small := (Options{Reads: 50, ColdReads: 500, Reps: 1, Formats: []string{TBLv1}}).Plan(); small.ColdReads != 50 || small.RandomReads != 100 {
		t.Errorf("plan %+v: cold reads are at most the reads", small)
	}
}

func TestTarChecksum(t *testing.T) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "a/b.jpg", Size: 0, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	var h [512]byte
	copy(h[:], b.Bytes())
	if !tarChecksumOK(&h) {
		t.Fatal("a header archive/tar wrote fails the check")
	}
	h[3] ^= 1
	if tarChecksumOK(&h) {
		t.Fatal("a changed header passes the check")
	}
}

// TestRegisteredFormats: a format read through the registry (Parquet) is
// built, read at random and scanned like the others, every read checked
// against the source, and its files are its size.
func TestRegisteredFormats(t *testing.T) {
	if !slices.Contains(RegisteredFormats(), "parquet") {
		t.Fatalf("registered formats %v: no parquet (package convert links it)", RegisteredFormats())
	}
	work := t.TempDir()
	rep, err := Run(context.Background(), Options{
		Synthetic: &Synthetic{Samples: 300, Shards: 3, MinSize: 100, MaxSize: 3000, Seed: 7},
		WorkDir:   work, Keep: true, Reads: 200, Reps: 1, Workers: 2, Formats: []string{TBLv2, "parquet"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Formats[1]
	if r.Name != "parquet" || r.Label != "Parquet" || r.Error != "" {
		t.Fatalf("format %q (%q): %s", r.Name, r.Label, r.Error)
	}
	if r.Samples != 300 || r.RandomReads != 200 || r.SequentialSamples != 300 || r.SequentialBytes != rep.Dataset.PayloadBytes {
		t.Errorf("samples %d, reads %d, sequential %d samples %d bytes", r.Samples, r.RandomReads, r.SequentialSamples, r.SequentialBytes)
	}
	files, _ := filepath.Glob(filepath.Join(work, "parquet", "data.parquet", "data", "*.parquet"))
	if len(files) == 0 || r.TotalBytes != sumSizes(t, files...) {
		t.Errorf("total %d, files %v", r.TotalBytes, files)
	}
}
