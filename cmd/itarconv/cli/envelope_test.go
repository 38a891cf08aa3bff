package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/itarconv/itarconv/testing/testutil"
)

// parseEnvelope reads stdout as exactly one JSON document, the envelope.
func parseEnvelope(stdout string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON document")
	}
	return doc, nil
}

// runResult runs a --json command line and returns its exit code, the
// envelope's result as indented JSON ("" for null) and standard error.
func runResult(t *testing.T, args ...string) (code int, result, stderr string) {
	t.Helper()
	code, stdout, stderr := run(t, args...)
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if _, err := parseEnvelope(stdout); err != nil {
		t.Fatalf("%q: %v:\n%s", args, err, stdout)
	}
	json.Unmarshal([]byte(stdout), &env)
	if string(env.Result) == "null" {
		return code, "", stderr
	}
	var b bytes.Buffer
	if err := json.Indent(&b, env.Result, "", "  "); err != nil {
		t.Fatal(err)
	}
	return code, b.String() + "\n", stderr
}

// lsEntries is an ls --json listing's entries.
func lsEntries(t *testing.T, result string) []json.RawMessage {
	t.Helper()
	var r struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal([]byte(result), &r); err != nil || r.Entries == nil {
		t.Fatalf("ls --json: %v: %.200s", err, result)
	}
	return r.Entries
}

