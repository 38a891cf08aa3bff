package formatcompare

import (
	"regexp"
	"strings"
	"testing"
)

// Values that span decades get a log scale with a tick per decade, so the
// smallest bar stays visible; values that do not keep a linear axis from 0.
// Either way the axis has its title with the unit, and tick labels.
func TestChartAxes(t *testing.T) {
	labels := []string{"tar + TARIDX", "TBL v2"}
	svg := barChart("Random-read latency", "latency per read, µs", labels, []series{{"p50", "#000", []float64{185, 0.8}}})
	if !strings.Contains(svg, `class="axis-title"`) || !strings.Contains(svg, "latency per read, µs (log scale)") {
		t.Errorf("no log-scale axis title:\n%s", svg)
	}
	ticks := regexp.MustCompile(`class="tick"[^>]*>([^<]*)<`).FindAllStringSubmatch(svg, -1)
	var got []string
	for _, m := range ticks {
		got = append(got, m[1])
	}
	if strings.Join(got, " ") != "0.1 1 10 100 1000" {
		t.Errorf("log ticks %v, want 0.1 1 10 100 1000", got)
	}
	widths := regexp.MustCompile(`width="([0-9.]+)" height="12"`).FindAllStringSubmatch(svg, -1)
	// On 0.1 to 1000 µs, 0.8 µs lies 0.9 decades of 4 along 420 pixels.
	if len(widths) != 2 || widths[0][1] != "343.1" || widths[1][1] != "94.8" {
		t.Errorf("bar widths %v", widths)
	}

	lin := barChart("Build time", "build time, s", labels, []series{{"s", "#000", []float64{0.9, 2.3}}})
	if strings.Contains(lin, "log scale") || !strings.Contains(lin, ">build time, s<") {
		t.Errorf("linear chart's axis:\n%s", lin)
	}
	got = got[:0]
	for _, m := range regexp.MustCompile(`class="tick"[^>]*>([^<]*)<`).FindAllStringSubmatch(lin, -1) {
		got = append(got, m[1])
	}
	if strings.Join(got, " ") != "0 0.5 1 1.5 2 2.5" {
		t.Errorf("linear ticks %v", got)
	}
}

// Where the pages could not be dropped there is no cold column, and the
// notes say why; where they were, the table says how many reads missed.
func TestColdColumns(t *testing.T) {
	rep := &Report{Cold: ColdInfo{Note: "not measured: after posix_fadvise(DONTNEED), 4096 of tbl-v1's 8192 bytes were still in the page cache"},
		Formats: []*FormatResult{{Name: TBLv1, Label: "TBL v1", ColdReads: 3, ColdFoundResident: 1}}}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(b.String(), "\n", 2)[0]
	if strings.Contains(head, "cold") || !strings.Contains(b.String(), "cold reads: not measured: after posix_fadvise") {
		t.Errorf("unmeasured cold reads:\n%s", b.String())
	}
	rep.Cold.Measured = true
	b.Reset()
	rep.WriteTable(&b)
	if !strings.Contains(b.String(), "cold timed") || !strings.Contains(b.String(), " 3/4 ") {
		t.Errorf("measured cold reads:\n%s", b.String())
	}
}
