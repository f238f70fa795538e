"""pyrage's ``x25519``: age's native X25519 keys."""

from .. import _hyperseal
from ._keys import _Identity, _Recipient

__all__ = ["Identity", "Recipient"]


class Recipient(_Recipient):
    """An ``age1…`` recipient."""

    _kind = "x25519-recipient"
    __slots__ = ()


class Identity(_Identity):
    """An ``AGE-SECRET-KEY-1…`` identity; ``str()`` gives the secret, as pyrage's does."""

    _kind = "x25519-identity"
    __slots__ = ()

    @classmethod
    def generate(cls) -> "Identity":
        return cls(_hyperseal.generate_key("x25519").secret)

    def to_public(self) -> Recipient:
        return Recipient(_hyperseal.public_of(self._text))
