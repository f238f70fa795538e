"""The exceptions hyperseal raises, generated from the library's one list of stable error codes
(``hyperseal::ErrorCode``, also the Node package's ``err.code`` and the browser's): one class
per code, each carrying ``code``, so logs and handlers can match any language. A code added to
the library gets a class here (named after the code) without a change to this file.

    try:
        hyperseal.decrypt(damaged, me)
    except hyperseal.AuthenticationError as e:
        assert e.code == "ERR_HYPERSEAL_AUTH"
"""

from ._hyperseal import error_codes

#: Every code, in the library's stable order.
ERROR_CODES: tuple[str, ...] = tuple(error_codes())


class Error(Exception):
    """Base class of every hyperseal exception."""

    code = "ERR_HYPERSEAL"


# code -> (class name, parent code or None, extra Python bases, docstring). The parent makes a
# finer failure catchable as its broader kind (an expired token is an authentication failure).
_CLASSES = {
    "ERR_HYPERSEAL_AUTH": (
        "AuthenticationError", None, (),
        "Data failed to authenticate: a modified or truncated file or message, a wrong key, a "
        "wrong context (C2SP) or a wrong passphrase. Nothing unauthenticated is ever returned.",
    ),
    "ERR_HYPERSEAL_NO_IDENTITY": (
        "NoIdentityError", None, (), "None of the given identities (private keys) can open the file.",
    ),
    "ERR_HYPERSEAL_FORMAT": (
        "FormatError", None, (), "The input is not a hyperseal or age file, or a malformed one.",
    ),
    "ERR_HYPERSEAL_KEY": (
        "InvalidKeyError", None, (ValueError,),
        "A key, recipient or identity could not be parsed (or has the wrong length), or the "
        "recipients cannot be combined in one file.",
    ),
    "ERR_HYPERSEAL_ARGUMENT": (
        "ArgumentError", None, (ValueError,),
        "An argument is out of range (a buffer too small, an unknown key kind, a file that "
        "exists without force=True, ...).",
    ),
    "ERR_HYPERSEAL_IO": ("IoError", None, (OSError,), "Reading or writing failed."),
    "ERR_HYPERSEAL_TOKEN_EXPIRED": (
        "TokenExpiredError", "ERR_HYPERSEAL_AUTH", (), "A token authenticated but has expired.",
    ),
    "ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY": (
        "TokenUnknownKeyError", "ERR_HYPERSEAL_AUTH", (), "A token names a key id none of the keys has.",
    ),
    "ERR_HYPERSEAL_LIMIT": (
        "LimitError", None, (ValueError,),
        "An input went past one of the library's budgets (a header over 1 MiB, an oversized "
        "stanza, armor line or key file, a plugin that sends too much): refused before it could "
        "take more memory or time.",
    ),
}

BY_CODE: dict[str, type[Error]] = {}


def _name_of(code: str) -> str:
    """ERR_HYPERSEAL_SOME_THING -> SomeThingError, for codes without an entry above."""
    return "".join(w.title() for w in code.removeprefix("ERR_HYPERSEAL_").split("_")) + "Error"


def _make(code: str) -> type[Error]:
    if code in BY_CODE:
        return BY_CODE[code]
    name, parent, extra, doc = _CLASSES.get(code, (_name_of(code), None, (), f"Failure {code}."))
    base = _make(parent) if parent else Error
    cls = type(name, (base, *extra), {"code": code, "__doc__": doc, "__module__": "hyperseal"})
    BY_CODE[code] = cls
    globals()[name] = cls
    return cls


for _code in ERROR_CODES:
    _make(_code)


class AlreadyFinalized(ArgumentError):  # noqa: F821 (generated above)
    """An Encryptor, Decryptor, Sealer or Opener was used after finalize() or after it failed."""

    __module__ = "hyperseal"


def exception_for(code: str, message: str) -> Error:
    """The exception for a code (the native module raises through this)."""
    return _make(code)(message)


__all__ = ["ERROR_CODES", "AlreadyFinalized", "Error", *(c.__name__ for c in BY_CODE.values())]
