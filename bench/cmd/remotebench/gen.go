package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"time"
)

// writeLarge writes shard i of a large-member set to path: members of
// member bytes, as many as come nearest to shard bytes (at least one:
// 256 MiB makes 4 members of 64 MiB, a few KiB over), each payload all
// zeros. Only the header blocks are written; the payloads are holes of a
// sparse file, so that gigabytes take no time to make and no space on the
// disk, while the file server serves them as any other bytes.
func writeLarge(path string, i int, member, shard int64) error {
	padded := (member + 511) / 512 * 512
	n := membersPerShard(member, shard)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var off int64
	for k := range n {
		hdr, err := header(fmt.Sprintf("s%07d.bin", int64(i)*n+k), member)
		if err != nil {
			f.Close()
			return err
		}
		if _, err := f.WriteAt(hdr, off); err != nil {
			f.Close()
			return err
		}
		off += int64(len(hdr)) + padded
	}
	// The end of the archive, two zero blocks, is a hole too.
	if err := f.Truncate(off + 1024); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// membersPerShard is how many members of member bytes writeLarge puts in
// a shard of about shard bytes.
func membersPerShard(member, shard int64) int64 {
	padded := (member + 511) / 512 * 512
	return max(1, (shard+padded/2)/(512+padded))
}

// header is the tar header block of a member: archive/tar writes it as
// soon as it is given, before the payload it then waits for.
func header(name string, size int64) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     size,
		Mode:     0o644,
		ModTime:  time.Unix(1_700_000_000, 0),
		Format:   tar.FormatUSTAR,
	})
	return buf.Bytes(), err
}
