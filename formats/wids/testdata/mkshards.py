#!/usr/bin/env python3
"""Writes the crafted shards of this directory, header fields byte by byte
(names, type flags and size fields no tar writer would write), for the
cases of wids' own reading of tar headers. Usage: mkshards.py <dir>."""
import os
import sys


def header(name, size=0, typeflag=b"0", sizefield=None, linkname=b""):
    b = bytearray(512)
    b[0:len(name)] = name
    b[100:108] = b"0000644\x00"  # mode
    b[108:116] = b"0000000\x00"  # uid
    b[116:124] = b"0000000\x00"  # gid
    field = sizefield if sizefield is not None else b"%011o\x00" % size
    assert len(field) == 12
    b[124:136] = field
    b[136:148] = b"13770000000\x00"  # mtime
    b[156:157] = typeflag
    b[157:157 + len(linkname)] = linkname
    b[257:265] = b"ustar\x0000"
    b[148:156] = b" " * 8
    b[148:156] = b"%06o\x00 " % sum(b)
    return bytes(b)


def member(name, data=b"", **kw):
    return header(name, len(data), **kw) + data + bytes(-len(data) % 512)


def pax(records):
    body = b""
    for k, v in records:
        rec = b" %s=%s\n" % (k, v)
        n = len(rec)
        while len(b"%d" % n) + len(rec) != n:
            n = len(b"%d" % n) + len(rec)
        body += b"%d" % n + rec
    return member(b"././@PaxHeader", body, typeflag=b"x")


def write(path, parts):
    data = b"".join(parts) + bytes(1024)
    data += bytes(-len(data) % 10240)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


root = sys.argv[1]
x = lambda n: b"x" * n

write(f"{root}/raw_names/train_0000.tar", [
    member(b"s1.jpg", x(3)),
    member(b"s1.cls", x(1), typeflag=b"\x00"),   # pre-POSIX regular file
    member(b"c7.jpg", x(2), typeflag=b"7"),      # contiguous file
    member(b"j.jpg\x00zz", x(1)),                # bytes after the name's NUL
    member(b"j.cls", x(1)),
    member(b"\x00lead.jpg", x(4)),               # a NUL before the name
    member(b"nl.jpg\n", x(5)),                   # a line break at its end
    member(b"././@PaxHeader", b""),
    member(b"d.dir/", typeflag=b"5"),
    member(b"noext", x(6)),
    member(b"a.b/c", x(7)),                      # a dot in the directory only
    member(b".hidden", x(8)),
    member(b"x/.h", x(9)),
    member(b"sp.jpg", x(12), sizefield=b"        14  "),  # spaces around the size
    member(b"h.jpg", typeflag=b"1", linkname=b"s1.jpg"),
    member(b"j.jpg", x(2)),                      # not "j.jpg\0zz"
    member(b"s1.jpg", x(3)),                     # a name again
    member("日本.jpg".encode(), x(3)),
    member(b"s1.txt", x(3)),
])

# A header whose size field is all NUL: the walk ends there.
write(f"{root}/nul_size_stop/train_0000.tar", [
    member(b"a.jpg", x(3)),
    member(b"d/", typeflag=b"5", sizefield=bytes(12)),
    member(b"b.jpg", x(3)),
    member(b"c.jpg", x(3)),
])

# Shards the tool fails on.
write(f"{root}/nonutf8_name/train_0000.tar", [member(b"a.jpg", x(1)), member(b"caf\xe9.jpg", x(1))])
write(f"{root}/nonutf8_after_nul/train_0000.tar", [member(b"a.jpg", x(1)), member(b"ok.jpg\x00\xff", x(1))])
write(f"{root}/nonutf8_symlink/train_0000.tar", [member(b"a.jpg", x(1)), member(b"l\xff", typeflag=b"2", linkname=b"a.jpg")])
write(f"{root}/newline_name/train_0000.tar", [member(b"a.jpg", x(1)), member(b"a\nb.jpg", x(1))])
write(f"{root}/size_nul_terminated/train_0000.tar", [member(b"a.jpg", x(14), sizefield=b"16\x00" + bytes(9))])
write(f"{root}/nul_size_regular/train_0000.tar", [member(b"a.jpg", x(1)), member(b"b.jpg", sizefield=bytes(12))])
write(f"{root}/typeflag_nonascii/train_0000.tar", [member(b"a.jpg", x(1)), member(b"b.jpg", typeflag=b"\xe9")])
# Its walk leaves the archive's structure: a directory with a size, a
# member whose size is a pax record (its field 0, as for 8 GiB and more).
write(f"{root}/dir_with_size/train_0000.tar", [
    header(b"d/", 512, typeflag=b"5"),
    member(b"a.jpg", x(3)),
    member(b"b.jpg", x(3)),
])
write(f"{root}/pax_size/train_0000.tar", [
    pax([(b"size", b"600")]),
    header(b"big.jpg", 0) + x(600) + bytes(-600 % 512),
    member(b"c.jpg", x(3)),
])
