package parquet

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/testing/duckdb"
)

// sample is one sample of a test: its key and members, by extension, in
// order.
type sample struct {
	key     string
	members [][2]string // extension, bytes
}

func (s sample) files() []formattest.File {
	var out []formattest.File
	for _, m := range s.members {
		out = append(out, f(s.key+"."+m[0], m[1]))
	}
	return out
}

// hubSamples are samples of every kind of column: an image, an integer
// label, text, JSON, and bytes; some lack some members.
func hubSamples(n int) []sample {
	var out []sample
	for i := range n {
		s := sample{key: fmt.Sprintf("shard/%05d", i)}
		if i%4 != 1 {
			img := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{byte(i), 0, 0xff}, 100+i*37)...)
			s.members = append(s.members, [2]string{"jpg", string(img)})
		}
		s.members = append(s.members, [2]string{"cls", strconv.Itoa(i%10 - 3)})
		if i%3 != 2 {
			s.members = append(s.members, [2]string{"txt", strings.Repeat("ünïcode ", i%5)})
		}
		s.members = append(s.members, [2]string{"json", fmt.Sprintf(`{"i": %d, "s": "it's"}`, i)})
		if i%5 == 0 {
			s.members = append(s.members, [2]string{"npy", "\x93NUMPY\x00\x01" + strings.Repeat("\x00", i)})
		}
		out = append(out, s)
	}
	return out
}

// TestDuckDBReadsWritten: DuckDB reads every file a write makes (of each
// codec), with the columns typed as the datasets library types them, and
// every value the source's, row for row; the features metadata parses as
// the datasets library writes it.
func TestDuckDBReadsWritten(t *testing.T) {
	duckdb.Need(t)
	samples := hubSamples(40)
	var files []formattest.File
	for _, s := range samples {
		files = append(files, s.files()...)
	}
	src := tarShards(t, files[:len(files)/2], files[len(files)/2:])
	for _, codec := range []string{"snappy", "zstd", "gzip", "none"} {
		t.Run(codec, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pq")
			if _, err := convert(t, "tar", src, "parquet", dir, registry.CreateOptions{ShardSize: 20000, Workers: 2,
				Format: CreateOptions{Compression: codec, RowGroupBytes: 5000}}); err != nil {
				t.Fatal(err)
			}
			paths, _ := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
			if len(paths) < 2 {
				t.Fatalf("%d files, want several", len(paths))
			}
			wantTypes := map[string]string{KeyColumn: "VARCHAR", "jpg": `STRUCT("bytes" BLOB, "path" VARCHAR)`, "cls": "BIGINT",
				"txt": "VARCHAR", "json": "VARCHAR", "npy": "BLOB"}
			wantFeatures := map[string]string{KeyColumn: "string", "jpg": "Image", "cls": "int64", "txt": "string", "json": "string", "npy": "binary"}
			// One DuckDB run reads every file: their rows in order.
			tb := duckdb.Read(t, paths...)
			order := []string{}
			for _, c := range tb.Columns {
				order = append(order, c.Name)
				if want := wantTypes[c.Name]; c.Type != want {
					t.Errorf("column %s is %s, want %s", c.Name, c.Type, want)
				}
			}
			if got, want := strings.Join(order, ","), "__key__,jpg,cls,txt,json,npy"; got != want {
				t.Errorf("columns %s, want %s (the order the extensions first appear)", got, want)
			}
			for _, p := range paths {
				feats, err := hubFeatures(tb.Metadata[p][MetadataKey])
				if err != nil || fmt.Sprint(feats) != fmt.Sprint(wantFeatures) {
					t.Errorf("%s: features %v (%v), want %v", filepath.Base(p), feats, err, wantFeatures)
				}
			}
			next := 0
			for _, row := range tb.Rows {
				if next >= len(samples) {
					t.Fatalf("more rows than samples")
				}
				checkDuckRow(t, tb, row, samples[next])
				next++
			}
			if next != len(samples) {
				t.Errorf("%d rows, want %d", next, len(samples))
			}
		})
	}
}

