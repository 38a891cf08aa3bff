package ratarmount

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"strconv"
	"strings"
)

// statField is one st_* attribute of Python's os.stat_result.
type statField struct {
	key string
	val string // as json.dumps writes it
}

// tarStatsJSON is metadata "tarstats": json.dumps of the archive's
// os.stat_result attributes whose names start with "st_", in the sorted
// order dir() gives them, floats written by Python's repr. ratarmount
// reads back st_size and st_mtime only; the rest (inode, atime, ...) is
// written for the shape's sake, and may differ from what ratarmount itself
// would write when the file is read in between.
func tarStatsJSON(fi os.FileInfo) string {
	fields := statFields(fi)
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(f.key))
		b.WriteString(": ")
		b.WriteString(f.val)
	}
	b.WriteByte('}')
	return b.String()
}

// statTime is a st_atime, st_mtime or st_ctime as CPython computes it from
// the seconds and nanoseconds of a timespec: sec + nsec * 1e-9 in double
// precision. The conversion of the product keeps Go from fusing the
// multiplication and the addition, which would round once instead of
// twice.
func statTime(sec, nsec int64) float64 {
	return float64(sec) + float64(float64(nsec)*1e-9)
}

// timeFields are the float and nanosecond attributes of one timestamp:
// st_mtime and st_mtime_ns (an exact integer in Python).
func timeFields(name string, sec, nsec int64) []statField {
	ns := new(big.Int).Mul(big.NewInt(sec), big.NewInt(1e9))
	ns.Add(ns, big.NewInt(nsec))
	return []statField{
		{name, pyFloat(statTime(sec, nsec))},
		{name + "_ns", ns.String()},
	}
}

func intField(key string, v int64) statField   { return statField{key, strconv.FormatInt(v, 10)} }
func uintField(key string, v uint64) statField { return statField{key, strconv.FormatUint(v, 10)} }

// genericStatFields are the attributes a FileInfo gives on any system:
// st_mode (the Unix mode, file type included), st_mtime and st_size, the
// two ratarmount checks among them.
func genericStatFields(fi os.FileInfo) []statField {
	t := fi.ModTime()
	fields := []statField{intField("st_mode", unixMode(fi.Mode()))}
	fields = append(fields, timeFields("st_mtime", t.Unix(), int64(t.Nanosecond()))...)
	return append(fields, intField("st_size", fi.Size()))
}

// unixMode is a FileMode as st_mode holds it.
func unixMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	switch {
	case m.IsDir():
		mode |= 0o040000
	case m&fs.ModeSymlink != 0:
		mode |= 0o120000
	case m&fs.ModeNamedPipe != 0:
		mode |= 0o010000
	case m&fs.ModeSocket != 0:
		mode |= 0o140000
	case m&fs.ModeCharDevice != 0:
		mode |= 0o020000
	case m&fs.ModeDevice != 0:
		mode |= 0o060000
	default:
		mode |= 0o100000
	}
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

// TarStats is what ratarmount reads back of metadata "tarstats".
type TarStats struct {
	Size     int64   // st_size, when HasSize
	MTime    float64 // st_mtime, when HasMTime
	HasSize  bool
	HasMTime bool
}

// ParseTarStats reads metadata "tarstats": a JSON object whose st_size,
// when present, is an integer and whose st_mtime, when present, a number.
// Other attributes are not looked at, as ratarmount does not look at them.
func ParseTarStats(s string) (TarStats, error) {
	var ts TarStats
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return ts, fmt.Errorf("%w: tarstats is not a JSON object: %v", ErrFormat, err)
	}
	if obj == nil {
		return ts, fmt.Errorf("%w: tarstats is null, not a JSON object", ErrFormat)
	}
	if dec.More() {
		return ts, fmt.Errorf("%w: tarstats has data after its JSON object", ErrFormat)
	}
	if v, ok := obj["st_size"]; ok {
		n, ok := v.(json.Number)
		if !ok {
			return ts, fmt.Errorf("%w: tarstats st_size is %v, not a number", ErrFormat, v)
		}
		size, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || size < 0 {
			return ts, fmt.Errorf("%w: tarstats st_size %s is not a size", ErrFormat, n)
		}
		ts.Size, ts.HasSize = size, true
	}
	if v, ok := obj["st_mtime"]; ok {
		n, ok := v.(json.Number)
		if !ok {
			return ts, fmt.Errorf("%w: tarstats st_mtime is %v, not a number", ErrFormat, v)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return ts, fmt.Errorf("%w: tarstats st_mtime %s: %v", ErrFormat, n, err)
		}
		ts.MTime, ts.HasMTime = f, true
	}
	return ts, nil
}

// Check tells whether ratarmount would take an index with these stats as
// describing the archive fi: ErrStale when the archive's size differs
// (ratarmount rebuilds the index of an archive that shrank, and of one that
// grew unless it is at least 64 MiB and the index has at least 100 rows:
// then it reads only what was appended) or, with verifyMTime
// (ratarmount's --verify-mtime), when its modification time differs.
func (ts TarStats) Check(fi os.FileInfo, verifyMTime bool) error {
	if ts.HasSize && ts.Size != fi.Size() {
		return fmt.Errorf("%w: the archive is %d bytes, the index was made for %d", ErrStale, fi.Size(), ts.Size)
	}
	if verifyMTime && ts.HasMTime {
		t := fi.ModTime()
		if m := statTime(t.Unix(), int64(t.Nanosecond())); m != ts.MTime {
			return fmt.Errorf("%w: the archive's st_mtime is %s, the index was made for %s", ErrStale, pyFloat(m), pyFloat(ts.MTime))
		}
	}
	return nil
}
