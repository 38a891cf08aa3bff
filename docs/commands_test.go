package docs

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/itarconv/itarconv/testing/s3server"
)

// The pages whose commands a reader copies.
func pages(t *testing.T) []string {
	t.Helper()
	r := root(t)
	docs, err := filepath.Glob(filepath.Join(r, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(r, "README.md")}, docs...)
}

// A shellCommand is one command of a ```sh block: what a reader pastes
// into a shell, with the line of the page it starts on.
type shellCommand struct {
	line int
	text string
}

// notRun marks the block that follows it as one the test cannot run (it
// needs a scheduler, say), with why.
var notRun = regexp.MustCompile(`^<!-- not run: .+ -->$`)

// shellCommands reads a page's ```sh blocks, in order: continuation lines
// joined, comments and blank lines left out. The `go` commands (build and
// test this module) are the ones that run this test, so they are left out
// too.
func shellCommands(t *testing.T, page string) []shellCommand {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out        []shellCommand
		inBlock    bool
		runBlock   bool
		skipNext   bool
		pending    string
		pendingAt  int
		lineNumber int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNumber++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if inBlock {
				inBlock = false
				continue
			}
			inBlock, runBlock = true, trimmed == "```sh" && !skipNext
			skipNext = false
			continue
		}
		if !inBlock {
			if trimmed != "" {
				skipNext = notRun.MatchString(trimmed)
			}
			continue
		}
		if !runBlock {
			continue
		}
		if pending == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if pending == "" {
			pendingAt = lineNumber
		}
		if cont, ok := strings.CutSuffix(trimmed, `\`); ok {
			pending += cont + " "
			continue
		}
		text := pending + trimmed
		pending = ""
		if strings.HasPrefix(text, "go ") {
			continue
		}
		out = append(out, shellCommand{line: pendingAt, text: text})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The binary the tests run, built once into binDir.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildBinary builds itarconv (once) and returns the directory it is in.
func buildBinary(t *testing.T) string {
	t.Helper()
	r := root(t)
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "itarconv-docs-"); buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "itarconv"), "./cmd/itarconv")
		cmd.Dir = r
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// TestDocCommands runs every command of the README's and docs' ```sh
// blocks, page by page, in order, each page in a fresh directory where
// `data/` is a copy of examples/webdataset, as the README says: so the
// commands shown are the commands that work. URLs of https://example.org/ are served from that directory on
// loopback, and s3://my-bucket/ is that directory too, served by a real S3
// server (versitygw); a block preceded by `<!-- not run: why -->` is left
// out.
func TestDocCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs every documented command")
	}
	bin := buildBinary(t)
	for _, page := range pages(t) {
		cmds := shellCommands(t, page)
		if len(cmds) == 0 {
			continue
		}
		name := filepath.Base(page)
		t.Run(name, func(t *testing.T) {
			runPage(t, bin, name, cmds)
		})
	}
}

func runPage(t *testing.T, bin, page string, cmds []shellCommand) {
	var all strings.Builder
	for _, c := range cmds {
		all.WriteString(c.text + "\n")
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	sandbox := t.TempDir()
	if strings.Contains(all.String(), "s3://my-bucket/") {
		// The bucket is the page's directory: versitygw serves it live.
		s3 := s3server.Start(t, map[string]string{"my-bucket": ""})
		sandbox = filepath.Join(s3.Root, "my-bucket")
		env = append(env, s3.Env()...)
	}
	copyDir(t, filepath.Join(root(t), "examples", "webdataset"), filepath.Join(sandbox, "data"))
	if err := os.Symlink(filepath.Join(bin, "itarconv"), filepath.Join(sandbox, "itarconv")); err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(http.FileServer(http.Dir(sandbox)))
	defer web.Close()
	for _, c := range cmds {
		text := strings.ReplaceAll(c.text, "https://example.org/", web.URL+"/")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", text)
		cmd.Dir, cmd.Env = sandbox, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s:%d: %s: %v\n%s", page, c.line, c.text, err, out)
		}
	}
}

// inlineCommand finds the commands written in running text: `itarconv
// SUBCOMMAND ...`.
var inlineCommand = regexp.MustCompile("`(itarconv [^`]+)`")

// TestDocFlagsExist checks every command written in running text (where
// placeholders stand for the user's files, so it cannot run): its
// subcommand exists, and each --flag it shows is one of that subcommand's.
func TestDocFlagsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	itarconv := filepath.Join(buildBinary(t), "itarconv")
	help := map[string]string{}
	helpOf := func(sub string) string {
		if h, ok := help[sub]; ok {
			return h
		}
		out, err := exec.Command(itarconv, sub, "--help").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Usage:") {
			out = nil
		}
		help[sub] = string(out)
		return help[sub]
	}
	for _, page := range pages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range inlineCommand.FindAllStringSubmatch(string(data), -1) {
			fields := strings.Fields(m[1])
			if len(fields) < 2 || strings.HasPrefix(fields[1], "-") {
				continue // `itarconv --help`, `itarconv -q ...`: the root's
			}
			sub := fields[1]
			h := helpOf(sub)
			if h == "" || !strings.Contains(h, "itarconv "+sub) {
				t.Errorf("%s: `%s`: no command %q", filepath.Base(page), m[1], sub)
				continue
			}
			for _, f := range fields[2:] {
				flag, _, _ := strings.Cut(f, "=")
				if !strings.HasPrefix(flag, "--") || flag == "--" {
					continue
				}
				if !regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(flag) + `(\s|$)`).MatchString(h) {
					t.Errorf("%s: `%s`: %s has no flag %s", filepath.Base(page), m[1], sub, flag)
				}
			}
		}
	}
}

// copyDir copies the files of src (not its subdirectories) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
