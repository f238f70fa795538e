"""Detached headers, as age 1.3 defines them: open a file's header on one machine (where the
identities are) and its payload on another (where the data is), so neither the identities nor
the data travel::

    import hyperseal
    from hyperseal import header

    head = header.extract("big.age")                 # the header bytes, as age's ExtractHeader
    key = header.decrypt(head, identity)             # where the identity is: age's DecryptHeader
    plain = header.decrypt_with_file_key(data, key)  # where the data is

:func:`extract` takes a path (only the header is read) or the file's bytes; armored files are
refused, as age refuses them. :func:`decrypt` takes identities and ``passphrase=`` as
:func:`hyperseal.decrypt` does. A :class:`FileKey` is an identity to every decrypt function
(``hyperseal.decrypt_file(src, dst, key)``, ``hyperseal.open(path, identities=key)``), and the
header MAC is still checked with it, so a key of another file fails. ``FileKey(raw)`` and
``key.expose()`` carry it between machines as 16 (age) or 32 (hyperseal) bytes: keep track of
which file a key opens, and use it for nothing else.
"""

from ._hyperseal import FileKey
from ._hyperseal import decrypt as _decrypt
from ._hyperseal import header_decrypt as decrypt
from ._hyperseal import header_extract as extract

__all__ = ["FileKey", "decrypt", "decrypt_with_file_key", "extract"]


def decrypt_with_file_key(data, file_key: FileKey, *, threads: int = 0) -> bytes:
    """Decrypts a whole file (binary or armored) with the file key of its header: the same as
    ``hyperseal.decrypt(data, file_key)``."""
    return _decrypt(data, file_key, threads=threads)
