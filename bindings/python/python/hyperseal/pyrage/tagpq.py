"""pyrage's ``tagpq``: age v1.3's post-quantum ``age1tagpq1…`` recipients (encrypt only)."""

from ._keys import _Recipient

__all__ = ["Recipient"]


class Recipient(_Recipient):
    _kind = "tagpq"
    __slots__ = ()
