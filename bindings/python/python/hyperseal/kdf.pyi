from collections.abc import Buffer
from typing import Literal

_Data = Buffer | str
_Hash = Literal["sha256", "sha512"]

def pbkdf2(
    password: _Data, salt: _Data, *, iterations: int = 600_000, hash: _Hash = "sha256", length: int = 32
) -> bytes:
    """PBKDF2-HMAC (RFC 8018): ``iterations`` 1 to 10,000,000 (OWASP's 600,000 by default),
    over SHA-256 or SHA-512; the salt must be at least 8 bytes."""

def argon2id(
    password: _Data,
    salt: _Data,
    *,
    memory_kib: int = 19_456,
    time_cost: int = 2,
    parallelism: int = 1,
    length: int = 32,
) -> bytes:
    """Argon2id v1.3 (RFC 9106), 19 MiB and 2 passes by default (OWASP's minimum); memory at
    most 4 GiB. The salt must be at least 8 bytes."""

def scrypt(
    password: _Data,
    salt: _Data,
    *,
    cost: int = 131_072,
    block_size: int = 8,
    parallelization: int = 1,
    length: int = 32,
) -> bytes:
    """scrypt (RFC 7914): ``cost`` is N, a power of two (2**17 by default: 128 MiB with r=8);
    memory is capped at 4 GiB. The salt must be at least 8 bytes."""

def hkdf(ikm: _Data, salt: _Data, info: _Data, length: int, *, hash: _Hash = "sha256") -> bytes:
    """HKDF (RFC 5869) extract-and-expand: ``length`` bytes, 1 to 255 × the hash length. Fast:
    keeps the GIL."""
