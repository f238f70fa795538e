"""Signatures with PEM keys, as the Node package's ``sign`` namespace::

    from hyperseal import sign
    pair = sign.generate_key_pair("ed25519")          # or ecdsa-p256, rsa2048/3072/4096, ml-dsa-65
    sig = sign.sign(pair.private_key, b"release 1.0")
    assert sign.verify(pair.public_key, b"release 1.0", sig)
    assert sign.public_key_of(pair.private_key) == pair.public_key

Private keys are PKCS#8 PEM (OpenSSL's SEC1 and PKCS#1 forms are read too), public keys SPKI
PEM, so keys and signatures interoperate with openssl and pyca/cryptography: Ed25519 and
ML-DSA-65 sign the message itself, ECDSA P-256 is SHA-256 with a DER signature, RSA is SHA-256
with ``padding="pss"`` (default; 32-byte salt) or ``"pkcs1"``. :func:`verify` returns ``False``
for a wrong signature and raises :class:`hyperseal.InvalidKeyError` for an unusable key.
Generating, signing and verifying run with the GIL released.
"""

from ._hyperseal import sign_generate_key_pair as _generate
from ._hyperseal import sign_public_key_of as public_key_of
from ._hyperseal import sign_message as sign
from ._hyperseal import sign_verify as verify

#: Every key kind.
KINDS = ("ed25519", "ecdsa-p256", "rsa2048", "rsa3072", "rsa4096", "ml-dsa-65")


class KeyPair:
    """A signing key pair as PEM text; ``repr()`` never shows the private key."""

    __slots__ = ("kind", "private_key", "public_key")

    def __init__(self, kind: str, private_key: str, public_key: str):
        self.kind, self.private_key, self.public_key = kind, private_key, public_key

    def __repr__(self) -> str:
        return f"KeyPair(kind={self.kind!r}, private_key=<redacted>)"


def generate_key_pair(kind: str = "ed25519") -> KeyPair:
    """A new key pair: ``ed25519`` (default), ``ecdsa-p256``, ``rsa2048``, ``rsa3072``,
    ``rsa4096`` or ``ml-dsa-65`` (FIPS 204, post-quantum). RSA takes up to seconds."""
    private_key, public_key = _generate(kind)
    return KeyPair(kind.lower(), private_key, public_key)


__all__ = ["KINDS", "KeyPair", "generate_key_pair", "public_key_of", "sign", "verify"]
