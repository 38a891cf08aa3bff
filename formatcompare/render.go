package formatcompare

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// columns of the table: header and cell for one format.
type column struct {
	head string
	cell func(r *FormatResult, rep *Report) string
}

func spread(v []float64, format string) string {
	if len(v) < 2 {
		return ""
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return " (" + fmt.Sprintf(format, lo) + "–" + fmt.Sprintf(format, hi) + ")"
}

func columns(rep *Report) []column {
	cols := []column{
		{"format", func(r *FormatResult, _ *Report) string { return r.Label }},
		{"build s", func(r *FormatResult, _ *Report) string {
			return fmt.Sprintf("%.3f", r.BuildSeconds) + spread(r.BuildSecondsReps, "%.3f")
		}},
		{"build MB/s", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.0f", r.BuildMBPerS) }},
		{"data", func(r *FormatResult, _ *Report) string {
			s := human(r.Bytes)
			if !r.copiesData() {
				s += " (the tars)"
			}
			return s
		}},
		{"index", func(r *FormatResult, _ *Report) string { return human(r.IndexBytes) }},
		{"overhead", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.2f%%", r.OverheadPct) }},
		{"open µs", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.0f", r.IndexOpenUs) }},
		{"read p50 µs", func(r *FormatResult, _ *Report) string {
			return fmt.Sprintf("%.1f", r.RandomReadP50Us) + spread(r.RandomReadP50UsReps, "%.1f")
		}},
		{"p99 µs", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.1f", r.RandomReadP99Us) }},
		{"max µs", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.0f", r.RandomReadMaxUs) }},
		{"check µs", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.1f", r.CheckP50Us) }},
		{"own check µs", func(r *FormatResult, _ *Report) string {
			if r.OwnCheck == "" {
				return "none"
			}
			return fmt.Sprintf("%.1f (%s)", r.OwnCheckP50Us, r.OwnCheck)
		}},
	}
	if rep.Cold.Measured {
		cols = append(cols,
			column{"cold p50 µs", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.0f", r.ColdRandomReadP50Us) }},
			column{"cold p99 µs", func(r *FormatResult, _ *Report) string { return fmt.Sprintf("%.0f", r.ColdRandomReadP99Us) }},
			column{"cold timed", func(r *FormatResult, _ *Report) string {
				return fmt.Sprintf("%d/%d", r.ColdReads, r.ColdReads+r.ColdFoundResident)
			}})
	}
	cols = append(cols, column{"seq MB/s", func(r *FormatResult, _ *Report) string {
		return fmt.Sprintf("%.0f", r.SequentialMBPerS) + spread(r.SequentialMBPerSReps, "%.0f")
	}})
	return cols
}

func (r *FormatResult) copiesData() bool {
	for _, f := range r.Files {
		if f.Shared {
			return false
		}
	}
	return true
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func cells(rep *Report, r *FormatResult, cols []column) []string {
	out := make([]string, len(cols))
	for k, c := range cols {
		if r.Error != "" && k > 0 {
			out[k] = "-"
			continue
		}
		out[k] = c.cell(r, rep)
	}
	return out
}

// WriteTable prints the comparison as an aligned table.
func (rep *Report) WriteTable(w io.Writer) error {
	cols := columns(rep)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var head []string
	for _, c := range cols {
		head = append(head, c.head)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rep.Formats {
		fmt.Fprintln(tw, strings.Join(cells(rep, r, cols), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rep.writeNotes(w, "")
	return nil
}

func (rep *Report) writeNotes(w io.Writer, bullet string) {
	d := rep.Dataset
	fmt.Fprintf(w, "%s%d samples (%s of payload, %s of tar shards in %d shards; samples of %d to %d bytes, mean %.0f); %d random reads of %d distinct samples, %d repetitions, medians (spread: min–max)\n",
		bullet, d.Samples, human(d.PayloadBytes), human(d.TarBytes), d.Shards, d.MinSize, d.MaxSize, d.MeanSize,
		rep.Settings.Reads, rep.Settings.CommonReads, rep.Settings.Reps)
	fmt.Fprintf(w, "%sread times hold no checking; check µs: the p50 of the xxh64 comparison with the source that every read gets, the same for every format; own check µs: the p50 of the format's own check, where it has one (tar header: read the member's 512-byte header block and check its checksum; Barecat: crc32c; TBL v2: CRC-16)\n", bullet)
	if rep.Cold.Measured {
		fmt.Fprintf(w, "%scold reads: %s; cold timed: reads that found their pages not resident, of those made (a fault on a mapped file, TBL's, reads hundreds of KiB around it: few of its reads miss, each costs that)\n", bullet, rep.Cold.Method)
	} else {
		fmt.Fprintf(w, "%scold reads: %s\n", bullet, rep.Cold.Note)
	}
	for _, r := range rep.Formats {
		if r.Error != "" {
			fmt.Fprintf(w, "%sFAILED %s: %s\n", bullet, r.Name, r.Error)
		}
	}
}

// WriteMarkdown writes report.md: the machine, dataset, command and table.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	m := rep.Machine
	fmt.Fprintf(w, "# itarconv bench\n\n")
	fmt.Fprintf(w, "Command: `%s`\n\n", rep.Command)
	fmt.Fprintf(w, "Machine: %d cores", m.Cores)
	if m.CPU != "" {
		fmt.Fprintf(w, " (%s)", m.CPU)
	}
	fmt.Fprintf(w, ", %s of memory, %s, %s, %s", human(m.MemoryBytes), m.Kernel, m.OS, m.Go)
	if m.FileSystem != "" {
		fmt.Fprintf(w, ", conversions on %s", m.FileSystem)
	}
	fmt.Fprintf(w, "\n\nDataset: %s, fold `%s`", rep.Dataset.Source, rep.Dataset.Fold)
	if s := rep.Dataset.Synthetic; s != nil {
		fmt.Fprintf(w, " (generated: %d members, sizes uniform in [%d, %d] bytes, %d shards, seed %d)", s.Samples&^1, s.MinSize, s.MaxSize, s.Shards, s.Seed)
	}
	fmt.Fprintf(w, "\n\n")
	cols := columns(rep)
	var head, rule []string
	for k, c := range cols {
		head = append(head, c.head)
		if k == 0 {
			rule = append(rule, "---")
		} else {
			rule = append(rule, "---:")
		}
	}
	fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
	for _, r := range rep.Formats {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells(rep, r, cols), " | "))
	}
	fmt.Fprintln(w)
	rep.writeNotes(w, "* ")
	fmt.Fprintf(w, "* each format is read as its loader reads it: tar + TARIDX with the shards kept open, one positioned read at the header's offset + 512; Barecat a lookup by path in its SQLite index, then a positioned read from its shard, kept open; TBL a copy out of the mapped file (LZ4 decoded)\n")
	fmt.Fprintf(w, "* no format checks its own checksums in the read times: every read is checked against an xxh64 of the source tar's payload, the same for every format, timed apart (check µs); sequential throughput excludes it too\n\n")
	fmt.Fprintf(w, "![size overhead](size.svg) ![random-read latency](latency.svg)\n![sequential throughput](sequential.svg) ![build time](build.svg)\n")
	return nil
}

// WriteFiles writes report.json, report.md and the SVG charts into dir.
func (rep *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{"report.json": append(js, '\n')}
	var md strings.Builder
	rep.WriteMarkdown(&md)
	files["report.md"] = []byte(md.String())
	for name, svg := range rep.Charts() {
		files[name] = []byte(svg)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// series is one set of bars in a chart.
type series struct {
	name   string
	color  string
	values []float64
}

// Charts returns the SVG charts by file name.
func (rep *Report) Charts() map[string]string {
	var labels []string
	var ok []*FormatResult
	for _, r := range rep.Formats {
		if r.Error == "" {
			labels = append(labels, r.Label)
			ok = append(ok, r)
		}
	}
	pick := func(fn func(r *FormatResult) float64) []float64 {
		v := make([]float64, len(ok))
		for k, r := range ok {
			v[k] = fn(r)
		}
		return v
	}
	lat := []series{
		{"p50", "#4c78a8", pick(func(r *FormatResult) float64 { return r.RandomReadP50Us })},
		{"p99", "#f58518", pick(func(r *FormatResult) float64 { return r.RandomReadP99Us })},
	}
	if rep.Cold.Measured {
		lat = append(lat,
			series{"cold p50", "#54a24b", pick(func(r *FormatResult) float64 { return r.ColdRandomReadP50Us })},
			series{"cold p99", "#e45756", pick(func(r *FormatResult) float64 { return r.ColdRandomReadP99Us })})
	}
	return map[string]string{
		"size.svg": barChart("Bytes on disk over the raw payload", "overhead, % of the payload", labels, []series{
			{"overhead", "#4c78a8", pick(func(r *FormatResult) float64 { return r.OverheadPct })}}),
		"latency.svg": barChart("Random-read latency (lower is better)", "latency per read, µs", labels, lat),
		"sequential.svg": barChart("Sequential read of every sample (higher is better)", "throughput, MB/s (10^6 bytes/s)", labels, []series{
			{"MB/s", "#54a24b", pick(func(r *FormatResult) float64 { return r.SequentialMBPerS })}}),
		"build.svg": barChart("Build time (lower is better)", "build time, s", labels, []series{
			{"seconds", "#b279a2", pick(func(r *FormatResult) float64 { return r.BuildSeconds })}}),
	}
}

// scale maps values to bar lengths along the value axis: linear from 0,
// or logarithmic (a decade per tick) where the positive values span two
// decades or more, so that a 0.8 µs bar stays visible beside a 185 µs one.
type scale struct {
	log    bool
	lo, hi float64 // the axis' ends (log: powers of ten)
	ticks  []float64
}

func newScale(ss []series) scale {
	vmin, vmax := math.Inf(1), 0.0
	for _, s := range ss {
		for _, v := range s.values {
			if v > 0 {
				vmin, vmax = min(vmin, v), max(vmax, v)
			}
		}
	}
	if vmax == 0 {
		return scale{lo: 0, hi: 1, ticks: []float64{0, 1}}
	}
	if vmax/vmin >= 100 {
		sc := scale{log: true, lo: math.Pow(10, math.Floor(math.Log10(vmin))), hi: math.Pow(10, math.Ceil(math.Log10(vmax)))}
		if sc.hi == sc.lo {
			sc.hi *= 10
		}
		for e := math.Log10(sc.lo); e <= math.Log10(sc.hi)+0.5; e++ {
			sc.ticks = append(sc.ticks, math.Pow(10, e))
		}
		return sc
	}
	// A step of 1, 2 or 5 times a power of ten, for about 5 ticks.
	raw := vmax / 5
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step*m >= raw {
			step *= m
			break
		}
	}
	sc := scale{lo: 0}
	for k := 0.0; ; k++ {
		t := k * step
		sc.ticks = append(sc.ticks, t)
		if t >= vmax {
			sc.hi = t
			break
		}
	}
	return sc
}

// at is where v lies along the axis, from 0 to 1.
func (sc scale) at(v float64) float64 {
	if sc.log {
		if v <= 0 {
			return 0
		}
		v = max(v, sc.lo)
		return (math.Log10(v) - math.Log10(sc.lo)) / (math.Log10(sc.hi) - math.Log10(sc.lo))
	}
	return max(0, v-sc.lo) / (sc.hi - sc.lo)
}

// barChart draws horizontal grouped bars, one group per label, over a
// value axis with ticks, grid lines and its title (axis: the quantity and
// unit, to which " (log scale)" is added where the scale is logarithmic).
func barChart(title, axis string, labels []string, ss []series) string {
	const (
		labelW, plotW, valueW = 150.0, 420.0, 90.0
		barH, gap, top        = 14.0, 10.0, 50.0
		axisH                 = 44.0
	)
	sc := newScale(ss)
	if sc.log {
		axis += " (log scale)"
	}
	groupH := float64(len(ss))*barH + gap
	plotBottom := top + float64(len(labels))*groupH
	height := plotBottom + axisH
	width := labelW + plotW + valueW
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for k, s := range ss {
		x := labelW + float64(k)*90
		fmt.Fprintf(&b, `<rect x="%.0f" y="30" width="10" height="10" fill="%s"/><text x="%.0f" y="39">%s</text>`+"\n",
			x, s.color, x+14, html.EscapeString(s.name))
	}
	// The value axis: grid lines, ticks and their values, the title.
	for _, t := range sc.ticks {
		x := labelW + sc.at(t)*plotW
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", x, top-4, x, plotBottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="black"/>`+"\n", x, plotBottom, x, plotBottom+4)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.0f" text-anchor="middle" font-size="10">%s</text>`+"\n", x, plotBottom+15, tickValue(t))
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", labelW, plotBottom, labelW+plotW, plotBottom)
	fmt.Fprintf(&b, `<text class="axis-title" x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n",
		labelW+plotW/2, plotBottom+34, html.EscapeString(axis))
	for i, l := range labels {
		y := top + float64(i)*groupH
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			labelW-8, y+float64(len(ss))*barH/2+4, html.EscapeString(l))
		for k, s := range ss {
			v := s.values[i]
			w := sc.at(v) * plotW
			by := y + float64(k)*barH
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.1f" height="%.0f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				labelW, by, w, barH-2, s.color, html.EscapeString(l), html.EscapeString(s.name), html.EscapeString(fmtValue(v)+" "+axis))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10">%s</text>`+"\n", labelW+w+4, by+barH-4, fmtValue(v))
		}
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", labelW, top-4, labelW, plotBottom)
	b.WriteString("</svg>\n")
	return b.String()
}

// tickValue writes a tick's value in full, without float noise.
func tickValue(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func fmtValue(v float64) string {
	switch {
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
