import io
import os
from collections.abc import Buffer
from typing import IO, Literal, overload

from ._hyperseal import _Format, _Identities, _Passphrase, _Recipients, _Suite

class DecryptingReader(io.RawIOBase):
    name: str | None
    mode: str
    def __init__(self, source: str | os.PathLike[str] | IO[bytes], identities: _Identities | None = None, *,
                 passphrase: _Passphrase | None = None, threads: int = 0, allow_plugins: bool = False) -> None: ...
    def readinto(self, buf: Buffer) -> int: ...
    def seek(self, offset: int, whence: int = 0) -> int: ...
    def tell(self) -> int: ...
    @property
    def size(self) -> int | None: ...

class EncryptingWriter(io.RawIOBase):
    name: str | None
    mode: str
    def __init__(self, target: str | os.PathLike[str] | IO[bytes], recipients: _Recipients | None = None, *,
                 passphrase: _Passphrase | None = None, format: _Format = "hyperseal", suite: _Suite | None = None,
                 force: bool = False, threads: int = 0, allow_plugins: bool = False) -> None: ...
    def write(self, data: Buffer) -> int: ...
    def abort(self) -> None: ...

@overload
def open(file: str | os.PathLike[str] | IO[bytes], mode: Literal["rb", "br"] = "rb", *,
         recipients: None = None, identities: _Identities | None = None, passphrase: _Passphrase | None = None,
         format: _Format = "hyperseal", suite: _Suite | None = None, force: bool = False,
         buffering: int = -1, threads: int = 0, allow_plugins: bool = False) -> io.BufferedReader | DecryptingReader: ...
@overload
def open(file: str | os.PathLike[str] | IO[bytes], mode: Literal["wb", "bw", "xb", "bx"], *,
         recipients: _Recipients | None = None, identities: None = None, passphrase: _Passphrase | None = None,
         format: _Format = "hyperseal", suite: _Suite | None = None, force: bool = False,
         buffering: int = -1, threads: int = 0, allow_plugins: bool = False) -> EncryptingWriter: ...
