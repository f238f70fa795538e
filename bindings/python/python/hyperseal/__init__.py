"""hyperseal: fast, safe encryption on every core.

Hyperseal files (post-quantum hybrid keys by default, the same keys as age v1.3) and C2SP
chunked encryption (:mod:`hyperseal.c2sp`, byte-compatible with pyca/cryptography's
``cryptography.cobblestone``)::

    import hyperseal
    me = hyperseal.generate_key()                  # ML-KEM-768 + X25519
    sealed = hyperseal.encrypt(b"secret", me.public)
    assert hyperseal.decrypt(sealed, me) == b"secret"

Recipients and identities may also be the strings the ``hyperseal`` CLI prints and reads
(``age1pq1...``, ``AGE-SECRET-KEY-...``, PEM). Long calls release the GIL.
"""

from . import c2sp
from ._errors import (
    AlreadyFinalized,
    ArgumentError,
    AuthenticationError,
    Error,
    FormatError,
    InvalidKeyError,
    IoError,
    NoIdentityError,
)
from ._hyperseal import Identity, __version__, decrypt, encrypt, generate_key

__all__ = [
    "AlreadyFinalized",
    "ArgumentError",
    "AuthenticationError",
    "Error",
    "FormatError",
    "Identity",
    "InvalidKeyError",
    "IoError",
    "NoIdentityError",
    "__version__",
    "c2sp",
    "decrypt",
    "encrypt",
    "generate_key",
]
