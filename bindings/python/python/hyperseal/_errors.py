"""The exceptions hyperseal raises. Each carries ``code``, the same string as the Node package's
``err.code`` for the same failure, so logs and handlers can match either language."""


class Error(Exception):
    """Base class of every hyperseal exception."""

    code = "ERR_HYPERSEAL"


class AuthenticationError(Error):
    """Data failed to authenticate: a modified or truncated file or message, a wrong key, a
    wrong context (C2SP) or a wrong passphrase. Nothing unauthenticated is ever returned."""

    code = "ERR_HYPERSEAL_AUTH"


class NoIdentityError(Error):
    """None of the given identities (private keys) can open the file."""

    code = "ERR_HYPERSEAL_NO_IDENTITY"


class FormatError(Error):
    """The input is not a hyperseal or age file, or a malformed one."""

    code = "ERR_HYPERSEAL_FORMAT"


class InvalidKeyError(Error, ValueError):
    """A key, recipient or identity could not be parsed (or has the wrong length), or the
    recipients cannot be combined in one file."""

    code = "ERR_HYPERSEAL_KEY"


class ArgumentError(Error, ValueError):
    """An argument is out of range (a buffer too small, an unknown key kind, ...)."""

    code = "ERR_HYPERSEAL_ARGUMENT"


class AlreadyFinalized(ArgumentError):
    """An Encryptor or Decryptor was used after finalize() or after it failed."""


class IoError(Error, OSError):
    """Reading or writing failed."""

    code = "ERR_HYPERSEAL_IO"
