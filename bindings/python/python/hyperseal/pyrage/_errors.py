"""pyrage's four exceptions, and hyperseal's errors mapped onto them by class, with pyrage's
words for the failures pyrage's own tests check (its messages come from rage; hyperseal's own
message follows in parentheses where it says more)."""

from .. import _errors as _hs


class RecipientError(Exception):
    """A recipient string is not one of this kind (pyrage's exception)."""


class IdentityError(Exception):
    """An identity string or buffer is not one of this kind (pyrage's exception)."""


class EncryptError(Exception):
    """Encryption failed (pyrage's exception)."""


class DecryptError(Exception):
    """Decryption failed (pyrage's exception)."""


# Shown where pyrage's are, as `hyperseal.pyrage.DecryptError`.
for _cls in (RecipientError, IdentityError, EncryptError, DecryptError):
    _cls.__module__ = "hyperseal.pyrage"

# rage's words, per hyperseal failure class where pyrage's tests match on them.
_NO_MATCH = "No matching keys found"
_MISSING = "Missing recipients."
_PQ_MIX = "Cannot encrypt to a recipient with labels '\u2068postquantum\u2069' alongside a recipient with no labels"


def key_error(cls, e: _hs.Error, word: str | None = None) -> Exception:
    """A key string refused by the library, as pyrage words it: ``word`` where pyrage has one
    word for every failure of a kind ("invalid SSH recipient"); else rage's: "Invalid plugin
    name", "incorrect HRP" for a key of another kind, and "invalid Bech32 encoding" for text
    that is no key of the kind at all."""
    msg = str(e)
    if word is not None:
        pass
    elif "invalid plugin name" in msg:
        word = "Invalid plugin name"
    elif "wrong type" in msg or "recipient: not a" in msg:
        word = "incorrect HRP"
    else:
        word = "invalid Bech32 encoding"
    return cls(f"{word} ({msg})")


def encrypt_error(e: _hs.Error) -> EncryptError:
    msg = str(e)
    if isinstance(e, _hs.ArgumentError) and "no recipients" in msg:
        return EncryptError(_MISSING)
    if "post-quantum and classic" in msg:
        return EncryptError(f"{_PQ_MIX} ({msg})")
    return EncryptError(msg)


def decrypt_error(e: _hs.Error) -> DecryptError:
    if isinstance(e, _hs.NoIdentityError):
        return DecryptError(_NO_MATCH)
    return DecryptError(str(e))