// envelopeSchema compiles docs/json-envelope.schema.json.
func envelopeSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	root, err := testutil.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "docs", "json-envelope.schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJSONEnvelope runs every command with --json, as it succeeds and as
// it fails, and checks that standard output is one document valid under
// the schema in docs/, agreeing with the exit code: command, ok, the
// error's exit code, and the file and offset a located error names.
// Before, every command had a shape of its own, index --task printed
// nothing, cat and version had no --json, and no error was JSON.
func TestJSONEnvelope(t *testing.T) {
	schema := envelopeSchema(t)
	// The schema holds the rules, not only the fields' types.
	for _, doc := range []string{
		`{"command": "ls", "ok": true, "result": {}, "error": {"exit_code": 1, "message": "x"}}`,
		`{"command": "ls", "ok": true, "result": null, "error": null}`,
		`{"command": "ls", "ok": false, "result": null, "error": null}`,
		`{"command": "ls", "ok": false, "result": {}, "error": {"exit_code": 2, "message": "x"}}`,
		`{"command": "ls", "ok": false, "result": null, "error": {"exit_code": 7, "message": "x"}}`,
		`{"command": "ls", "ok": false, "result": null, "error": {"exit_code": 1, "message": "x", "offset": -1}}`,
		`{"command": "ls", "ok": true, "result": {}, "error": null, "extra": 1}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if schema.Validate(v) == nil {
			t.Errorf("the schema takes %s", doc)
		}
	}
	dir, _ := writeShards(t, 3, 10)
	idx := filepath.Join(dir, "train.taridx")
	work := t.TempDir()
	bc := filepath.Join(work, "x.barecat")
	parts := filepath.Join(work, "parts")
	os.Mkdir(parts, 0o755)
	partOut := filepath.Join(parts, "p.taridx")

	// A shard whose second header's checksum is wrong: the error names
	// the shard and the header's offset.
	bad := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(dir, "train_0000.tar"))
	const second = 1024 // the first payload, s000000.jpg, is 20 bytes: one block
	b = bytes.Clone(b)
	b[second+148] ^= 0x07 // a checksum digit
	os.WriteFile(filepath.Join(bad, "train_0000.tar"), b, 0o644)
	badShard := filepath.Join(bad, "train_0000.tar")

	type want struct {
		code    int
		command string
		path    string // the error's path, where it must name one
		offset  int64  // with path: the error's offset (-1: none)
		result  bool   // a result on failure (a report of the findings)
	}
	for _, c := range []struct {
		args []string
		want want
	}{
		{[]string{"index", "--json", "-q", dir}, want{code: 0, command: "index"}},
		{[]string{"index", "--json", "-q", filepath.Join(work, "none")}, want{code: 1, command: "index", path: filepath.Join(work, "none"), offset: -1}},
		{[]string{"index", "--json", "-q", bad}, want{code: 1, command: "index", path: badShard, offset: second}},
		{[]string{"index", "--json", "--bogus", dir}, want{code: 2, command: "index"}},
		{[]string{"index", "--bogus", "--json", dir}, want{code: 2, command: "index"}}, // --json after what cobra refuses
		{[]string{"index", "--json", "-q", "--task", "0/2", "-o", partOut, filepath.Join(dir, "train_0000.tar"), filepath.Join(dir, "train_0001.tar")},
			want{code: 0, command: "index"}},
		{[]string{"index", "--json", "-q", "--task", "9/2", dir}, want{code: 2, command: "index"}},
		{[]string{"merge", "--json", "--missing", partOut}, want{code: 0, command: "merge"}},
		{[]string{"merge", "--json", partOut}, want{code: 1, command: "merge"}},
		{[]string{"merge", "--json"}, want{code: 2, command: "merge"}},
		{[]string{"inspect", "--json", idx}, want{code: 0, command: "inspect"}},
		{[]string{"inspect", "--json", badShard}, want{code: 1, command: "inspect"}},
		{[]string{"ls", "--json", idx}, want{code: 0, command: "ls"}},
		{[]string{"ls", "--json", filepath.Join(work, "none.taridx")}, want{code: 1, command: "ls", path: filepath.Join(work, "none.taridx"), offset: -1}},
		{[]string{"cat", "--json", idx, "s000000.jpg"}, want{code: 2, command: "cat"}},
		{[]string{"verify", "--json", dir}, want{code: 0, command: "verify"}},
		{[]string{"verify", "--json", idx, badShard, filepath.Join(dir, "train_0001.tar"), filepath.Join(dir, "train_0002.tar")},
			want{code: 1, command: "verify", result: true}},
		{[]string{"convert", "--json", "-q", dir, bc}, want{code: 0, command: "convert"}},
		{[]string{"convert", "--json", "-q", dir, bc}, want{code: 1, command: "convert"}}, // exists
		{[]string{"convert", "--json", dir, "-"}, want{code: 2, command: "convert"}},
		{[]string{"ls", "--json", bc}, want{code: 0, command: "ls"}},
		{[]string{"verify", "--json", bc}, want{code: 0, command: "verify"}},
		{[]string{"bench", "--json", "--synthetic", "40", "--reps", "1", "--reads", "20", "--no-cold", "--formats", "tar+taridx", "--work-dir", work},
			want{code: 0, command: "bench"}},
		{[]string{"bench", "--json", "--reps", "0"}, want{code: 2, command: "bench"}},
		{[]string{"version", "--json"}, want{code: 0, command: "version"}},
		{[]string{"--version", "--json"}, want{code: 0, command: "version"}},
		{[]string{"version", "--json", "extra"}, want{code: 2, command: "version"}},
		{[]string{"completion", "bash", "--json"}, want{code: 0, command: "completion bash"}},
		{[]string{"index", "--help", "--json"}, want{code: 0, command: "index"}},
		{[]string{"--json", "frob"}, want{code: 2, command: "frob"}},
		{[]string{"--json"}, want{code: 0, command: ""}},
	} {
		code, stdout, stderr := run(t, c.args...)
		what := strings.Join(c.args, " ")
		if code != c.want.code {
			t.Errorf("%s: exit %d, want %d: %s", what, code, c.want.code, stderr)
		}
		env, err := parseEnvelope(stdout)
		if err != nil {
			t.Errorf("%s: %v:\n%.300s", what, err, stdout)
			continue
		}
		if err := schema.Validate(env); err != nil {
			t.Errorf("%s: the envelope breaks the schema: %v\n%.500s", what, err, stdout)
			continue
		}
		if env["command"] != c.want.command || env["ok"] != (code == 0) {
			t.Errorf("%s: command %q, ok %v; want %q, %v", what, env["command"], env["ok"], c.want.command, code == 0)
		}
		if code == 0 {
			if env["result"] == nil {
				t.Errorf("%s: no result", what)
			}
			continue
		}
		e := env["error"].(map[string]any)
		if n, _ := e["exit_code"].(json.Number).Int64(); int(n) != code {
			t.Errorf("%s: exit_code %d, exit %d", what, n, code)
		}
		if msg := e["message"].(string); !c.want.result && !strings.Contains(oneLine(stderr), msg) {
			t.Errorf("%s: message %q is not what standard error says: %s", what, msg, stderr)
		}
		if (env["result"] != nil) != c.want.result {
			t.Errorf("%s: result %v", what, env["result"])
		}
		if c.want.path != "" {
			off, hasOffset := e["offset"].(json.Number)
			n, _ := off.Int64()
			if e["path"] != c.want.path || hasOffset != (c.want.offset >= 0) || (hasOffset && n != c.want.offset) {
				t.Errorf("%s: error at %v offset %v, want %s offset %d", what, e["path"], e["offset"], c.want.path, c.want.offset)
			}
		}
	}
}

// TestJSONLsLarge: a listing larger than the memory an ls --json holds
// spills to a temporary file and still comes out whole, in order, once,
// and the temporary file is gone after the run.
func TestJSONLsLarge(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := &rowSpool{}
	row := []byte(`{"name":"` + strings.Repeat("x", 1000) + `"}`)
	const n = 2 * spoolMemory / 1000
	for range n {
		if err := s.add(row); err != nil {
			t.Fatal(err)
		}
	}
	if s.file == nil {
		t.Fatal("no spill past the memory bound")
	}
	var out bytes.Buffer
	if err := writeEnvelope(&out, envelope{Command: "ls", OK: true, Result: s}); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Result struct{ Entries []json.RawMessage } `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &env); err != nil || len(env.Result.Entries) != n {
		t.Fatalf("%v, %d entries, want %d", err, len(env.Result.Entries), n)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
