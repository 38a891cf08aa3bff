package formattest

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestToy: the toy format, written to the rules, passes every check. It
// is the worked example of a format and its test.
func TestToy(t *testing.T) {
	registerToy(t, "toy", toyBugs{})
	Run(t, Format{Name: "toy", Out: "sample.toy"})
}

// TestSuiteFinds: a toy with one bug fails the checks that bug breaks, and
// no others: the suite finds each bug it claims to, without panicking or
// hanging on it.
func TestSuiteFinds(t *testing.T) {
	defer func(d time.Duration) { deadline = d }(deadline)
	deadline = 300 * time.Millisecond
	for _, c := range []struct {
		name string
		bugs toyBugs
		want []string // the failing leaf subtests, below the check
	}{
		{"detect by name", toyBugs{detectByName: true}, []string{"detect/renamed", "fifo/sample.toy"}},
		{"clobber", toyBugs{clobber: true}, []string{"overwrite/refused"}},
		{"in place", toyBugs{inPlace: true}, []string{"cancel/midway", "partial/payload", "partial/payload-overwrite", "partial/scan", "partial/scan-overwrite"}},
		{"ignore ctx", toyBugs{ignoreCtx: true}, []string{"cancel/create", "cancel/list", "cancel/midway"}},
		{"follow FIFO", toyBugs{followFIFO: true}, []string{"fifo/sample.toy"}},
		{"trust lengths", toyBugs{trustLengths: true, noChecksum: true}, []string{"damaged/sample.toy/flipped", "damaged/sample.toy/truncated"}},
		{"no checksum", toyBugs{noChecksum: true}, []string{"damaged/sample.toy/flipped"}},
		{"unwrapped", toyBugs{unwrapped: true}, []string{"cancel/create", "cancel/midway", "partial/payload", "partial/payload-overwrite", "partial/scan", "partial/scan-overwrite"}},
		{"loses a file", toyBugs{truncateOnWrite: true}, []string{"overwrite/replaced", "roundtrip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			registerToy(t, "toy", c.bugs)
			r := newRecorder(t)
			r.do(func(tb testing.TB) { run(tb, Format{Name: "toy", Out: "sample.toy"}) })
			var failed []string
			for name, msgs := range r.log.failed {
				failed = append(failed, strings.TrimPrefix(name, t.Name()+"/"))
				t.Logf("%s: %s", name, strings.Join(msgs, "; "))
			}
			sort.Strings(failed)
			if !slices.Equal(failed, c.want) {
				t.Errorf("failed %q, want %q", failed, c.want)
			}
			if c.bugs.trustLengths {
				// The panic is a failure of the case, not of the binary.
				msgs := strings.Join(r.log.failed[t.Name()+"/damaged/sample.toy/truncated"], "\n")
				if !strings.Contains(msgs, "panic: runtime error: slice bounds out of range") {
					t.Errorf("truncated: %s, want the panic reported", msgs)
				}
			}
		})
	}
}

// TestSkip: a case Format.Skip names is skipped, with its reason, and
// the rest run.
func TestSkip(t *testing.T) {
	registerToy(t, "toy", toyBugs{clobber: true})
	r := newRecorder(t)
	r.do(func(tb testing.TB) {
		run(tb, Format{Name: "toy", Out: "sample.toy", Skip: map[string]string{"overwrite/refused": "known"}})
	})
	if len(r.log.failed) > 0 {
		t.Errorf("failed: %v", r.log.failed)
	}
	if why := r.log.skipped[t.Name()+"/overwrite/refused"]; why != "known" {
		t.Errorf("skipped: %v", r.log.skipped)
	}
}
