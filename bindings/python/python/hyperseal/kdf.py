"""Key derivation, as the Node package's ``kdf`` namespace: the password KDFs (PBKDF2,
Argon2id, scrypt: slow on purpose, always with the GIL released) and HKDF::

    from hyperseal import kdf
    key = kdf.argon2id("correct horse", salt, length=32)      # 19 MiB, 2 passes by default
    key = kdf.pbkdf2(b"pw", salt, iterations=600_000, hash="sha256")
    key = kdf.scrypt(b"pw", salt, cost=2**17, block_size=8, parallelization=1)
    okm = kdf.hkdf(ikm, salt=b"", info=b"context", length=32, hash="sha512")

Passwords, salts and HKDF inputs may be bytes-like or ``str`` (UTF-8). Password KDFs need a
salt of at least 8 bytes and return 1 to 1024 bytes; out-of-range parameters raise
:class:`hyperseal.ArgumentError`.
"""

from ._hyperseal import kdf_argon2id as argon2id
from ._hyperseal import kdf_hkdf as hkdf
from ._hyperseal import kdf_pbkdf2 as pbkdf2
from ._hyperseal import kdf_scrypt as scrypt

__all__ = ["argon2id", "hkdf", "pbkdf2", "scrypt"]
