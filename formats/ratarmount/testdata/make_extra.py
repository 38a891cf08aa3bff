#!/usr/bin/python3
"""Writes the extra test shards of formats/ratarmount/testdata: tar
archives with the header forms the conformance shards do not cover.
Every header block is built byte by byte here, so that each shard holds
exactly the fields it is meant to test.

Usage: make_extra.py <testdata dir>
"""
import os
import subprocess
import sys

MTIME = 1577836800
BLOCK = 512


def octal(value, width):
    return b"%0*o\0" % (width - 1, value)


def header(name, *, typeflag=b"0", size=0, mode=0o644, uid=0, gid=0, mtime=MTIME,
           linkname=b"", fmt="ustar", prefix=b"", tail=None):
    """One header block. fmt: ustar, gnu (GNU magic) or v7 (no magic).
    tail: raw bytes for offsets 345..500 (GNU atime/ctime, ...)."""
    b = bytearray(BLOCK)
    b[0:len(name)] = name
    b[100:108] = octal(mode, 8)
    b[108:116] = octal(uid, 8)
    b[116:124] = octal(gid, 8)
    b[124:136] = octal(size, 12)
    b[136:148] = octal(mtime, 12)
    b[156:157] = typeflag
    b[157:157 + len(linkname)] = linkname
    if fmt == "ustar":
        b[257:265] = b"ustar\x0000"
    elif fmt == "gnu":
        b[257:265] = b"ustar  \x00"
    if prefix:
        b[345:345 + len(prefix)] = prefix
    if tail is not None:
        b[345:345 + len(tail)] = tail
    b[148:156] = b" " * 8
    b[148:156] = b"%06o\0 " % sum(b)
    return bytes(b)


def pad(data):
    return data + b"\0" * (-len(data) % BLOCK)


def member(name, data=b"", **kw):
    kw.setdefault("size", len(data))
    return header(name, **kw) + pad(data)


def pax(records, typeflag=b"x", name=b"././@PaxHeader"):
    body = b""
    for key, value in records:
        n = len(key) + len(value) + 3
        length = n + len(str(n))
        if len(str(length)) != len(str(n)):
            length = n + len(str(length))
        body += b"%d %s=%s\n" % (length, key, value)
    return header(name, typeflag=typeflag, size=len(body)) + pad(body)


def gnu_long(typeflag, value):
    data = value + b"\0"
    return header(b"././@LongLink", typeflag=typeflag, size=len(data), fmt="gnu") + pad(data)


def archive(path, parts):
    data = b"".join(parts) + b"\0" * (2 * BLOCK)
    data += b"\0" * (-len(data) % (20 * BLOCK))
    with open(path, "wb") as f:
        f.write(data)


def oddtypes(d):
    archive(os.path.join(d, "train_0000.tar"), [
        member(b"aregfile.txt", b"areg\n", typeflag=b"\0"),           # pre-POSIX regular file
        member(b"v7dir/", typeflag=b"\0", mode=0o755),                  # pre-POSIX directory
        member(b"v7dir/inner.txt", b"inner\n"),
        member(b"fullmode.bin", b"full\n", mode=0o100644),             # type bits in the mode field
        member(b"chardev", typeflag=b"3", mode=0o620),
        member(b"blockdev", typeflag=b"4", mode=0o660),
        member(b"fifo", typeflag=b"6", mode=0o600),
        member(b"contig.bin", b"con", typeflag=b"7"),
        header(b"hardlink", typeflag=b"1", linkname=b"aregfile.txt", size=5),  # size field, no payload
        header(b"dirsize/", typeflag=b"5", mode=0o755, size=512),     # size field, no payload
        member(b"volume", b"vol", typeflag=b"V", fmt="gnu"),           # type unknown to tarfile
        member(b"../escape.txt", b"esc\n"),
        member(b"./dot/./slash//name.txt", b"dots\n"),
        member(b"/abs/path.txt", b"abs\n"),
        member(b"./", typeflag=b"5", mode=0o755),
        member(b"shadow", b"file\n"),
        member(b"shadow/child.txt", b"child\n"),
        member(b"late/x.txt", b"x\n"),
        member(b"late/", typeflag=b"5", mode=0o750),
        member(b"gnutimes.txt", b"gnu\n", fmt="gnu", tail=b"13666753432\x0013666377326\x00"),
        member(b"v7file.txt", b"v7\n", fmt="v7", typeflag=b"\0"),
        member(b"trail.txt", b"end\n", mtime=MTIME + 1, uid=1000, gid=100),
    ])


