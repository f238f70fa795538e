from collections.abc import Buffer
from typing import Literal

_Algo = Literal["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "xchacha20-poly1305", "aes-256-gcm-siv", "sm4-ccm"]

ALGORITHMS: tuple[str, ...]

def generate_key(algo: _Algo) -> bytes:
    """A random key of the right length: 16 bytes for AES-128-GCM and SM4-CCM, else 32."""

def seal(algo: _Algo, key: Buffer, plaintext: Buffer | str, *, aad: Buffer | str | None = None) -> bytes:
    """Encrypts with a fresh random nonce; returns ``nonce ‖ ciphertext ‖ tag``."""

def open(algo: _Algo, key: Buffer, sealed: Buffer, *, aad: Buffer | str | None = None) -> bytes:
    """Opens what :func:`seal` made; raises AuthenticationError on any change or a wrong key or AAD."""
