"""pyrage's ``tag``: age v1.3's ``age1tag1…`` recipients (a hardware key's P-256 tag; encrypt
only: the identity is the hardware's, through its plugin)."""

from ._keys import _Recipient

__all__ = ["Recipient"]


class Recipient(_Recipient):
    _kind = "tag"
    __slots__ = ()
