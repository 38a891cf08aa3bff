package jobrunners

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSlurmArray starts a single-node Slurm cluster with
// examples/slurm/cluster.sh, runs a partitioned index of generated shards
// as a job array of 3 tasks and its merge with examples/slurm/submit.sh, and
// compares the merged index with a single run's.
func TestSlurmArray(t *testing.T) {
	var missing []string
	for _, c := range []string{"slurmctld", "slurmd", "munged", "sbatch"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 && os.Geteuid() != 0 {
		missing = append(missing, "root (the Slurm daemons run as root)")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("no Slurm here: missing %s (apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge, as root)", strings.Join(missing, ", "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	const tasks = 3
	bin := itarconv(t)
	root := repoRoot(t)
	slurmDir := filepath.Join(root, "examples", "slurm")
	tmp := t.TempDir()
	// MUNGE's clients must reach its socket: every folder above it must be
	// open to all.
	for _, d := range []string{filepath.Dir(tmp), tmp} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shards := writeShards(t, filepath.Join(tmp, "shards"), 5, 30)
	for _, d := range []string{"out", "single"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	state := filepath.Join(tmp, "slurm")
	ports := freePorts(t, 2)
	clusterEnv := env("SLURMCTLD_PORT="+ports[0], "SLURMD_PORT="+ports[1], "START_TIMEOUT=60")
	started := time.Now()
	out, err := runErr(90*time.Second, clusterEnv, tmp, "bash", filepath.Join(slurmDir, "cluster.sh"), "start", state)
	t.Cleanup(func() {
		out, err := runErr(60*time.Second, clusterEnv, tmp, "bash", filepath.Join(slurmDir, "cluster.sh"), "stop", state)
		if err != nil {
			t.Errorf("cluster.sh stop: %v", err)
		} else {
			t.Logf("cluster.sh stop: %s", strings.TrimSpace(out))
		}
	})
	if err != nil {
		t.Fatalf("cluster.sh start: %v", err)
	}
	t.Logf("cluster.sh start: %v", time.Since(started).Round(time.Millisecond))

	jobEnv := env("SLURM_CONF="+filepath.Join(state, "slurm.conf"), "ITARCONV="+bin, "LOG_DIR="+filepath.Join(tmp, "logs"))
	merged := filepath.Join(tmp, "out", "train.taridx")
	started = time.Now()
	args := append([]string{filepath.Join(slurmDir, "submit.sh"), "--tasks", strconv.Itoa(tasks), "--wait", "--timeout", "120", merged}, shards...)
	out = run(t, 150*time.Second, jobEnv, tmp, "bash", args...)
	t.Logf("submit.sh --wait: %v\n%s", time.Since(started).Round(time.Millisecond), out)

	// Slurm ran the array's 3 tasks, each told which it is.
	logs, err := filepath.Glob(filepath.Join(tmp, "logs", "itarconv-index-*.out"))
	if err != nil || len(logs) != tasks {
		t.Fatalf("want the logs of %d array tasks, have %q (%v)", tasks, logs, err)
	}
	for k := range tasks {
		suffix := fmt.Sprintf("_%d.out", k)
		found := false
		for _, l := range logs {
			if strings.HasSuffix(l, suffix) {
				b, err := os.ReadFile(l)
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("task %d of %d", k, tasks); !strings.Contains(string(b), want) {
					t.Errorf("%s: no %q in:\n%s", l, want, b)
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no log of array task %d among %q", k, logs)
		}
	}

	noEnv := env()
	if left := lines(run(t, time.Minute, noEnv, tmp, bin, "merge", "--missing", merged)); len(left) > 0 {
		t.Errorf("itarconv merge --missing after the merge job: %q, want nothing", left)
	}
	run(t, time.Minute, noEnv, tmp, bin, append([]string{"index", "-o", filepath.Join(tmp, "single", "train.taridx")}, shards...)...)
	sameFiles(t, filepath.Join(tmp, "single"), filepath.Join(tmp, "out"))
}

// freePorts returns n TCP ports of the loopback address that nothing
// listens on now, so that the test's cluster does not meet another on
// Slurm's usual ports.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}
