"""hyperseal: fast, safe encryption on every core.

Hyperseal and age files (post-quantum hybrid keys by default, the same keys as age v1.3), as
bytes, files and file objects, and C2SP chunked encryption (:mod:`hyperseal.c2sp`,
byte-compatible with pyca/cryptography's ``cryptography.cobblestone``)::

    import hyperseal
    me = hyperseal.generate_key()                  # ML-KEM-768 + X25519
    sealed = hyperseal.encrypt(b"secret", me.public)
    assert hyperseal.decrypt(sealed, me) == b"secret"

    hyperseal.encrypt_file("report.pdf", "report.pdf.hs", me.public)
    with hyperseal.open("report.pdf.hs", "rb", identities=me) as f:
        f.seek(-100, 2)                            # random access, authenticated
        tail = f.read()

Recipients and identities may also be the strings the ``hyperseal`` CLI prints and reads
(``age1pq1...``, ``AGE-SECRET-KEY-...``, PEM). Long calls release the GIL and use every core.
Failures raise :class:`hyperseal.Error` subclasses carrying the Node package's ``code``.
:mod:`hyperseal.fsspec` reads and writes encrypted files on any fsspec filesystem;
:mod:`hyperseal.dask` encrypts many files on a Dask cluster. :func:`rekey_file` and
:func:`rekey_bytes` change who can open a file without re-encrypting it (S3 objects included).

The toolkit, with the Node package's names: :func:`hash`, :func:`hash_file`, :func:`hmac`,
:func:`hmac_verify`, and the modules :mod:`hyperseal.kdf`, :mod:`hyperseal.aead`,
:mod:`hyperseal.sign` and :mod:`hyperseal.token`.
"""

from . import aead, c2sp, header, kdf, rekey, sign, token
from ._errors import *  # noqa: F403 (one class per library error code)
from ._errors import ERROR_CODES, AlreadyFinalized, Error
from ._errors import __all__ as _error_names
from ._hyperseal import (
    AgentIdentity,
    Identity,
    Opener,
    Sealer,
    __version__,
    decrypt,
    decrypt_file,
    encrypt,
    encrypt_file,
    generate_key,
    hash,  # noqa: A004 (the Node package's name; hyperseal.hash, never the builtin)
    hash_file,
    hmac,
    hmac_verify,
    public_of,
)
from ._io import DecryptingReader, EncryptingWriter, open
from .rekey import RekeyResult, rekey_bytes, rekey_file, rekey_tree

__all__ = [
    *_error_names,
    "AgentIdentity",
    "DecryptingReader",
    "EncryptingWriter",
    "Identity",
    "Opener",
    "Sealer",
    "__version__",
    "aead",
    "c2sp",
    "decrypt",
    "decrypt_file",
    "encrypt",
    "encrypt_file",
    "generate_key",
    "hash",
    "hash_file",
    "header",
    "hmac",
    "hmac_verify",
    "kdf",
    "open",
    "public_of",
    "rekey",
    "rekey_bytes",
    "rekey_file",
    "rekey_tree",
    "RekeyResult",
    "sign",
    "token",
]
