package barecat

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader rewrites one files row of a copy of barecat's basic archive
// (path, shard, offset, size, crc32c; crc NULL when nullCRC) and reads the
// archive every way: Open, Files in both orders, Lookup, reading every
// file one by one and all at once (ViewFiles, ReadFiles), Verify. Nothing may panic, and every error must be an *Error
// wrapping one of the package's sentinels.
func FuzzReader(f *testing.F) {
	src := confDir(f, "basic")
	f.Add(uint8(0), "a.txt", int64(0), int64(0), int64(14), int64(3741633346), false)
	f.Add(uint8(1), "dir1/b2.bin", int64(0), int64(14), int64(1000), int64(-553333950), false)
	f.Add(uint8(2), "x", int64(0), int64(math.MaxInt64), int64(1), int64(0), true)
	f.Add(uint8(3), "y", int64(0), int64(5000), int64(1000), int64(0), true)
	f.Add(uint8(4), "z", int64(1), int64(0), int64(1), int64(0), true)
	f.Add(uint8(5), "", int64(0), int64(0), int64(0), int64(0), false)
	f.Add(uint8(6), "../../etc/passwd", int64(0), int64(0), int64(10), int64(1<<32), false)
	f.Add(uint8(7), "a\x00b/\xff", int64(-1), int64(-5), int64(-1), int64(math.MinInt64), false)
	f.Add(uint8(8), "a.txt/sub", int64(0), int64(1), int64(math.MaxInt64), int64(0), true)
	f.Add(uint8(8), "dir1", int64(0), int64(5490), int64(6), int64(0), true)
	f.Add(uint8(2), "/abs//p/./q/", int64(math.MaxInt32)+1, int64(0), int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, row uint8, path string, shard, offset, size, crc int64, nullCRC bool) {
		dir := copyDir(t, src)
		index := filepath.Join(dir, "basic.barecat")
		db := openSQL(t, index, false)
		var crcArg any = crc
		if nullCRC {
			crcArg = nil
		}
		_, err := db.Exec(`UPDATE files SET path = ?, shard = ?, offset = ?, size = ?, crc32c = ? WHERE rowid = ?`,
			path, shard, offset, size, crcArg, int(row)%9+1)
		db.Close()
		if err != nil {
			t.Skip(err) // a duplicate path: the index refuses it
		}
		check := func(err error) {
			t.Helper()
			if err == nil {
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			for _, s := range []error{ErrFormat, ErrVersion, ErrCorrupt, ErrMissingShard, ErrBounds, ErrCRC, ErrInvalidPath, ErrStats, ErrConflict, fs.ErrNotExist} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
		a, err := Open(index)
		check(err)
		if err != nil {
			return
		}
		defer a.Close()
		ctx := context.Background()
		for _, order := range []Order{ByPath, ByAddress} {
			var files []File
			var firstErr error
			check(a.Files(ctx, order, func(f File) error {
				files = append(files, f)
				r, err := a.Open(f)
				check(err)
				if err == nil {
					_, err = io.Copy(io.Discard, r)
					check(err)
				}
				if firstErr == nil {
					firstErr = err
				}
				g, err := a.Lookup(f.Path)
				check(err)
				// Lookup normalizes its argument, as barecat does: a row
				// stored under a path barecat would not write ("a.txt/")
				// looks up as its normal form, which may be another row.
				if np, nerr := NormalizePath(f.Path); err == nil && nerr == nil && np == f.Path && g != f {
					t.Fatalf("Lookup(%q) = %+v, Files gave %+v", f.Path, g, f)
				}
				return nil
			}))
			// All at once, mapped or read: the bytes, or the first error
			// reading them one by one gave.
			views, verr := a.ViewFiles(files)
			data, rerr := a.ReadFiles(files)
			for _, err := range []error{verr, rerr} {
				check(err)
				if (err == nil) != (firstErr == nil) || err != nil && err.Error() != firstErr.Error() {
					t.Fatalf("order %d: all at once: %v; one by one: %v", order, err, firstErr)
				}
			}
			for i := range data {
				if string(views.Data[i]) != string(data[i]) {
					t.Fatalf("%s: ViewFiles and ReadFiles differ", files[i].Path)
				}
			}
			views.Release()
		}
		_, err = a.Lookup(path)
		check(err)
		rep, err := a.Verify(ctx)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		for _, p := range rep.Problems {
			check(p)
		}
		if _, err := os.Stat(index); err != nil {
			t.Fatal(err)
		}
	})
}
