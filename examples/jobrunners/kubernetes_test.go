package jobrunners

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// job is what the test reads of a Kubernetes Job.
type job struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy  string      `yaml:"restartPolicy"`
				InitContainers []container `yaml:"initContainers"`
				Containers     []container `yaml:"containers"`
				Volumes        []struct {
					Name string `yaml:"name"`
					PVC  *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type container struct {
	Name         string   `yaml:"name"`
	Command      []string `yaml:"command"`
	Args         []string `yaml:"args"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

func (c container) argv() []string { return append(slices.Clone(c.Command), c.Args...) }

// claim is the persistent volume claim a job mounts at /data.
func (j *job) claim(t *testing.T) string {
	t.Helper()
	spec := j.Spec.Template.Spec
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		var vol string
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/data" {
				vol = m.Name
			}
		}
		for _, v := range spec.Volumes {
			if vol != "" && v.Name == vol && v.PVC != nil {
				return v.PVC.ClaimName
			}
		}
		t.Errorf("job %s: container %s mounts no claim at /data", j.Metadata.Name, c.Name)
	}
	return ""
}

// TestKubernetesManifest reads the Indexed Job and the merge Job of
// examples/kubernetes/index-job.yaml and runs their commands as their pods
// would, the shared volume at /data being a temporary folder: one index
// process per completion index, at once, each with its JOB_COMPLETION_INDEX,
// then the merge. The merged index must be the single run's, byte for byte.
func TestKubernetesManifest(t *testing.T) {
	path := filepath.Join(repoRoot(t), "examples", "kubernetes", "index-job.yaml")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var index, merge *job
	dec := yaml.NewDecoder(f)
	for {
		var j job
		if err := dec.Decode(&j); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if j.Kind != "Job" {
			continue
		}
		if j.APIVersion != "batch/v1" {
			t.Errorf("job %s: apiVersion %q, want batch/v1", j.Metadata.Name, j.APIVersion)
		}
		if p := j.Spec.Template.Spec.RestartPolicy; p != "Never" && p != "OnFailure" {
			t.Errorf("job %s: restartPolicy %q: a Job's pods need Never or OnFailure", j.Metadata.Name, p)
		}
		if len(j.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("job %s: %d containers, want the one that runs itarconv", j.Metadata.Name, len(j.Spec.Template.Spec.Containers))
		}
		argv := j.Spec.Template.Spec.Containers[0].argv()
		switch {
		case j.Spec.CompletionMode == "Indexed":
			if index != nil {
				t.Fatalf("two Indexed Jobs: %s and %s", index.Metadata.Name, j.Metadata.Name)
			}
			index = &j
		case len(argv) >= 2 && argv[1] == "merge":
			merge = &j
		}
	}
	if index == nil || merge == nil {
		t.Fatalf("%s: want an Indexed Job and a Job that runs itarconv merge", path)
	}

	// The Indexed Job: N completions, and itarconv told N by --tasks.
	if index.Spec.Completions == nil || *index.Spec.Completions < 2 {
		t.Fatalf("job %s: completions %v, want 2 or more", index.Metadata.Name, index.Spec.Completions)
	}
	n := *index.Spec.Completions
	if p := index.Spec.Parallelism; p == nil || *p < 1 || *p > n {
		t.Errorf("job %s: parallelism %v, want 1 to %d", index.Metadata.Name, p, n)
	}
	indexArgv := index.Spec.Template.Spec.Containers[0].argv()
	if len(indexArgv) < 2 || indexArgv[0] != "itarconv" || indexArgv[1] != "index" {
		t.Fatalf("job %s runs %q, want itarconv index", index.Metadata.Name, indexArgv)
	}
	if got := flag(indexArgv, "--tasks"); got != strconv.Itoa(n) {
		t.Fatalf("job %s: --tasks %q, want the completions, %d", index.Metadata.Name, got, n)
	}
	out := flag(indexArgv, "-o")
	if !strings.HasPrefix(out, "/data/") {
		t.Fatalf("job %s: -o %q, want a path on the volume at /data", index.Metadata.Name, out)
	}
	mergeArgv := merge.Spec.Template.Spec.Containers[0].argv()
	if !slices.Equal(mergeArgv, []string{"itarconv", "merge", out}) {
		t.Fatalf("job %s runs %q, want itarconv merge %s", merge.Metadata.Name, mergeArgv, out)
	}
	if merge.Spec.CompletionMode == "Indexed" || (merge.Spec.Completions != nil && *merge.Spec.Completions != 1) {
		t.Errorf("job %s: want one pod", merge.Metadata.Name)
	}
	if a, b := index.claim(t), merge.claim(t); a != b {
		t.Errorf("the index mounts claim %q at /data, the merge %q", a, b)
	}

	// The volume: a folder, with the shards where the Job looks for them.
	bin := itarconv(t)
	data := t.TempDir()
	writeShards(t, filepath.Join(data, "shards"), 5, 30)
	onVolume := func(argv []string) []string {
		argv = slices.Clone(argv)
		for i, a := range argv {
			if a == "/data" || strings.HasPrefix(a, "/data/") {
				argv[i] = data + strings.TrimPrefix(a, "/data")
			}
		}
		if argv[0] == "itarconv" {
			argv[0] = bin
		}
		return argv
	}
	noEnv := env()
	for _, c := range index.Spec.Template.Spec.InitContainers {
		argv := onVolume(c.argv())
		run(t, time.Minute, noEnv, data, argv[0], argv[1:]...)
	}

	// Every index but the last, at once: merge must then name the last
	// as missing, and fail.
	merged := onVolume([]string{out})[0]
	runIndexes := func(ks ...int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(ks))
		for i, k := range ks {
			wg.Go(func() {
				argv := onVolume(indexArgv)
				_, errs[i] = runErr(2*time.Minute, env("JOB_COMPLETION_INDEX="+strconv.Itoa(k)), data, argv[0], argv[1:]...)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("JOB_COMPLETION_INDEX=%d %q: %v", ks[i], indexArgv, err)
			}
		}
	}
	first := make([]int, n-1)
	for k := range first {
		first[k] = k
	}
	started := time.Now()
	runIndexes(first...)
	left := lines(run(t, time.Minute, noEnv, data, bin, "merge", "--missing", merged))
	if want := []string{strconv.Itoa(n - 1)}; !slices.Equal(left, want) {
		t.Errorf("itarconv merge --missing with index %d not run: %q, want %q", n-1, left, want)
	}
	if _, err := runErr(time.Minute, noEnv, data, bin, "merge", merged); err == nil {
		t.Errorf("itarconv merge succeeded with index %d not run", n-1)
	}
	runIndexes(n - 1)

	argv := onVolume(mergeArgv)
	run(t, time.Minute, noEnv, data, argv[0], argv[1:]...)
	t.Logf("%d index processes and the merge: %v", n, time.Since(started).Round(time.Millisecond))
	if left := lines(run(t, time.Minute, noEnv, data, bin, "merge", "--missing", merged)); len(left) > 0 {
		t.Errorf("itarconv merge --missing after the merge: %q, want nothing", left)
	}

	// The single run: the same command without --tasks, into a folder
	// beside the merge's.
	single := filepath.Join(data, "single")
	if err := os.Mkdir(single, 0o755); err != nil {
		t.Fatal(err)
	}
	singleArgv := onVolume(withoutFlag(indexArgv, "--tasks"))
	singleArgv[slices.Index(singleArgv, "-o")+1] = filepath.Join(single, filepath.Base(merged))
	run(t, time.Minute, noEnv, data, singleArgv[0], singleArgv[1:]...)
	sameFiles(t, single, filepath.Dir(merged))

	// A second merge changes nothing.
	before := snapshot(t, filepath.Dir(merged))
	run(t, time.Minute, noEnv, data, argv[0], argv[1:]...)
	if after := snapshot(t, filepath.Dir(merged)); !maps.EqualFunc(before, after, bytes.Equal) {
		t.Errorf("a second itarconv merge changed %s", filepath.Dir(merged))
	}
}

// flag is the value of flag name in argv ("" when absent).
func flag(argv []string, name string) string {
	for i, a := range argv {
		if a == name && i+1 < len(argv) {
			return argv[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// withoutFlag is argv less flag name and its value.
func withoutFlag(argv []string, name string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		switch {
		case argv[i] == name:
			i++
		case strings.HasPrefix(argv[i], name+"="):
		default:
			out = append(out, argv[i])
		}
	}
	return out
}

// snapshot maps each file of dir to its bytes.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			m[e.Name()] = b
		}
	}
	return m
}
