"""Writes MDS datasets with MosaicML's own MDSWriter, covering its encodings
and compressions, and beside each the members itarconv must read from it.

Run from this directory: STREAMING_SRC=<checkout> /usr/bin/python3
write_mosaic.py ../mosaic (see mosaic.py for what is stubbed). For each
dataset NAME it writes NAME/ (index.json and shards) and NAME.json: the
members in order, [name, "sha256", hex digest of the bytes] for the columns
read as bytes, [name, "int", decimal] and [name, "float", repr] for numbers.
A dataset without a __key__ column names its samples by their number,
zero-padded to 8 digits.
"""

import hashlib
import io
import json
import os
import shutil
import sys
from decimal import Decimal

import numpy as np
from PIL import Image

from mosaic import MDSWriter, mds_encode

NUMERIC = {'int', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64'}
FLOAT = {'float16', 'float32', 'float64'}


def image(i, mode='RGB'):
    im = Image.new(mode, (4 + i, 3))
    for x in range(4 + i):
        for y in range(3):
            im.putpixel((x, y), (x * 40 + i, y * 80, 7 * i) if mode == 'RGB' else (x * 30 + y) % 256)
    return im


def encodings_sample(i):
    return {
        'bytes': bytes(range(i * 3)),
        'str': 'sample %d é ✓ 𝄞' % i,
        'int': -(10 ** 18) + i,
        'int8': -128 + i, 'int16': -30000 + i, 'int32': -(2 ** 31) + i, 'int64': 2 ** 63 - 1 - i,
        'uint8': 255 - i, 'uint16': 65535 - i, 'uint32': 2 ** 32 - 1 - i, 'uint64': 2 ** 64 - 1 - i,
        'float16': np.float16(0.1 * i + 0.5), 'float32': np.float32(1 / 3 + i), 'float64': 1e300 * i + 0.1,
        'json': {'i': i, 'list': [1, 2.5, None, 'x'], 'nested': {'a': True}},
        'jpeg': image(i), 'png': image(i, 'L'), 'pil': image(i),
        'ndarray': np.arange(i + 1, dtype=np.int32).reshape(1, i + 1),
        'ndarray:int16:2,3': np.full((2, 3), i, dtype=np.int16),
        'str_int': 12345678901234567890 + i, 'str_float': 0.25 + i, 'str_decimal': Decimal('1.10') + i,
        'pkl': {'pickled': i}, 'jpeg_array': [mds_encode('jpeg', image(i)), mds_encode('jpeg', image(i + 1))],
        'list[png]': [image(i, 'L'), image(i + 2, 'L')],
    }


def simple_sample(i):
    return {'bytes': os.urandom(0) + bytes([i]) * (100 + i), 'str': 'text %d' % i, 'int': i * 7, 'json': [i, {'k': 'v'}]}


def keyed_sample(i):
    return {'__key__': 'dir/sample%04d' % i, 'jpg': mds_encode('jpeg', image(i)), 'cls': i % 3, 'txt': 'caption %d' % i}


def member(name, enc, value):
    if enc in NUMERIC:
        return [name, 'int', str(int(value))]
    if enc in FLOAT:
        return [name, 'float', repr(float(value))]
    return [name, 'sha256', hashlib.sha256(mds_encode(enc, value)).hexdigest()]


def write(out, name, columns, samples, **kwargs):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    members = []
    with MDSWriter(columns=columns, out=d, **kwargs) as w:
        for i, s in enumerate(samples):
            w.write(s)
            key = s.get('__key__', '%08d' % i)
            for col in sorted(columns):  # MDSWriter's column order
                if col != '__key__':
                    members.append(member(key + '.' + col, columns[col], s[col]))
    with open(d + '.json', 'w') as f:
        json.dump({'members': members}, f, indent=0)


def main(out):
    enc = {k: k for k in encodings_sample(0)}
    write(out, 'encodings', enc, [encodings_sample(i) for i in range(5)], size_limit=1 << 12)
    simple = {'bytes': 'bytes', 'str': 'str', 'int': 'int', 'json': 'json'}
    samples = [simple_sample(i) for i in range(6)]
    write(out, 'plain_sha1', simple, samples, hashes=['md5', 'sha1', 'sha256', 'xxh64'], size_limit=600)
    for comp in ['zstd', 'zstd:7', 'gz', 'bz2', 'snappy', 'br']:
        write(out, 'compressed_' + comp.replace(':', '_'), simple, samples, compression=comp,
              hashes=['sha1', 'xxh3_64', 'xxh64'], size_limit=600)
    write(out, 'keyed', {'__key__': 'str', 'jpg': 'jpeg', 'cls': 'int', 'txt': 'str'},
          [keyed_sample(i) for i in range(4)])


if __name__ == '__main__':
    main(sys.argv[1])


def inputs(out):
    """The images of the rows itarconv writes for read_ours.py (Go's
    encoders may change their bytes from one release to the next)."""
    image(3).save(os.path.join(out, 'in.jpg'), format='JPEG', quality=90)
    image(2, 'L').save(os.path.join(out, 'in.png'), format='PNG')


if __name__ == '__main__' and len(sys.argv) > 2:
    inputs(sys.argv[2])