// checkDuckRow compares a row as DuckDB read it with the sample it holds.
func checkDuckRow(t *testing.T, tb *duckdb.Table, row []*duckdb.Value, s sample) {
	t.Helper()
	if k, _ := row[tb.Col(KeyColumn)].Bytes(); string(k) != s.key {
		t.Errorf("key %q, want %q", k, s.key)
		return
	}
	have := map[string]string{}
	for _, m := range s.members {
		have[m[0]] = m[1]
	}
	for i, c := range tb.Columns {
		if c.Name == KeyColumn {
			continue
		}
		v := row[i]
		want, ok := have[c.Name]
		if !ok {
			if v != nil {
				t.Errorf("%s: %s is %s, want NULL", s.key, c.Name, v)
			}
			continue
		}
		var got []byte
		switch {
		case v == nil:
			t.Errorf("%s: %s is NULL, want %d bytes", s.key, c.Name, len(want))
			continue
		case v.Struct != nil:
			got, _ = v.Struct["bytes"].Bytes()
			if p, _ := v.Struct["path"].Bytes(); string(p) != s.key+"."+c.Name {
				t.Errorf("%s: %s.path %q, want the member's name", s.key, c.Name, p)
			}
		case v.Int != nil:
			got = []byte(*v.Int)
		default:
			got, _ = v.Bytes()
		}
		if string(got) != want {
			t.Errorf("%s: %s is %.30q, want %.30q", s.key, c.Name, got, want)
		}
	}
}

// duckdbTable is the SQL of a table as a Hub dataset has it (an image
// column named "image", of the datasets Image struct; a label; text;
// numbers; a boolean), and the members it reads as.
const duckdbTable = `SELECT * FROM (VALUES
	('k0', {'bytes': '\xFF\xD8\xFF\xE0\x01'::BLOB, 'path': 'photos/k0.JPG'}, 3::BIGINT, 'hello', 1.5::DOUBLE, true, 7::INTEGER),
	('k1', NULL, -2::BIGINT, NULL, 0.25::DOUBLE, false, NULL::INTEGER),
	('k2', {'bytes': '\x89PNG\x0D\x0A\x1A\x0A'::BLOB, 'path': NULL}, 0::BIGINT, 'wörld', -3.0::DOUBLE, NULL, -1::INTEGER)
) t(__key__, image, label, text, score, flag, small)`

var duckdbMembers = []formattest.File{
	f("k0.jpg", "\xff\xd8\xff\xe0\x01"), f("k0.label", "3"), f("k0.text", "hello"), f("k0.score", "1.5"), f("k0.flag", "true"), f("k0.small", "7"),
	f("k1.label", "-2"), f("k1.score", "0.25"), f("k1.flag", "false"),
	f("k2.png", "\x89PNG\r\n\x1a\n"), f("k2.label", "0"), f("k2.text", "wörld"), f("k2.score", "-3"), f("k2.small", "-1"),
}

// duckdbOptions are the COPY options of the files DuckDB writes for the
// tests: each codec, Parquet 2's encodings and data pages, small row
// groups.
var duckdbOptions = map[string]string{
	"snappy":       "COMPRESSION snappy",
	"zstd":         "COMPRESSION zstd",
	"gzip":         "COMPRESSION gzip",
	"uncompressed": "COMPRESSION uncompressed",
	"v2":           "COMPRESSION zstd, PARQUET_VERSION v2, ROW_GROUP_SIZE 2",
}

// readMembers reads a Parquet file or directory through the registry.
func readMembers(t *testing.T, path string) []formattest.File {
	t.Helper()
	return formattest.Files(formattest.ReadSample(t, "parquet", path))
}

// TestReadDuckDBWritten: files DuckDB writes, of every codec and of
// Parquet 2's encodings, read back as the table's values.
func TestReadDuckDBWritten(t *testing.T) {
	duckdb.Need(t)
	for name, opts := range duckdbOptions {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "duckdb-"+name+".parquet")
			duckdb.Exec(t, fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, %s)", duckdbTable, p, opts))
			sameFiles(t, readMembers(t, p), duckdbMembers)
			if *update {
				b, err := os.ReadFile(p)
				if err == nil {
					err = os.WriteFile(filepath.Join("testdata", filepath.Base(p)), b, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// update writes the files DuckDB writes in TestReadDuckDBWritten into
// testdata: go test ./formats/parquet -run TestReadDuckDBWritten -update
var update = flag.Bool("update", false, "write DuckDB's files into testdata")

// TestReadDuckDBTestdata: the files DuckDB wrote into testdata (see
// update) read back as the table's values, without
// DuckDB.
func TestReadDuckDBTestdata(t *testing.T) {
	for name := range duckdbOptions {
		t.Run(name, func(t *testing.T) {
			sameFiles(t, readMembers(t, filepath.Join("testdata", "duckdb-"+name+".parquet")), duckdbMembers)
		})
	}
}

func TestVerifyDuckDBTestdata(t *testing.T) {
	r, err := verify(context.Background(), filepath.Join("testdata", "duckdb-v2.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if rep := r.(*Report); rep.Rows != 3 || rep.Members != int64(len(duckdbMembers)) {
		t.Errorf("rows %d, members %d", rep.Rows, rep.Members)
	}
}
