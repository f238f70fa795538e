"""Beyond pyrage: age v1.3's post-quantum keys (ML-KEM-768 + X25519), ``age1pq1…`` recipients
and ``AGE-SECRET-KEY-PQ-1…`` identities, with ``x25519``'s API. Files to them resist a quantum
adversary; they cannot be mixed with classic recipients in one file (``EncryptError``)."""

from .. import _hyperseal
from ._keys import _Identity, _Recipient

__all__ = ["Identity", "Recipient"]


class Recipient(_Recipient):
    """An ``age1pq1…`` recipient."""

    _kind = "pq-recipient"
    __slots__ = ()


class Identity(_Identity):
    """An ``AGE-SECRET-KEY-PQ-1…`` identity; ``str()`` gives the secret."""

    _kind = "pq-identity"
    __slots__ = ()

    @classmethod
    def generate(cls) -> "Identity":
        return cls(_hyperseal.generate_key("hybrid").secret)

    def to_public(self) -> Recipient:
        return Recipient(_hyperseal.public_of(self._text))
