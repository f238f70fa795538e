"""pyrage's ``ssh``: age's SSH keys (ssh-ed25519 and ssh-rsa)."""

from .._errors import Error as _HypersealError
from ._errors import IdentityError, key_error
from ._keys import _Identity, _Recipient
from .. import _hyperseal

__all__ = ["Identity", "Recipient"]


class Recipient(_Recipient):
    """An ``ssh-ed25519 …`` or ``ssh-rsa …`` public key line."""

    _kind = "ssh-recipient"
    _word = "invalid SSH recipient"
    __slots__ = ()


class Identity(_Identity):
    """An unencrypted OpenSSH or PEM private key."""

    _kind = "ssh-identity"
    _word = "invalid SSH identity"
    __slots__ = ()

    @classmethod
    def from_buffer(cls, buf: bytes) -> "Identity":
        try:
            text = bytes(buf).decode("utf-8")
        except UnicodeDecodeError:
            raise IdentityError("invalid SSH identity (not UTF-8 text)") from None
        try:
            return cls(_hyperseal.parse_key_as(cls._kind, text))
        except _HypersealError as e:
            raise key_error(IdentityError, e, cls._word) from None
