package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/remote"
)

// With --json every run prints exactly one JSON document on standard
// output, the same envelope for every command and for failures (see
// docs/JSON.md and docs/json-envelope.schema.json):
//
//	{"command": "index", "ok": true, "result": {...}, "error": null}
//	{"command": "verify", "ok": false, "result": null,
//	 "error": {"exit_code": 1, "message": "...", "path": "...", "offset": 512}}
//
// Commands hand their result to env.setResult; Main writes the envelope
// once the command has returned, with the exit code it computed. Human
// messages stay on standard error.

// envelope is the one document a --json run prints.
type envelope struct {
	Command string         `json:"command"`
	OK      bool           `json:"ok"`
	Result  any            `json:"result"`
	Error   *envelopeError `json:"error"`
}

// envelopeError is a failed run: its exit code, the message standard
// error carries, and where the error carries them the file (or URL) and
// the byte offset in it.
type envelopeError struct {
	ExitCode int    `json:"exit_code"`
	Message  string `json:"message"`
	Path     string `json:"path,omitempty"`
	Offset   *int64 `json:"offset,omitempty"`
}

// streamedResult is a result too large to hold as values (ls's rows):
// it writes its own JSON, and releases what it holds on close.
type streamedResult interface {
	writeJSON(w io.Writer) error
	close()
}

// textResult is what a command printed that is not a result of its own:
// cobra's help and usage, a completion script.
type textResult struct {
	Text string `json:"text"`
}

// emptyResult is the result of a command that has nothing to report.
type emptyResult struct{}

// setResult records v as the command's result for the envelope.
func (e *env) setResult(v any) error {
	if s, ok := e.result.(streamedResult); ok {
		s.close()
	}
	e.result = v
	return nil
}

// jsonRequested tells whether args ask for --json, before cobra parses
// them: the envelope must also answer a command line cobra refuses
// (an unknown flag after --json, an unknown command). The last --json
// before "--" wins, as when parsed.
func jsonRequested(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(a, "--json="); ok {
			b, err := strconv.ParseBool(v)
			on = b || err != nil // a bad value is refused, in JSON
		}
	}
	return on
}

// newEnvelope is the envelope of a run that ended with err and exit code
// code; result is what the command recorded. A failed run's result is
// null, except for a report whose findings are the failure (verify and
// inspect exit 1 with the report that says what is wrong).
func newEnvelope(command string, code int, err error, result any) envelope {
	if code == ExitOK {
		if result == nil {
			result = emptyResult{}
		}
		return envelope{Command: command, OK: true, Result: result}
	}
	if err == nil || !errors.Is(err, errReported) {
		if s, ok := result.(streamedResult); ok {
			s.close()
		}
		result = nil
	}
	ee := &envelopeError{ExitCode: code, Message: errorMessage(err, code)}
	ee.Path, ee.Offset = errorPlace(err)
	return envelope{Command: command, OK: false, Result: result, Error: ee}
}

// errorMessage is the one line standard error carries for err.
func errorMessage(err error, code int) string {
	switch {
	case code == ExitClosedOutput:
		return "standard output closed"
	case code == ExitInterrupted:
		return "interrupted; outputs in progress were removed"
	case err == nil:
		return "failed"
	case errors.Is(err, errReported):
		return "the report found problems: the result lists them"
	}
	var pe panicError
	if errors.As(err, &pe) {
		return "internal error: " + oneLine(fmt.Sprint(pe.Value))
	}
	return oneLine(err.Error())
}

// oneLine joins a message's lines with "; ", each trimmed.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "; ")
}

// errorPlace is the file (or URL) and byte offset an error carries, as
// the formats' typed errors locate a problem; offset nil where none.
func errorPlace(err error) (path string, offset *int64) {
	at := func(p string, off int64) (string, *int64) {
		if off < 0 {
			return p, nil
		}
		return p, &off
	}
	var (
		te  *tarfile.Error
		ie  *taridx.Error
		be  *tbl.Error
		se  *scdl.Error
		bce *barecat.Error
		pe  *fs.PathError
		ue  *url.Error
	)
	switch {
	case errors.As(err, &te):
		return at(te.Path, te.Offset)
	case errors.As(err, &ie):
		return at(ie.Path, ie.Offset)
	case errors.As(err, &be):
		return at(be.Path, be.Offset)
	case errors.As(err, &se):
		return at(se.Path, se.Offset)
	case errors.As(err, &bce):
		return bce.Path, nil
	case errors.As(err, &pe):
		return pe.Path, nil
	case errors.As(err, &ue):
		return ue.URL, nil
	}
	return "", nil
}

// writeEnvelope writes env as indented JSON, every URL in it redacted
// (no user info, no signature or token): --json output lands in logs.
func writeEnvelope(w io.Writer, env envelope) error {
	s, streamed := env.Result.(streamedResult)
	if !streamed {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(env); err != nil {
			return err
		}
		_, err := io.WriteString(w, remote.RedactText(b.String()))
		return err
	}
	// A streamed result goes between the envelope's other fields, which
	// are encoded around a placeholder.
	defer s.close()
	env.Result = json.RawMessage(`"\u0000"`)
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	head, tail, _ := bytes.Cut(b, []byte(`"\u0000"`))
	if _, err := io.WriteString(w, remote.RedactText(string(head))); err != nil {
		return err
	}
	if err := s.writeJSON(w); err != nil {
		return err
	}
	_, err = io.WriteString(w, remote.RedactText(string(tail))+"\n")
	return err
}
