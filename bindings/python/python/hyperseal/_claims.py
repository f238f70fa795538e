"""Claim stores for :meth:`hyperseal.parts.PartKey.seal_claimed`: the library records the plan
and every sealed part here before the sealed bytes are released, so no part is sealed twice
with different bytes under one key (``parts::claim`` in the library says why and how).

A store needs one operation, ``put_new(name, record)``: store ``record`` under ``name`` only if
the name is new, atomically, and return ``None`` — or return the record already there. Two
implementations, for where :mod:`hyperseal.dask` puts its outputs:

* :class:`LocalClaims`, a directory on a filesystem every worker sees: the record is written
  to a private temporary name and hard-linked to its name (``link(2)`` fails if the name
  exists), so a record appears whole or not at all and exactly one of two racing writers wins.
* :class:`FsspecClaims`, a folder on an fsspec filesystem, created with mode ``"xb"``: on s3fs
  a ``PutObject`` with ``If-None-Match: *`` (the server refuses a second one with 412). Other
  backends are as atomic as their ``"xb"``; ``memory://`` is for tests in one process.
"""

import os
import posixpath
import secrets
import time


class LocalClaims:
    """Claims as files in ``directory`` (created, mode 0700, by :meth:`create`)."""

    def __init__(self, directory):
        self.directory = directory

    @classmethod
    def create(cls, directory):
        os.mkdir(directory, 0o700)
        return cls(directory)

    def put_new(self, name, record):
        path = os.path.join(self.directory, name)
        tmp = os.path.join(self.directory, f".{name}.{secrets.token_hex(6)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, record)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
            return None
        except FileExistsError:
            with open(path, "rb") as f:
                return f.read()
        finally:
            os.unlink(tmp)

    def remove(self):
        import shutil

        shutil.rmtree(self.directory, ignore_errors=True)


class FsspecClaims:
    """Claims as objects under ``url`` (an fsspec URL of a folder)."""

    def __init__(self, url):
        self.url = url

    def _fs(self):
        import fsspec

        return fsspec.core.url_to_fs(self.url)

    def put_new(self, name, record):
        fs, root = self._fs()
        path = posixpath.join(root, name)
        for attempt in range(5):
            try:
                with fs.open(path, "xb") as f:
                    f.write(record)
                return None
            except FileExistsError:
                pass
            except OSError as e:
                # s3fs names a refused If-None-Match FileExistsError only when the server says
                # which condition failed; a 409 (a concurrent conditional write) is retried.
                if not fs.exists(path):
                    if "Conflict" in str(e) and attempt < 4:
                        time.sleep(0.05 * (attempt + 1))
                        continue
                    raise
            fs.invalidate_cache(path)
            return fs.cat_file(path)
        raise OSError(f"cannot claim {name} under {self.url}")

    def remove(self):
        fs, root = self._fs()
        if fs.exists(root):
            fs.rm(root, recursive=True)
