"""Reads the MDS datasets itarconv wrote with MosaicML's own reader, checks
every sample against the members itarconv was given, and records what it
read.

  cd formats/mds && MDS_ORACLE_OUT=/tmp/ours go test -run TestOursReadByMosaic .
  cd testdata/oracle && STREAMING_SRC=<checkout> /usr/bin/python3 read_ours.py /tmp/ours > ours.json

For each dataset it checks each shard file against the hashes the index
records (streaming's get_hash, as StreamingDataset's validate_hash does),
decompresses compressed shards with streaming's decompress (as
StreamingDataset does on download), opens each shard with
MDSReader.from_json and reads every sample with get_item. Each column of a
sample must be the member key.column: str as its UTF-8 bytes, bytes as they
are, int as its decimal text, json as the value the member's bytes parse
to, jpeg and png as the image the member's bytes decode to. It prints the
sha256 of every file it read, and the samples and members it checked (see
mosaic.py for what is stubbed).
"""

import hashlib
import io
import json
import os
import shutil
import sys
import tempfile

from PIL import Image

from mosaic import MDSReader, decompress, get_hash

COMMIT = '89e7bb9082457a59f6efcfa4ef910102e07a9729'


def check_hashes(path, info):
    data = open(path, 'rb').read()
    assert len(data) == info['bytes'], path
    for algo, want in info['hashes'].items():
        assert get_hash(algo, data) == want, (path, algo)
    return data


def same_value(enc, value, member):
    if enc == 'str':
        return value == member.decode('utf-8')
    if enc == 'bytes':
        return value == member
    if enc == 'int':
        return str(value).encode() == member
    if enc == 'json':
        return value == json.loads(member)
    if enc in ('jpeg', 'png'):
        want = Image.open(io.BytesIO(member))
        return value.size == want.size and value.mode == want.mode and value.tobytes() == want.tobytes()
    raise ValueError('unexpected encoding ' + enc)


def read(d):
    members = json.load(open(d + '.members.json'))['members']
    files = {}
    for name in sorted(os.listdir(d)):
        files[name] = hashlib.sha256(open(os.path.join(d, name), 'rb').read()).hexdigest()
    index = json.load(open(os.path.join(d, 'index.json')))
    work = tempfile.mkdtemp()
    samples = 0
    checked = 0
    it = iter(members)
    for shard in index['shards']:
        raw = shard['raw_data']
        if shard['zip_data']:
            z = shard['zip_data']
            data = decompress(shard['compression'], check_hashes(os.path.join(d, z['basename']), z))
            open(os.path.join(work, raw['basename']), 'wb').write(data)
            check_hashes(os.path.join(work, raw['basename']), raw)
        else:
            shutil.copy(os.path.join(d, raw['basename']), work)
            check_hashes(os.path.join(work, raw['basename']), raw)
        reader = MDSReader.from_json(work, '', shard)
        encs = dict(zip(shard['column_names'], shard['column_encodings']))
        for idx in range(shard['samples']):
            sample = reader.get_item(idx)
            samples += 1
            key = sample['__key__']
            if isinstance(key, bytes):
                key = key.decode('utf-8', 'surrogateescape')
            for col in shard['column_names']:
                if col == '__key__':
                    continue
                name, digest = next(it)
                assert name.encode('utf-8', 'surrogateescape') == (key + '.' + col).encode('utf-8', 'surrogateescape'), (name, key, col)
                member = MEMBERS[name] if name in MEMBERS else None
                assert member is not None and hashlib.sha256(member).hexdigest() == digest, name
                assert same_value(encs[col], sample[col], member), (d, name, encs[col])
                checked += 1
    assert next(it, None) is None, 'members left unread'
    shutil.rmtree(work)
    return {'files': files, 'samples': samples, 'members': checked}


# The members' bytes, rebuilt as the Go test builds them (oursInput).
def members_of_input():
    jpg = open('in.jpg', 'rb').read()
    png = open('in.png', 'rb').read()
    m = {}
    for n in range(24):
        s = n // 12
        key = 'part%d/sample-%03d' % (s, n)
        if n == 5:
            key = 'part0/échantillon-005'
        cls = str(n % 10) if n != 15 else '07'
        txt = ('caption %d' % n).encode() if n != 20 else b'\xff\xfex'
        js = '{"n": %d, "tags": ["a", "b"]}' % n if n != 9 else '{"n": NaN-ish'
        m[key + '.bin'] = bytes([n]) * (n * 37)
        m[key + '.cls'] = cls.encode()
        m[key + '.jpg'] = jpg
        m[key + '.json'] = js.encode()
        if n >= 18:
            m[key + '.png'] = png
        m[key + '.txt'] = txt
    # largeInput: shards past the 4 MiB itarconv holds in memory.
    for n in range(300):
        key = 'big/%05d' % n
        m[key + '.bin'] = bytes([n % 256]) * 30720
        m[key + '.cls'] = str(n).encode()
    return m


MEMBERS = members_of_input()

if __name__ == '__main__':
    out = sys.argv[1]
    result = {'reader': 'mosaicml/streaming %s MDSReader.get_item' % COMMIT, 'datasets': {}}
    for name in sorted(os.listdir(out)):
        if os.path.isdir(os.path.join(out, name)):
            result['datasets'][name] = read(os.path.join(out, name))
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()
