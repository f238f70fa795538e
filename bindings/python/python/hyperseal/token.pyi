from collections.abc import Buffer, Sequence

def generate_key() -> str:
    """A new random key line ``HYPERSEAL-TOKEN-KEY-1...`` (keep it secret)."""

def seal(key: str, plaintext: Buffer | str, *, aad: Buffer | str | None = None, ttl_seconds: float | None = None) -> str:
    """Seals ``plaintext`` into a token with ``key`` (a key line, or a key file whose first key
    seals); ``ttl_seconds`` adds an expiry."""

def open(keys: str | Sequence[str], token: str, *, aad: Buffer | str | None = None) -> bytes:
    """The plaintext of ``token`` if any of ``keys`` opens it (with the same ``aad``)."""
