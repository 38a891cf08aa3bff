package partition

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/itarconv/itarconv/internal/atonce"
	"github.com/itarconv/itarconv/internal/sharedrec"
	"github.com/itarconv/itarconv/remote"
)

// Every task of a run resolves the run's shard lists, as every other
// does, to take the same share of the same shards and name the same run:
// a stat of every shard in every task, 10^8 of them for 10^5 shards in
// 1,000 tasks, each a round trip to a network file system's metadata
// server. ResolveShared lets the first task to resolve @LIST arguments
// leave what it found in the parts directory; a later task takes it and
// stats only its own shards, to check it.

// maxResolvedRecord bounds the record a task reads back (10^6 shards of
// names of a few hundred bytes).
const maxResolvedRecord = 1 << 30

// ResolveShared returns what resolve returns (the shards of args, and for
// each what os.Stat or os.Lstat said of it, nil for a URL), for task t of
// the run whose output is out. Where every argument is an @LIST and out's
// parts directory holds what an earlier task of the run found for the
// same lists (the same paths, sizes, modification times and files), it
// is taken instead of calling resolve, once this task's own shards
// (Range over the recorded sizes) are stat'ed again and found as
// recorded; a record that does not match is ignored, resolve called, and
// its answer recorded anew. The infos taken from a record are os.Stat's
// of each shard (links followed), as recorded.
func ResolveShared(ctx context.Context, args []string, out string, t Task, resolve func() ([]string, []fs.FileInfo, error)) ([]string, []fs.FileInfo, error) {
	key, ok := resolvedKey(args)
	if !ok {
		return resolve()
	}
	dir := PartsDir(out)
	name := SharedPrefix + "resolved-" + key
	if names, infos, ok := decodeResolved(sharedrec.Get(dir, name, maxResolvedRecord)); ok && ownAsRecorded(ctx, names, infos, t) {
		return names, infos, nil
	}
	names, lstats, err := resolve()
	if err != nil {
		return nil, nil, err
	}
	// Recorded in the parts directory, made here where the output's
	// directory is already (no directory of the output's is made
	// before the command's checks pass).
	if rec, ok := encodeResolved(names, lstats); ok && mkdirOnce(dir) {
		sharedrec.Put(dir, name, SharedPrefix+"tmp-", rec)
	}
	return names, lstats, nil
}

// mkdirOnce makes dir, whose parent must be there; true if dir is there.
func mkdirOnce(dir string) bool {
	err := os.Mkdir(dir, 0o755)
	return err == nil || errors.Is(err, fs.ErrExist)
}

// resolvedKey names the record of args: every one an @LIST, each list
// named with its size, modification time and file (a list written again
// is resolved again). false where an argument is not a list, or a list
// cannot be stat'ed (resolve says why).
func resolvedKey(args []string) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	h := sha256.New()
	h.Write([]byte("itarconv resolved shards 1\x00" + wd + "\x00"))
	for _, a := range args {
		list, ok := strings.CutPrefix(a, "@")
		if !ok || remote.IsURL(list) {
			return "", false
		}
		fi, err := os.Stat(list)
		if err != nil || !fi.Mode().IsRegular() {
			return "", false
		}
		dev, ino, ok := fileID(fi)
		if !ok {
			return "", false
		}
		h.Write([]byte(a + "\x00"))
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(fi.Size())))
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(fi.ModTime().UnixNano())))
		h.Write(binary.LittleEndian.AppendUint64(nil, dev))
		h.Write(binary.LittleEndian.AppendUint64(nil, ino))
	}
	return hex.EncodeToString(h.Sum(nil))[:32], true
}

// ownAsRecorded stats task t's own shards (its Range over the recorded
// sizes), atonce.Files at a time: true when each is the file recorded,
// as recorded.
func ownAsRecorded(ctx context.Context, names []string, infos []fs.FileInfo, t Task) bool {
	sizes := make([]int64, len(infos))
	for i, fi := range infos {
		sizes[i] = fi.Size()
	}
	lo, hi := Range(sizes, t)
	differs := atonce.Each(hi-lo, atonce.Files, func(k int) bool {
		if ctx.Err() != nil {
			return true
		}
		fi, err := os.Stat(names[lo+k])
		return err != nil || !sameRecorded(fi, infos[lo+k])
	})
	return differs == hi-lo
}

// sameRecorded tells whether fi, a fresh stat, says what rec recorded.
func sameRecorded(fi, rec fs.FileInfo) bool {
	d1, i1, ok1 := fileID(fi)
	d2, i2, ok2 := fileID(rec)
	return ok1 && ok2 && d1 == d2 && i1 == i2 && fi.Size() == rec.Size() &&
		fi.ModTime().Equal(rec.ModTime()) && fi.Mode() == rec.Mode()
}

// encodeResolved lays out the shards and their stats: for each, its name,
// size, modification time (ns), mode, device and inode. false where a
// shard has no stat to record (a URL) or no identity: then nothing is
// recorded.
func encodeResolved(names []string, lstats []fs.FileInfo) ([]byte, bool) {
	if len(names) != len(lstats) {
		return nil, false
	}
	b := binary.AppendUvarint(nil, uint64(len(names)))
	for i, n := range names {
		fi := lstats[i]
		if fi == nil {
			return nil, false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			var err error
			if fi, err = os.Stat(n); err != nil {
				return nil, false
			}
		}
		dev, ino, ok := fileID(fi)
		if !ok {
			return nil, false
		}
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
		b = binary.AppendVarint(b, fi.Size())
		b = binary.AppendVarint(b, fi.ModTime().UnixNano())
		b = binary.AppendUvarint(b, uint64(fi.Mode()))
		b = binary.AppendUvarint(b, dev)
		b = binary.AppendUvarint(b, ino)
	}
	return b, true
}

var errRecord = errors.New("a damaged record")

// minResolvedEntry is the fewest bytes a shard takes in a record: a name
// of one byte, its length, and five one-byte varints.
const minResolvedEntry = 7

// decodeResolved reads encodeResolved's layout; false for anything else.
// Nothing is allocated from a count it claims past what its bytes hold.
func decodeResolved(b []byte) ([]string, []fs.FileInfo, bool) {
	if b == nil {
		return nil, nil, false
	}
	r := recordReader{b: b}
	n := r.uvarint()
	if r.err != nil || n == 0 || n > uint64(len(b)/minResolvedEntry) {
		return nil, nil, false
	}
	names := make([]string, 0, n)
	infos := make([]fs.FileInfo, 0, n)
	for range n {
		name := r.bytes(r.uvarint())
		size, mtime := r.varint(), r.varint()
		mode, dev, ino := r.uvarint(), r.uvarint(), r.uvarint()
		if r.err != nil || size < 0 || name == "" {
			return nil, nil, false
		}
		fi, ok := recordedInfo(name, size, mtime, fs.FileMode(mode), dev, ino)
		if !ok {
			return nil, nil, false
		}
		names, infos = append(names, name), append(infos, fi)
	}
	if len(r.b) != 0 {
		return nil, nil, false
	}
	return names, infos, true
}

// recordReader reads a record's fields; err is set at the first that is
// not there whole.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err, r.b = errRecord, nil
		return 0
	}
	r.b = r.b[k:]
	return v
}

// varint reads what binary.AppendVarint wrote: a zigzag-encoded uvarint.
func (r *recordReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *recordReader) bytes(n uint64) string {
	if n > uint64(len(r.b)) {
		r.err, r.b = errRecord, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
