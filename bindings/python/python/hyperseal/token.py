"""Compact authenticated tokens with key rotation and expiry, as the Node package's ``token``
namespace (the same bytes as ``hyperseal token seal``/``open`` and the browser package)::

    from hyperseal import token
    key = token.generate_key()                           # "HYPERSEAL-TOKEN-KEY-1..."
    t = token.seal(key, b"user=42", aad=b"session", ttl_seconds=900)
    assert token.open(key, t, aad=b"session") == b"user=42"
    token.open([new_key, key], t, aad=b"session")        # keep old keys while their tokens live

A token is base64url text (no padding): version, suite, key id, optional expiry, nonce and
ciphertext, all authenticated with the optional ``aad``; AES-256-GCM-SIV where the CPU has AES
instructions, else XChaCha20-Poly1305. ``open`` raises :class:`hyperseal.TokenExpiredError`,
:class:`hyperseal.TokenUnknownKeyError` (both :class:`hyperseal.AuthenticationError`\\ s),
:class:`hyperseal.AuthenticationError` (tampered, or a wrong ``aad``) or
:class:`hyperseal.FormatError` (not a token). Parsed keys are cached by their text (16 at most).
"""

from ._hyperseal import token_generate_key as generate_key
from ._hyperseal import token_open as open  # noqa: A004 (the Node package's name)
from ._hyperseal import token_seal as seal

__all__ = ["generate_key", "open", "seal"]
