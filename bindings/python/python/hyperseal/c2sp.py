"""C2SP chunked encryption (https://c2sp.org/chunked-encryption) as pyca/cryptography
instantiates it: a 16-byte key is Cobblestone-128 (HKDF-SHA-512, AES-128-GCM), a 32-byte key
Cobblestone-256 (AES-256-GCM). Messages are byte-compatible with ``cryptography.cobblestone``
in both directions, and the classes have pyca's names and methods, so this is a drop-in::

    from hyperseal.c2sp import Cobblestone256Encryptor, Cobblestone256Decryptor
    key = Cobblestone256Encryptor.generate_key()
    enc = Cobblestone256Encryptor(key, b"context")
    sealed = enc.update(b"data") + enc.finalize()
    dec = Cobblestone256Decryptor(key, b"context")
    assert dec.update(sealed) + dec.finalize() == b"data"

:class:`Encryptor`/:class:`Decryptor` take either key size, an optional context and
``threads=`` (default: every core); :func:`encrypt`/:func:`decrypt` do a whole message at
once. Failures raise :class:`hyperseal.AuthenticationError`; use after ``finalize()`` (or after
a failure) raises :class:`hyperseal.AlreadyFinalized`.
"""

from ._hyperseal import C2spDecryptor as Decryptor
from ._hyperseal import C2spEncryptor as Encryptor
from ._hyperseal import c2sp_decrypt as decrypt
from ._hyperseal import c2sp_encrypt as encrypt
from ._errors import InvalidKeyError


def generate_key(bits: int = 256) -> bytes:
    """A fresh random key: 32 bytes (Cobblestone-256) or, with bits=128, 16 bytes."""
    return Encryptor.generate_key(bits)


def _fixed(base, bits, name):
    """A subclass of ``base`` that accepts only ``bits``-bit keys, named as pyca names it."""
    size = bits // 8

    def __new__(cls, key, context, *, threads=None):
        if len(memoryview(key).cast("B")) != size:
            raise InvalidKeyError(f"key must be {size} bytes.")
        return base.__new__(cls, key, context, threads=threads)

    attrs = {"__new__": __new__, "__doc__": f"pyca's {name}: {bits}-bit keys only.", "__module__": __name__}
    if base is Encryptor:
        attrs["generate_key"] = staticmethod(lambda: Encryptor.generate_key(bits))
    return type(name, (base,), attrs)


Cobblestone128Encryptor = _fixed(Encryptor, 128, "Cobblestone128Encryptor")
Cobblestone128Decryptor = _fixed(Decryptor, 128, "Cobblestone128Decryptor")
Cobblestone256Encryptor = _fixed(Encryptor, 256, "Cobblestone256Encryptor")
Cobblestone256Decryptor = _fixed(Decryptor, 256, "Cobblestone256Decryptor")

__all__ = [
    "Cobblestone128Decryptor",
    "Cobblestone128Encryptor",
    "Cobblestone256Decryptor",
    "Cobblestone256Encryptor",
    "Decryptor",
    "Encryptor",
    "decrypt",
    "encrypt",
    "generate_key",
]
