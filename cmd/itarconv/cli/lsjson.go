package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"

	"github.com/itarconv/itarconv/remote"
)

// spoolMemory is what an ls --json listing holds in memory before it
// spills to a temporary file: the envelope's "ok" is known only once the
// listing is complete, after every row (millions of them) is encoded.
const spoolMemory = 4 << 20

// rowSpool keeps the rows of an ls --json listing, each one line of JSON,
// until the envelope is written: result {"entries": [...]}.
type rowSpool struct {
	mem  bytes.Buffer
	file *os.File // past spoolMemory; removed on close
	name string
	w    *bufio.Writer
	n    int64
	err  error
}

// lsJSON returns the spool of a listing in the envelope's result, or nil
// without --json.
func (e *env) lsJSON() *rowSpool {
	if !e.jsonOut {
		return nil
	}
	s := &rowSpool{}
	e.setResult(s)
	return s
}

// addJSON encodes v as one row.
func (s *rowSpool) addJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return s.add(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// add appends one encoded row (without its newline), URLs redacted.
func (s *rowSpool) add(row []byte) error {
	if s.err != nil {
		return s.err
	}
	var line []byte
	if s.n > 0 {
		line = append(line, ",\n"...)
	}
	if bytes.Contains(row, []byte("://")) {
		row = []byte(remote.RedactText(string(row)))
	}
	line = append(line, row...)
	s.n++
	if s.file == nil && s.mem.Len()+len(line) > spoolMemory {
		f, err := os.CreateTemp("", "itarconv-ls-*.json")
		if err != nil {
			s.err = err
			return err
		}
		// Unnamed where the system allows: gone with the process, whatever
		// happens; else removed on close.
		os.Remove(f.Name())
		s.file, s.name, s.w = f, f.Name(), bufio.NewWriterSize(f, 1<<16)
		if _, err := s.w.Write(s.mem.Bytes()); err != nil {
			s.err = err
			return err
		}
		s.mem = bytes.Buffer{}
	}
	if s.file != nil {
		_, s.err = s.w.Write(line)
		return s.err
	}
	s.mem.Write(line)
	return nil
}

func (s *rowSpool) writeJSON(w io.Writer) error {
	if s.err != nil {
		return s.err
	}
	if _, err := io.WriteString(w, "{\"entries\": [\n"); err != nil {
		return err
	}
	if s.file != nil {
		if err := s.w.Flush(); err != nil {
			return err
		}
		if _, err := s.file.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(w, s.file); err != nil {
			return err
		}
	} else if _, err := w.Write(s.mem.Bytes()); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n]}")
	return err
}

func (s *rowSpool) close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.name)
		s.file = nil
	}
	s.mem = bytes.Buffer{}
}
