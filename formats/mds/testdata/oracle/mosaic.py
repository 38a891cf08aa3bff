"""Loads MosaicML Streaming's MDS writer and reader from its source, without
its package's imports (torch, cloud storage clients).

STREAMING_SRC names a checkout of github.com/mosaicml/streaming (tested at
89e7bb9082457a59f6efcfa4ef910102e07a9729, 0.14.0.dev0). Python packages from
Debian: python3-numpy, python3-pil, python3-zstd, python3-brotli,
python3-snappy, python3-xxhash, python3-typing-extensions.

Stubbed, because they cannot be installed here and the MDS code paths used
do not need them:
  - streaming.base.util (imports torch.distributed): only bytes_to_int is
    used, for size_limit, which these scripts give as an int.
  - streaming.base.storage.upload (cloud clients): CloudUploader only names
    the local output directory; nothing is uploaded.
Every other module (mds/writer.py, mds/reader.py, mds/encodings.py,
base/writer.py, base/reader.py, compression.py, hashing.py, array.py) is
MosaicML's own, loaded from the checkout.
"""

import os
import sys
import types

SRC = os.environ.get('STREAMING_SRC', '/tmp/mds-streaming')


def _package(name, rel):
    m = types.ModuleType(name)
    m.__path__ = [os.path.join(SRC, rel)]
    sys.modules[name] = m


for name in ['streaming', 'streaming.base', 'streaming.base.format',
             'streaming.base.format.base', 'streaming.base.format.mds',
             'streaming.base.storage']:
    _package(name, name.replace('.', '/'))

util = types.ModuleType('streaming.base.util')


def bytes_to_int(v):
    # Stub: the scripts pass size_limit as an int.
    return int(v)


util.bytes_to_int = bytes_to_int
sys.modules['streaming.base.util'] = util

upload = types.ModuleType('streaming.base.storage.upload')


class CloudUploader:
    # Stub: a local directory, nothing uploaded.
    @classmethod
    def get(cls, out, keep_local=False, progress_bar=False, retry=2, exist_ok=False):
        u = cls()
        u.local = out
        u.remote = None
        os.makedirs(out, exist_ok=True)
        return u

    def upload_file(self, filename):
        pass


upload.CloudUploader = CloudUploader
sys.modules['streaming.base.storage.upload'] = upload

from streaming.base.format.mds.writer import MDSWriter  # noqa: E402
from streaming.base.format.mds.reader import MDSReader  # noqa: E402
from streaming.base.format.mds.encodings import mds_encode  # noqa: E402
from streaming.base.compression import decompress  # noqa: E402
from streaming.base.hashing import get_hash  # noqa: E402

__all__ = ['MDSWriter', 'MDSReader', 'mds_encode', 'decompress', 'get_hash']
