"""pyrage's ``plugin``: age plugins (programs named ``age-plugin-NAME`` on PATH), by their
recipient (``age1NAME1…``) and identity (``AGE-PLUGIN-NAME-1…``) strings.

``RecipientPluginV1`` and ``IdentityPluginV1`` group a plugin's keys as pyrage's do, and are what
``encrypt`` and ``decrypt`` take. A plugin's requests are not forwarded to ``callbacks``: the
library answers none of them (a plugin that must ask its user, for a PIN say, fails); messages
it only displays are dropped.
"""

from typing import Optional, Protocol, Sequence

from .. import _hyperseal
from .._errors import Error as _HypersealError
from ._errors import IdentityError, key_error
from ._keys import _Identity, _Recipient

__all__ = ["Callbacks", "Identity", "IdentityPluginV1", "Recipient", "RecipientPluginV1"]


class Callbacks(Protocol):
    def display_message(self, message: str) -> None: ...
    def confirm(self, message: str, yes_string: str, no_string: Optional[str]) -> Optional[bool]: ...
    def request_public_string(self, description: str) -> Optional[str]: ...
    def request_passphrase(self, description: str) -> Optional[str]: ...


class Recipient(_Recipient):
    """A plugin recipient ``age1NAME1…``."""

    _kind = "plugin-recipient"
    __slots__ = ()

    def plugin(self) -> str:
        return _hyperseal.parse_key_as("plugin-recipient:name", self._text)


class Identity(_Identity):
    """A plugin identity ``AGE-PLUGIN-NAME-1…``."""

    _kind = "plugin-identity"
    __slots__ = ()

    @classmethod
    def default_for_plugin(cls, plugin: str) -> "Identity":
        """The plugin's identity without data (age's ``-j NAME``)."""
        try:
            return cls(_hyperseal.parse_key_as("plugin-name", plugin))
        except _HypersealError as e:
            raise key_error(IdentityError, e) from None

    def plugin(self) -> str:
        return _hyperseal.parse_key_as("plugin-identity:name", self._text)


class RecipientPluginV1:
    """The recipients (and identities, which the plugin wraps to itself) of one plugin."""

    def __init__(self, plugin_name: str, recipients: Sequence[Recipient], identities: Sequence[Identity],
                 callbacks: Callbacks):
        if identities:
            # The library wraps to a plugin identity only from its recipient; pass that instead.
            raise NotImplementedError("hyperseal.pyrage encrypts to plugin recipients, not to plugin identities")
        self.plugin_name = plugin_name
        self._keys = [str(r) for r in recipients]
        self.callbacks = callbacks


class IdentityPluginV1:
    """The identities of one plugin."""

    def __init__(self, plugin_name: str, identities: Sequence[Identity], callbacks: Callbacks):
        self.plugin_name = plugin_name
        self._keys = [str(i) for i in identities]
        self.callbacks = callbacks
