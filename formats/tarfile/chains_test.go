package tarfile

import (
	"bytes"
	"testing"
)

// TestChains checks how extension headers combine with the header they
// precede, and the offsets reported for the chain.
func TestChains(t *testing.T) {
	longName := string(bytes.Repeat([]byte("n"), 150))
	longLink := string(bytes.Repeat([]byte("l"), 120))
	gnuLong := func(a *archive, typeflag byte, s string) {
		a.add(hdr{name: "././@LongLink", typeflag: typeflag, size: int64(len(s) + 1), format: FormatGNU}, []byte(s+"\x00"))
	}
	type want struct {
		name, link               string
		typeflag                 byte
		first, header, data, end int64 // end: DataOffset+Size
	}
	tests := []struct {
		name  string
		build func(a *archive)
		want  []want
		end   int64 // Scanner.Offset after io.EOF
	}{
		{
			"pax path over GNU long name",
			func(a *archive) {
				a.pax(TypeXHeader, "path=pax-name")                                // 0, records at 512
				gnuLong(a, TypeGNULongName, longName)                              // 1024, name at 1536
				a.add(hdr{name: "hdr", size: 3, format: FormatGNU}, []byte("abc")) // 2048
			},
			[]want{{"pax-name", "", TypeReg, 0, 2048, 2560, 2563}},
			3072,
		},
		{
			"GNU long name and long link",
			func(a *archive) {
				gnuLong(a, TypeGNULongName, longName) // 0
				gnuLong(a, TypeGNULongLink, longLink) // 1024
				a.add(hdr{name: "short", linkname: "target", typeflag: TypeSymlink, format: FormatGNU}, nil)
				a.file("next", []byte("x")) // 2560
			},
			[]want{
				{longName, longLink, TypeSymlink, 0, 2048, 2560, 2560},
				{"next", "", TypeReg, 2560, 2560, 3072, 3073},
			},
			3584,
		},
		{
			"a later pax header replaces an earlier one",
			func(a *archive) {
				a.pax(TypeXHeader, "path=first", "linkpath=first-link") // 0
				a.pax(TypeXHeader, "path=second")                       // 1024
				a.add(hdr{name: "hdr", linkname: "hdr-link", typeflag: TypeLink, format: FormatUSTAR}, nil)
			},
			[]want{{"second", "hdr-link", TypeLink, 0, 2048, 2560, 2560}},
			2560,
		},
		{
			// GNU tar, bsdtar, busybox and Python apply the pax header across
			// the global one (archive/tar drops it). The global header is
			// listed too, so the member's chain encloses it.
			"pax header, then global header, then member",
			func(a *archive) {
				a.pax(TypeXHeader, "path=local")        // 0
				a.pax(TypeXGlobalHeader, "comment=all") // 1024
				a.file("m", []byte("x"))                // 2048
			},
			[]want{
				{"PaxHeaders/x", "", TypeXGlobalHeader, 1024, 1024, 1536, 1536},
				{"local", "", TypeReg, 0, 2048, 2560, 2561},
			},
			3072,
		},
		{
			"global header named by its path record",
			func(a *archive) {
				a.pax(TypeXGlobalHeader, "path=global-name", "mtime=5") // 0
				a.file("m", []byte("x"))                                // 1024
			},
			[]want{
				{"global-name", "", TypeXGlobalHeader, 0, 0, 512, 512},
				{"m", "", TypeReg, 1024, 1024, 1536, 1537},
			},
			2048,
		},
		{
			// GNU tar names its global headers $TMPDIR/GlobalHead.<pid>.<n>,
			// which a long TMPDIR puts partly in the ustar prefix.
			"global header named by its ustar prefix and name",
			func(a *archive) {
				recs := paxRecord("comment=x")
				a.add(hdr{name: "GlobalHead.7.1", prefix: "tmp/dir", typeflag: TypeXGlobalHeader, size: int64(len(recs)), format: FormatUSTAR}, []byte(recs))
			},
			[]want{{"tmp/dir/GlobalHead.7.1", "", TypeXGlobalHeader, 0, 0, 512, 512}},
			1024,
		},
		{
			"extension header with no member after it",
			func(a *archive) {
				a.file("m", nil)                  // 0
				a.pax(TypeXHeader, "path=orphan") // 512
			},
			[]want{{"m", "", TypeReg, 0, 0, 512, 512}},
			1536,
		},
		{
			"ustar prefix, v7 directory, header-only sizes",
			func(a *archive) {
				a.add(hdr{name: "name", prefix: "pre/fix", size: 1, format: FormatUSTAR}, []byte("!")) // 0
				a.add(hdr{name: "old/", typeflag: TypeRegA, format: FormatV7}, nil)                    // 1024
				a.add(hdr{name: "v7file", typeflag: TypeRegA, size: 2, format: FormatV7}, []byte("hi"))
				// A directory's size field is not a payload.
				a.add(hdr{name: "dir/", typeflag: TypeDir, size: 4096, format: FormatUSTAR}, nil) // 2560
				a.file("last", nil)                                                               // 3072
			},
			[]want{
				{"pre/fix/name", "", TypeReg, 0, 0, 512, 513},
				{"old/", "", TypeDir, 1024, 1024, 1536, 1536},
				{"v7file", "", TypeReg, 1536, 1536, 2048, 2050},
				{"dir/", "", TypeDir, 2560, 2560, 3072, 3072},
				{"last", "", TypeReg, 3072, 3072, 3584, 3584},
			},
			3584,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a archive
			tt.build(&a)
			data := a.end()
			for _, s := range strategies {
				got, end, err := scanBytes(data, Options{Strategy: s})
				if err != nil {
					t.Fatalf("%v: %v", s, err)
				}
				if len(got) != len(tt.want) || end != tt.end {
					t.Fatalf("%v: %v, end %d; want %d members, end %d", s, got, end, len(tt.want), tt.end)
				}
				for i, w := range tt.want {
					m := got[i]
					if m.Name != w.name || m.Linkname != w.link || m.Typeflag != w.typeflag || m.FirstOffset != w.first ||
						m.HeaderOffset != w.header || m.DataOffset != w.data || m.DataOffset+m.Size != w.end {
						t.Errorf("%v: member %d = %v\nwant %+v", s, i, m, w)
					}
				}
			}
		})
	}
}
