"""The key classes of pyrage's API: each holds its key string, checked by the library as that
one kind (``_hyperseal.parse_key_as``), and hands the string to hyperseal's functions, which
parse and cache it. No key parsing here."""

from .. import _hyperseal
from .._errors import Error as _HypersealError
from ._errors import IdentityError, RecipientError, key_error


class _Key:
    _kind = ""
    _error = RecipientError
    _word = None
    __slots__ = ("_text",)

    def __init__(self, text: str):
        self._text = text

    @classmethod
    def from_str(cls, v: str):
        if not isinstance(v, str):
            raise TypeError(f"expected str, not {type(v).__name__}")
        try:
            return cls(_hyperseal.parse_key_as(cls._kind, v))
        except _HypersealError as e:
            raise key_error(cls._error, e, cls._word) from None

    def __str__(self) -> str:
        return self._text

    def __eq__(self, other):
        return type(other) is type(self) and other._text == self._text

    def __hash__(self):
        return hash((type(self).__name__, self._text))


class _Recipient(_Key):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}({self._text!r})"


class _Identity(_Key):
    _error = IdentityError
    __slots__ = ()

    def __repr__(self) -> str:
        # An identity's string is its secret: never in a repr (str() gives it, as pyrage's does).
        return f"<{type(self).__module__}.{type(self).__qualname__}>"
