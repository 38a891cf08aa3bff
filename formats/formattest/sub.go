package formattest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// sub runs fn as a subtest of t named name, unless Format.Skip names it
// (by its path below the test that called Run: "damaged/x.tbl/empty").
func (s *suite) sub(t testing.TB, name string, fn func(t testing.TB)) {
	t.Helper()
	subtest(t, s.root, s.Skip, name, fn)
}

// subtest runs fn as a subtest of t named name, unless skip names it by
// its path below root.
func subtest(t testing.TB, root string, skip map[string]string, name string, fn func(t testing.TB)) {
	t.Helper()
	run := func(t testing.TB) {
		key := strings.TrimPrefix(t.Name(), root+"/")
		if why, ok := skip[key]; ok {
			t.Skip(why)
		}
		fn(t)
	}
	switch t := t.(type) {
	case *testing.T:
		t.Run(name, func(t *testing.T) { run(t) })
	case *recorder:
		t.child(name).do(run)
	default:
		panic(fmt.Sprintf("formattest: a %T runs no subtests", t))
	}
}

// recorder is a testing.TB that records failures instead of reporting
// them, so that the suite's own tests can check what it finds in a
// format made to fail. Subtests are named as the testing package names
// them; Fatal and Skip end the subtest's goroutine, as they do there.
type recorder struct {
	testing.TB // the real test: TempDir, Cleanup, Logf
	name       string
	log        *record
}

// record is what a recorder and its children found, by subtest name.
type record struct {
	mu      sync.Mutex
	failed  map[string][]string
	skipped map[string]string
}

func newRecorder(t testing.TB) *recorder {
	return &recorder{TB: t, name: t.Name(), log: &record{failed: map[string][]string{}, skipped: map[string]string{}}}
}

func (r *recorder) child(name string) *recorder {
	return &recorder{TB: r.TB, name: r.name + "/" + name, log: r.log}
}

// do runs fn on its own goroutine, which Fatal and Skip end.
func (r *recorder) do(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
}

func (r *recorder) Name() string { return r.name }
func (r *recorder) Helper()      {}

func (r *recorder) Errorf(format string, args ...any) {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	r.log.failed[r.name] = append(r.log.failed[r.name], fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fail()             { r.Errorf("failed") }
func (r *recorder) FailNow()          { r.Fail(); runtime.Goexit() }
func (r *recorder) Fatal(args ...any) { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Failed() bool {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	for name := range r.log.failed {
		if name == r.name || strings.HasPrefix(name, r.name+"/") {
			return true
		}
	}
	return false
}

func (r *recorder) Skip(args ...any) { r.Skipf("%s", fmt.Sprint(args...)) }
func (r *recorder) SkipNow()         { r.Skipf("skipped") }
func (r *recorder) Skipf(format string, args ...any) {
	r.log.mu.Lock()
	r.log.skipped[r.name] = fmt.Sprintf(format, args...)
	r.log.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Skipped() bool {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	_, ok := r.log.skipped[r.name]
	return ok
}
