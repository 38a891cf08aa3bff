package energon

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"regexp"

	"github.com/itarconv/itarconv/formats/sqlitefile"
)

// contentHash digests what a dataset's .nv-meta says, for index.uuid.
//
// energon writes a random version-4 UUID into index.uuid each time it
// writes index.sqlite; its loader reads it only as a name for the index's
// content, in the key of the join indexes it caches (a metadataset that
// joins datasets): a new UUID makes it build them again. A UUID derived
// from the content serves that purpose as well, without chance: the same
// dataset gives the same file (so writing it again neither changes a byte
// nor throws away the caches), and any change in a row, a shard name, a
// count or the split gives another.
//
// The digest is SHA-256, of which the UUID keeps 122 bits, as many as a
// random version-4 UUID has; a 64-bit hash such as xxhash would fill only
// half of them. Hashing the rows costs little beside writing them to
// SQLite.
//
// The rows go to the hash in batches of hashBatch bytes: a Write per row,
// of some 40 bytes, took a third more time. Batching changes no byte of
// what is digested.
type contentHash struct {
	h   hash.Hash
	buf []byte // bytes not yet written to h
}

// hashBatch is how many bytes of rows contentHash gathers before it
// writes them to the hash.
const hashBatch = 64 << 10

// uuidDomain starts the digest, so that it is a digest of this and of
// nothing else.
const uuidDomain = "itarconv energon .nv-meta index.uuid v1\x00"

func newContentHash() *contentHash {
	c := &contentHash{h: sha256.New(), buf: make([]byte, 0, hashBatch+256)}
	c.buf = append(c.buf, uuidDomain...)
	return c
}

// file adds a whole file of .nv-meta.
func (c *contentHash) file(name string, data []byte) {
	c.buf = c.string(c.buf, name)
	c.buf = c.string(c.buf, string(data))
	c.spill()
}

// row adds a row of index.sqlite: each value tagged with its type, text
// with its length, so that no two different rows digest alike. The
// values are INTEGER or TEXT, as tables gives them (the encoding is the
// one rows of Go int64 and string had, so index.uuid does not change with
// the type that carries them).
func (c *contentHash) row(table string, row []sqlitefile.Value) {
	b := c.string(c.buf, table)
	for _, v := range row {
		switch v.Kind() {
		case sqlitefile.KindInt:
			b = append(b, 'i')
			b = binary.LittleEndian.AppendUint64(b, uint64(v.Int64()))
		case sqlitefile.KindText:
			b = c.string(b, v.Text())
		default:
			panic(fmt.Sprintf("energon: a value of type %v in a row of %s", v.Kind(), table))
		}
	}
	c.buf = b
	c.spill()
}

// spill writes the gathered bytes to the hash once there are hashBatch.
func (c *contentHash) spill() {
	if len(c.buf) >= hashBatch {
		c.flush()
	}
}

// flush writes the gathered bytes to the hash.
func (c *contentHash) flush() {
	c.h.Write(c.buf)
	c.buf = c.buf[:0]
}

func (c *contentHash) string(b []byte, s string) []byte {
	b = append(b, 's')
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// uuid formats the digest as a version-4 UUID (RFC 9562: version 4,
// variant 10), lower-case, without a newline, as Python's str(uuid4())
// does.
func (c *contentHash) uuid() string {
	c.flush()
	return formatUUID4(c.h.Sum(nil))
}

// formatUUID4 makes the first 16 bytes of b a version-4 UUID.
func formatUUID4(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// uuidForm is a UUID as Python's str(uuid.UUID) writes it.
var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
