"""One-shot authenticated encryption, as the Node package's ``aead`` namespace::

    from hyperseal import aead
    key = aead.generate_key("aes-256-gcm")
    sealed = aead.seal("aes-256-gcm", key, b"message", aad=b"header")   # nonce | ciphertext | tag
    assert aead.open("aes-256-gcm", key, sealed, aad=b"header") == b"message"

Algorithms: ``aes-128-gcm``, ``aes-256-gcm``, ``chacha20-poly1305``, ``xchacha20-poly1305``,
``aes-256-gcm-siv``, ``sm4-ccm`` (messages under 16 MiB). Every message gets a fresh random
nonce (12 bytes, 24 for XChaCha20) in front; the tag is 16 bytes at the end, so
``sealed[:12]`` and ``sealed[12:]`` are the ``nonce`` and ``data`` of pyca/cryptography's
``AESGCM.decrypt``. Random 96-bit nonces are safe for about 2**32 messages per key; prefer
``xchacha20-poly1305`` or ``aes-256-gcm-siv`` when one key seals more. A wrong key, AAD or any
changed byte raises :class:`hyperseal.AuthenticationError`, and nothing is returned. Inputs from
16 KiB on are processed with the GIL released.
"""

from ._hyperseal import aead_generate_key as generate_key
from ._hyperseal import aead_open as open  # noqa: A004 (the Node package's name)
from ._hyperseal import aead_seal as seal

#: Every algorithm name.
ALGORITHMS = (
    "aes-128-gcm",
    "aes-256-gcm",
    "chacha20-poly1305",
    "xchacha20-poly1305",
    "aes-256-gcm-siv",
    "sm4-ccm",
)

__all__ = ["ALGORITHMS", "generate_key", "open", "seal"]
