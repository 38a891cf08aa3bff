package convert

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tbl"
)

// upstreamSample is a sample as TurboLoader's writer takes it:
// add_sample(data, size, format, width, height).
type upstreamSample struct {
	format        tbl.Format
	width, height uint16
	data          string
}

// sof0 is the start of a JPEG whose frame header says 32x16.
var sof0 = "\xff\xd8\xff\xc0\x00\x11\x08\x00\x10\x00\x20" + strings.Repeat("\x00", 20)

// upstreamSamples: index fields that neither a name nor the bytes give
// back, beside samples whose fields they do give back.
var upstreamSamples = []upstreamSample{
	{tbl.JPEG, 32, 16, sof0},                               // what the bytes say
	{tbl.JPEG, 640, 480, sof0},                             // not what the bytes say
	{tbl.JPEG, 0, 0, "abc"},                                // too short to say anything
	{tbl.RAWU8, 4, 2, strings.Repeat("\x7f", 24)},          // RAW_U8: dimensions in the index only
	{tbl.Format(200), 0, 0, "odd"},                         // outside the enum
	{tbl.PNG, 7, 9, strings.Repeat("p", 40)},               // dimensions of no header
	{tbl.MP4, 0, 0, "\x00\x00\x00\x1cftypisom" + "......"}, // as its name says
	{tbl.Format(9), 3, 3, strings.Repeat("q", 30)},
}

// writeUpstream writes samples as TurboLoader's writer would, with names
// in a metadata section when named.
func writeUpstream(t *testing.T, path string, version int, lz4, named bool, samples []upstreamSample) {
	t.Helper()
	w, err := tbl.Create(path, tbl.WriterOptions{Version: version, LZ4: lz4, NumSamples: len(samples), KeepFormat: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		var meta []tbl.MetaEntry
		if named {
			meta = []tbl.MetaEntry{tbl.NameMeta(fmt.Sprintf("dir/s%d.%s", i, s.format.Ext()))}
		}
		if err := w.AddImage(s.format, s.width, s.height, strings.NewReader(s.data), int64(len(s.data)), meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTBLIndexFieldsRoundTrip: a TBL file as TurboLoader's writer makes
// it, with widths and heights of its caller's, RAW_U8 samples and format
// codes outside the enum, comes back byte for byte through a tar fold and
// through Barecat, v1 and v2, with names and without, raw and LZ4.
func TestTBLIndexFieldsRoundTrip(t *testing.T) {
	v1 := []upstreamSample{{tbl.JPEG, 0, 0, sof0}, {tbl.Format(200), 0, 0, "x"}, {tbl.AVI, 0, 0, "RIFF"}, {tbl.FormatUnknown, 0, 0, "y"}, {tbl.TIFF, 0, 0, "II"}}
	for _, c := range []struct {
		version    int
		lz4, named bool
		samples    []upstreamSample
	}{
		{2, false, false, upstreamSamples},
		{2, true, false, upstreamSamples},
		{2, false, true, upstreamSamples},
		{1, false, false, v1},
	} {
		name := fmt.Sprintf("v%d lz4=%v named=%v", c.version, c.lz4, c.named)
		dir := t.TempDir()
		orig := filepath.Join(dir, "up.tbl")
		writeUpstream(t, orig, c.version, c.lz4, c.named, c.samples)
		want, _ := os.ReadFile(orig)
		back := TBLOptions{Version: c.version, LZ4: c.lz4, NoNames: c.version == 2 && !c.named}

		r, err := tbl.Open(orig)
		if err != nil {
			t.Fatal(err)
		}
		fst, err := fold.Write(context.Background(), &tbl.Source{Reader: r}, fold.WriteOptions{Dir: filepath.Join(dir, "fold")})
		if err != nil {
			t.Fatal(err)
		}
		viaTar := filepath.Join(dir, "tar.tbl")
		if _, err := TarToTBL(context.Background(), fst.Shards, viaTar, back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := os.ReadFile(viaTar); !bytes.Equal(got, want) {
			t.Errorf("%s: TBL -> tar -> TBL gives another file", name)
			diffEntries(t, orig, viaTar)
		}

		bc := filepath.Join(dir, "x.barecat")
		if _, err := ToBarecat(context.Background(), &tbl.Source{Reader: r}, bc, BarecatOptions{}); err != nil {
			t.Fatal(err)
		}
		r.Close()
		a, err := barecat.Open(bc)
		if err != nil {
			t.Fatal(err)
		}
		viaBC := filepath.Join(dir, "bc.tbl")
		_, err = ToTBL(context.Background(), func(counting bool) (dataset.PayloadSource, error) {
			return &barecat.Source{Archive: a, Order: barecat.ByAddress, NoData: counting}, nil
		}, viaBC, back)
		a.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := os.ReadFile(viaBC); !bytes.Equal(got, want) {
			t.Errorf("%s: TBL -> Barecat -> TBL gives another file", name)
			diffEntries(t, orig, viaBC)
		}
	}
}

// diffEntries reports the index entries of two TBL files that differ.
func diffEntries(t *testing.T, a, b string) {
	t.Helper()
	ra, err := tbl.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	rb, err := tbl.Open(b)
	if err != nil {
		t.Error(err)
		return
	}
	defer rb.Close()
	if ra.Len() != rb.Len() {
		t.Errorf("%d samples, was %d", rb.Len(), ra.Len())
		return
	}
	for i := range ra.Len() {
		x, y := ra.Sample(i), rb.Sample(i)
		x.Offset, y.Offset = 0, 0
		if fmt.Sprint(x) != fmt.Sprint(y) {
			t.Errorf("sample %d: %+v, was %+v", i, y, x)
		}
	}
}
