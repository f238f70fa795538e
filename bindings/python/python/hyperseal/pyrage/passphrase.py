"""pyrage's ``passphrase``: age files under a passphrase (scrypt, age's work factor)."""

from .. import _errors as _hs
from .. import _hyperseal
from ._errors import decrypt_error, encrypt_error

__all__ = ["decrypt", "encrypt"]


def encrypt(plaintext: bytes, passphrase: str, armored: bool = False) -> bytes:
    try:
        return _hyperseal.encrypt(plaintext, passphrase=passphrase, format="age", armor=armored)
    except _hs.Error as e:
        raise encrypt_error(e) from None


def decrypt(ciphertext: bytes, passphrase: str, armored: bool = False) -> bytes:
    """Armored input is detected whatever ``armored`` says (pyrage takes it and reads both)."""
    try:
        return _hyperseal.decrypt(ciphertext, passphrase=passphrase)
    except _hs.Error as e:
        raise decrypt_error(e) from None
