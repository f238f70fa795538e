"""Encrypted files on any fsspec filesystem (local, memory, S3, GCS, Azure, HDFS, ...):
:class:`HypersealFileSystem` is a chained filesystem (protocol ``hyperseal``) whose files are
hyperseal or age files on the filesystem under it. Reading goes through the library's
random-access reader (:func:`hyperseal.open`), so Parquet readers seek straight to the footer
and every byte they get has authenticated; writing streams through the library's sealer::

    import fsspec, pyarrow.parquet as pq, hyperseal.fsspec

    me = hyperseal.generate_key()
    fs = hyperseal.fsspec.HypersealFileSystem(fsspec.filesystem("s3"),
                                              recipients=me.public, identities=me)
    pq.write_table(table, "bucket/t.parquet.hs", filesystem=fs)
    back = pq.read_table("bucket/t.parquet.hs", filesystem=fs)

    # or as a chained URL (the protocol is registered when hyperseal is installed):
    with fsspec.open("hyperseal::s3://bucket/t.parquet.hs", "rb",
                     hyperseal={"identities": me.secret}) as f:
        back = pq.read_table(f)

Listing, removing and copying are the underlying filesystem's; ``info()`` and ``size()``
report the authenticated plaintext length when identities are given (Parquet readers need it).
A write that fails (or leaves a ``with`` block by an exception) discards its file: an object
store's multipart upload is aborted, other filesystems' partial file is removed.
"""

import fsspec
from fsspec.implementations.chained import ChainedFileSystem

from ._io import DecryptingReader, EncryptingWriter


class _Reader(DecryptingReader):
    """A reader that owns the underlying file and closes it with itself."""

    def __init__(self, f, **kw):
        self._f = f
        try:
            super().__init__(f, **kw)
        except BaseException:
            f.close()
            raise

    def close(self):
        try:
            super().close()
        finally:
            self._f.close()


class _Writer(EncryptingWriter):
    """A writer that owns the underlying file: a clean close commits it, anything else
    discards it."""

    def __init__(self, f, fs, path, **kw):
        self._f, self._fs, self._path = f, fs, path
        try:
            super().__init__(f, **kw)
        except BaseException:
            self._discard()
            raise

    def close(self):
        if self.closed:
            return
        try:
            super().close()  # the final chunk, into the underlying file
            self._f.close()  # the underlying filesystem's commit (an upload's completion)
        except BaseException:
            self._discard()
            raise

    def abort(self):
        super().abort()
        self._discard()

    def _discard(self):
        discard = getattr(self._f, "discard", None)
        try:
            if discard is not None:
                discard()  # object stores: abort the multipart upload, nothing appears
            else:
                self._f.close()
        finally:
            if self._fs.exists(self._path):
                self._fs.rm(self._path)


class HypersealFileSystem(ChainedFileSystem):
    """Hyperseal-encrypted files on the filesystem ``fs`` (or on ``target_protocol`` with
    ``target_options``, as fsspec passes them for a chained URL). ``recipients`` (or
    ``passphrase``) for writing, ``identities`` (or ``passphrase``) for reading; ``format``
    ("hyperseal" or "age") and ``suite`` as for :func:`hyperseal.encrypt`."""

    protocol = "hyperseal"

    def __init__(self, fs=None, *, target_protocol=None, target_options=None, fo=None, recipients=None,
                 identities=None, passphrase=None, format="hyperseal", suite=None, threads=0, **kwargs):
        super().__init__(**kwargs)
        if fs is None:
            fs = fsspec.filesystem(target_protocol or "file", **(target_options or {}))
        self.fs = fs
        self.recipients, self.identities, self.passphrase = recipients, identities, passphrase
        self.format, self.suite, self.threads = format, suite, threads

    def _open(self, path, mode="rb", block_size=None, autocommit=True, cache_options=None, **kwargs):
        if "r" in mode:
            f = self.fs.open(path, "rb")
            return _Reader(f, identities=self.identities, passphrase=self.passphrase, threads=self.threads)
        if "w" in mode or "x" in mode:
            f = self.fs.open(path, mode)
            return _Writer(f, self.fs, path, recipients=self.recipients, passphrase=self.passphrase,
                           format=self.format, suite=self.suite, threads=self.threads)
        raise ValueError(f"mode must be 'rb' or 'wb' for encrypted files, not {mode!r}")

    def info(self, path, **kwargs):
        """The underlying file's info, with ``size`` the plaintext length when this filesystem
        can open it (identities or passphrase given): authenticated, from the final chunk."""
        info = dict(self.fs.info(path, **kwargs))
        if info.get("type") == "file" and (self.identities is not None or self.passphrase is not None):
            with self._open(path, "rb") as f:
                if f.size is not None:
                    info["size"] = f.size
        return info

    def ls(self, path, detail=True, **kwargs):
        entries = self.fs.ls(path, detail=detail, **kwargs)
        if not detail:
            return entries
        return [self.info(e["name"]) if e.get("type") == "file" else e for e in entries]

    # Everything else is the underlying filesystem's.
    def cp_file(self, path1, path2, **kwargs):
        return self.fs.cp_file(path1, path2, **kwargs)

    def _rm(self, path):
        return self.fs._rm(path) if hasattr(self.fs, "_rm") else self.fs.rm_file(path)

    def rm(self, path, recursive=False, maxdepth=None):
        return self.fs.rm(path, recursive=recursive, maxdepth=maxdepth)

    def mkdir(self, path, create_parents=True, **kwargs):
        return self.fs.mkdir(path, create_parents=create_parents, **kwargs)

    def makedirs(self, path, exist_ok=False):
        return self.fs.makedirs(path, exist_ok=exist_ok)

    def rmdir(self, path):
        return self.fs.rmdir(path)

    def exists(self, path, **kwargs):
        return self.fs.exists(path, **kwargs)

    def created(self, path):
        return self.fs.created(path)

    def modified(self, path):
        return self.fs.modified(path)


fsspec.register_implementation("hyperseal", HypersealFileSystem, clobber=True)

__all__ = ["HypersealFileSystem"]
