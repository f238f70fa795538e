"""pyrage 1.4's API on hyperseal: change ``import pyrage`` to ``from hyperseal import pyrage``
and the rest of the code stays as it is. The files are age files (age v1.3.1 and rage open
them, and these functions open theirs); the work is hyperseal's, on every core with the GIL
released. Beyond pyrage, :mod:`hyperseal.pyrage.pq` has age v1.3's post-quantum keys.

Only names and shapes are mapped here: every key, file and error comes from the library.
"""

import os

from .. import _errors as _hs
from .. import _hyperseal
from . import passphrase, plugin, pq, ssh, tag, tagpq, x25519
from ._errors import DecryptError, EncryptError, IdentityError, RecipientError, decrypt_error, encrypt_error
from ._keys import _Identity, _Recipient

__all__ = (
    "ssh",
    "tag",
    "tagpq",
    "x25519",
    "passphrase",
    "plugin",
    "pq",
    "encrypt",
    "encrypt_file",
    "encrypt_io",
    "decrypt",
    "decrypt_file",
    "decrypt_io",
    "RecipientError",
    "IdentityError",
    "EncryptError",
    "DecryptError",
)


def _keys(items, base, plugins, what):
    """The key strings of pyrage key objects, and whether any is a plugin's (only then may
    hyperseal run a plugin)."""
    out, any_plugin = [], False
    for k in items:
        if isinstance(k, base):
            out.append(str(k))
            any_plugin |= isinstance(k, (plugin.Recipient, plugin.Identity))
        elif isinstance(k, plugins):
            out.extend(k._keys)
            any_plugin = True
        else:
            raise TypeError(f"invalid type (expected {what} type)")
    return out, any_plugin


def _recipients(recipients):
    return _keys(recipients, _Recipient, plugin.RecipientPluginV1, "a recipient")


def _identities(identities):
    return _keys(identities, _Identity, plugin.IdentityPluginV1, "an identity")


def _io_passes(e):
    # Files that cannot be opened or written are OSError, as in pyrage; IoError is one.
    return isinstance(e, _hs.IoError)


def encrypt(plaintext: bytes, recipients, armored: bool = False) -> bytes:
    keys, plugins = _recipients(recipients)
    try:
        return _hyperseal.encrypt(plaintext, keys, format="age", armor=armored, allow_plugins=plugins)
    except _hs.Error as e:
        raise encrypt_error(e) from None


def decrypt(ciphertext: bytes, identities) -> bytes:
    """Binary and armored files alike."""
    keys, plugins = _identities(identities)
    try:
        return _hyperseal.decrypt(ciphertext, keys, allow_plugins=plugins)
    except _hs.Error as e:
        raise decrypt_error(e) from None


def encrypt_file(infile: str, outfile: str, recipients, armored: bool = False) -> None:
    """``outfile`` appears only once it is complete (replacing a file of that name, as pyrage
    does)."""
    keys, plugins = _recipients(recipients)
    try:
        _hyperseal.encrypt_file(os.fspath(infile), os.fspath(outfile), keys, format="age", armor=armored,
                                force=True, allow_plugins=plugins)
    except _hs.Error as e:
        if _io_passes(e):
            raise
        raise encrypt_error(e) from None


def decrypt_file(infile: str, outfile: str, identities) -> None:
    """``outfile`` appears only if the whole file authenticated (replacing a file of that name,
    as pyrage does)."""
    keys, plugins = _identities(identities)
    try:
        _hyperseal.decrypt_file(os.fspath(infile), os.fspath(outfile), keys, force=True, allow_plugins=plugins)
    except _hs.Error as e:
        if _io_passes(e):
            raise
        raise decrypt_error(e) from None


def encrypt_io(in_io, out_io, recipients, armored: bool = False) -> None:
    """From one binary file object to another, in constant memory."""
    keys, plugins = _recipients(recipients)
    try:
        _hyperseal.encrypt_stream(in_io, out_io, keys, format="age", armor=armored, allow_plugins=plugins)
    except _hs.Error as e:
        raise encrypt_error(e) from None


def decrypt_io(in_io, out_io, identities) -> None:
    """From one binary file object to another (armored input too), in constant memory; chunks
    are written as they authenticate."""
    keys, plugins = _identities(identities)
    try:
        _hyperseal.decrypt_stream(in_io, out_io, keys, allow_plugins=plugins)
    except _hs.Error as e:
        raise decrypt_error(e) from None