def paxmeta(d):
    archive(os.path.join(d, "train_0000.tar"), [
        pax([(b"comment", b"global"), (b"mtime", b"1600000000"),
             (b"SCHILY.xattr.user.global", b"g1")], typeflag=b"g", name=b"pax_global_header"),
        member(b"plain.txt", b"plain\n"),
        pax([(b"mtime", b"1577836800.123456789")]),
        member(b"frac.txt", b"frac\n"),
        pax([(b"mtime", b"-1.5")]),
        member(b"neg.txt", b"neg\n"),
        pax([(b"uid", b"3000000000"), (b"gid", b"4000000000")]),
        member(b"bigid.txt", b"ids\n"),
        pax([(b"path", b"")]),
        member(b"hdrname.txt", b"emptypath\n"),
        pax([(b"linkpath", b"")]),
        header(b"emptylink", typeflag=b"2", linkname=b"hdrtarget", mode=0o777),
        pax([(b"SCHILY.xattr.user.comment", b"hello"),
             (b"SCHILY.xattr.security.selinux", b"system_u:object_r:tmp_t:s0\0"),
             (b"LIBARCHIVE.xattr.user.%41b", b"aGVsbG8"),
             (b"LIBARCHIVE.xattr.user.comment", b"d29ybGQ=")]),
        member(b"xattr.txt", b"xattr\n"),
        pax([(b"path", b"first.txt"), (b"path", b"second.txt")]),
        member(b"hdr-dup.txt", b"dup\n"),
        pax([(b"SCHILY.xattr.user.comment", b"again")]),
        member(b"sub/xattr2.txt", b"x2\n"),
        pax([(b"path", b"longdir/" + b"p" * 120 + b".txt"), (b"size", b"4")]),
        member(b"hdr-long.txt", b"long"),
        gnu_long(b"L", b"gnudir/" + b"g" * 110 + b".txt"),
        member(b"gnu-trunc", b"gnu\n", fmt="gnu"),
    ])


def paxglobal(d):
    """Global records, which tarfile applies to every member after them,
    below the member's own records and, without an 'x' header, below a
    GNU long name."""
    archive(os.path.join(d, "train_0000.tar"), [
        pax([(b"path", b"global-name.txt"), (b"linkpath", b"global-target"), (b"uid", b"77")],
            typeflag=b"g", name=b"pax_global_header"),
        member(b"hdr1.txt", b"1\n"),
        gnu_long(b"L", b"long/" + b"l" * 100 + b".txt"),
        member(b"trunc1", b"2\n", fmt="gnu"),
        pax([(b"mtime", b"1600000000")]),
        member(b"hdr3.txt", b"3\n"),
        pax([(b"mtime", b"1600000001")]),
        gnu_long(b"L", b"long/" + b"m" * 100 + b".txt"),
        member(b"trunc2", b"4\n", fmt="gnu"),
        header(b"sym1", typeflag=b"2", linkname=b"hdrlink", mode=0o777),
        gnu_long(b"K", b"k" * 120),
        header(b"sym2", typeflag=b"2", linkname=b"trunc", mode=0o777, fmt="gnu"),
        pax([(b"uid", b"88"), (b"path", b"")], typeflag=b"g", name=b"pax_global_header"),
        pax([(b"path", b"own-name.txt")]),
        member(b"hdr5.txt", b"5\n"),
    ])


def badutf8(d):
    archive(os.path.join(d, "train_0000.tar"), [
        member(b"bad\xff.txt", b"ff\n", fmt="gnu"),
        member(b"d\xe9r/f\xc3.txt", b"latin1 dir\n", fmt="gnu"),
        member(b"ok-\xc3\xa9.txt", b"utf8\n", fmt="gnu"),
        member(b"trunc\xe2\x82.txt", b"truncated sequence\n"),
        member(b"surrogate\xed\xa0\x80.txt", b"encoded surrogate\n"),
        header(b"badlink", typeflag=b"2", linkname=b"t\xfe", mode=0o777),
        pax([(b"hdrcharset", b"BINARY"), (b"path", b"pax\xfe/bin.txt")]),
        member(b"pax-bin", b"binary path\n"),
        pax([(b"path", b"pax-\xc3\xbc.txt")]),
        member(b"pax-utf8", b"utf8 path\n"),
    ])


def sparse(d):
    """GNU tar's sparse formats: old GNU ('S' headers) and pax 0.0, 0.1, 1.0."""
    src = os.path.join(d, "src")
    os.makedirs(src, exist_ok=True)
    path = os.path.join(src, "holes.bin")
    with open(path, "wb") as f:
        f.write(b"A" * 700)
        f.seek(30000)
        f.write(b"B" * 100)
        f.seek(70000)
        f.write(b"C" * 10)
    with open(os.path.join(src, "after.txt"), "wb") as f:
        f.write(b"after\n")
    common = ["tar", "-C", src, "--sparse", "--mtime=@%d" % MTIME, "--owner=0", "--group=0",
              "--numeric-owner", "--mode=0644", "--sort=name", "-cf"]
    for name, opts in [("train_0000.tar", ["--format=gnu"]),
                       ("train_0001.tar", ["--format=posix", "--sparse-version=0.0"]),
                       ("train_0002.tar", ["--format=posix", "--sparse-version=0.1"]),
                       ("train_0003.tar", ["--format=posix", "--sparse-version=1.0"])]:
        pax_opts = ["--pax-option=delete=atime,delete=ctime"] if "--format=posix" in opts else []
        subprocess.run(common + [os.path.join(d, name)] + opts + pax_opts + ["holes.bin", "after.txt"],
                       check=True)
    for f in os.listdir(src):
        os.remove(os.path.join(src, f))
    os.rmdir(src)


def main():
    out = sys.argv[1]
    for case, make in [("oddtypes", oddtypes), ("paxmeta", paxmeta), ("badutf8", badutf8), ("paxglobal", paxglobal),
                       ("sparse_gnutar", sparse)]:
        d = os.path.join(out, case)
        os.makedirs(d, exist_ok=True)
        make(d)


if __name__ == "__main__":
    main()
