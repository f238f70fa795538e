from collections.abc import Buffer
from typing import Literal

_Kind = Literal["ed25519", "ecdsa-p256", "rsa2048", "rsa3072", "rsa4096", "ml-dsa-65"]
_Padding = Literal["pss", "pkcs1"]

KINDS: tuple[str, ...]

class KeyPair:
    """A signing key pair as PEM text; ``repr()`` never shows the private key."""
    kind: str
    private_key: str
    public_key: str
    def __init__(self, kind: str, private_key: str, public_key: str) -> None: ...

def generate_key_pair(kind: _Kind = "ed25519") -> KeyPair:
    """A new key pair (PKCS#8 private PEM, SPKI public PEM)."""

def sign(private_key: str, data: Buffer | str, *, padding: _Padding | None = None) -> bytes:
    """The signature of ``data``; ``padding`` applies to RSA keys only (default ``"pss"``)."""

def verify(public_key: str, data: Buffer | str, signature: Buffer, *, padding: _Padding | None = None) -> bool:
    """Whether ``signature`` is valid for ``data``; raises InvalidKeyError for an unusable key."""

def public_key_of(private_key: str) -> str:
    """The SPKI PEM public key of a PEM private key."""
