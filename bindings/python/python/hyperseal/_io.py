"""``hyperseal.open``: encrypted files as Python binary file objects, over the native ``Reader``
(the library's random-access ``Decryptor::into_reader``) and ``Writer`` (``wrap_output`` onto the
nothing-lost ``AtomicOutput`` for a path). No format logic here: only the ``io`` protocol."""

import io
import os

from ._hyperseal import Reader, Writer


class DecryptingReader(io.RawIOBase):
    """A read-only, seekable (when the input seeks and is not armored) file object of
    authenticated plaintext. Seekable inputs have their final chunk authenticated at open, so
    ``seek(0, 2)`` gives the trusted length and a file cut short fails before any byte is read;
    every other chunk is authenticated before its bytes are returned."""

    def __init__(self, source, identities=None, *, passphrase=None, threads=0, allow_plugins=False):
        super().__init__()
        self._r = Reader(source, identities, passphrase=passphrase, threads=threads, allow_plugins=allow_plugins)
        self.name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
        self.mode = "rb"

    def readable(self):
        return True

    def readinto(self, buf):
        self._checkClosed()
        return self._r.readinto(buf)

    def seekable(self):
        return not self.closed and self._r.seekable()

    def seek(self, offset, whence=io.SEEK_SET):
        self._checkClosed()
        return self._r.seek(offset, whence)

    def tell(self):
        self._checkClosed()
        return self._r.tell()

    @property
    def size(self):
        """The plaintext length (authenticated), or None when the input cannot seek."""
        return self._r.size

    def close(self):
        if not self.closed:
            self._r.close()
        super().close()


class EncryptingWriter(io.RawIOBase):
    """A write-only file object that encrypts. For a path, the file appears under its name only
    when ``close()`` succeeds; leaving a ``with`` block by an exception (or calling
    ``abort()``) discards it, and nothing appears. For a file object, ``close()`` writes the
    final chunk and leaves the object open (its owner closes it)."""

    def __init__(self, target, recipients=None, *, passphrase=None, format="hyperseal", suite=None,
                 force=False, threads=0, allow_plugins=False):
        super().__init__()
        self._w = Writer(target, recipients, passphrase=passphrase, format=format, suite=suite,
                         force=force, threads=threads, allow_plugins=allow_plugins)
        self.name = os.fspath(target) if isinstance(target, (str, os.PathLike)) else getattr(target, "name", None)
        self.mode = "wb"

    def writable(self):
        return True

    def write(self, data):
        self._checkClosed()
        return self._w.write(data)

    def abort(self):
        """Discards the file (a path's file never appears) and closes."""
        self._w.abort()
        super().close()

    def close(self):
        if not self.closed:
            try:
                self._w.close()
            finally:
                super().close()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    def __del__(self):
        # An unclosed writer is abandoned work: never publish it from the garbage collector.
        if hasattr(self, "_w") and not self.closed:
            self.abort()


def open(file, mode="rb", *, recipients=None, identities=None, passphrase=None, format="hyperseal",
         suite=None, force=False, buffering=-1, threads=0, allow_plugins=False):
    """Opens an encrypted file for reading (``"rb"``) or writing (``"wb"``).

    ``file`` is a path (``str`` or ``os.PathLike``) or a binary file object (``open(..., "rb")``,
    ``io.BytesIO``, an fsspec file). Reading takes ``identities`` (or ``passphrase``) and
    returns a seekable file object when the input seeks; writing takes ``recipients`` (or
    ``passphrase``), ``format`` ("hyperseal" or "age") and ``suite``, and refuses to replace
    an existing file unless ``force=True``::

        me = hyperseal.generate_key()
        with hyperseal.open("data.bin.hs", "wb", recipients=me.public) as f:
            f.write(b"hello, world")
        with hyperseal.open("data.bin.hs", "rb", identities=me) as f:
            f.seek(7)
            assert f.read() == b"world"

    ``"xb"`` is ``"wb"`` that never replaces a file, whatever ``force`` says.
    ``buffering=0`` returns the raw object (``io.RawIOBase``); the default wraps a reader in an
    ``io.BufferedReader``. Writers are never buffered outside the library (which holds back at
    most one chunk), so an exception inside ``with`` discards the file rather than publishing it.
    Keys that name an age plugin (which runs ``age-plugin-NAME``) are refused unless
    ``allow_plugins=True``.
    """
    if mode in ("rb", "br"):
        if recipients is not None:
            raise TypeError("reading takes identities= (or passphrase=), not recipients=")
        raw = DecryptingReader(file, identities, passphrase=passphrase, threads=threads, allow_plugins=allow_plugins)
        return raw if buffering == 0 else io.BufferedReader(raw, 1 << 20 if buffering in (-1, 1) else buffering)
    if mode in ("wb", "bw", "xb", "bx"):
        if identities is not None:
            raise TypeError("writing takes recipients= (or passphrase=), not identities=")
        return EncryptingWriter(file, recipients, passphrase=passphrase, format=format, suite=suite,
                                force=force and "x" not in mode, threads=threads, allow_plugins=allow_plugins)
    raise ValueError(f"mode must be 'rb' or 'wb' (encrypted files are binary), not {mode!r}")
