"""What the re-key modules share (:mod:`hyperseal.rekey`, the S3 object re-key
:mod:`hyperseal._rekey_s3` and the prefix re-key :mod:`hyperseal._rekey_prefix`): the result type,
the header bound and the change's keyword arguments. It imports none of them, so imports run one
way: ``rekey`` → ``dask`` → ``_rekey_prefix`` → ``_rekey_s3`` → ``_rekey_common``."""

from dataclasses import dataclass, field

#: The longest header the library reads (``hyperseal::limits::HEADER_BYTES``).
HEADER_BYTES = 8 << 20
#: The largest sops file the library reads (``hyperseal::rekey::sops::MAX_FILE``): an object is
#: read up to one byte past it, so the library refuses it with its own error.
SOPS_BYTES = 16 << 20


@dataclass(frozen=True)
class RekeyResult:
    """What a re-key did. ``before``/``after``: stanza types in order; ``removed``: stanzas of
    the old header not in the new one (non-zero: see the module docs: old copies still open
    for them); ``added``: stanzas wrapped for new recipients; ``in_place``: only the header was
    rewritten over the old one; ``written``: ``"in_place"``, ``"rewritten"``,
    ``"s3_multipart"``, ``"s3_put"``, ``"nothing"`` (a dry run) or ``"unchanged"`` (a sops
    file already the target); ``bytes``: the new file's length where one was written. A sops
    re-key counts age entries in ``added``/``removed`` and leaves ``before``/``after`` empty."""

    before: list = field(default_factory=list)
    after: list = field(default_factory=list)
    removed: int = 0
    added: int = 0
    written: str = "nothing"
    bytes: int | None = None

    @property
    def in_place(self):
        return self.written == "in_place"

    @property
    def dry_run(self):
        return self.written == "nothing"

    @property
    def unchanged(self):
        return self.written == "unchanged"

    def __getitem__(self, name):  # dict-style access, as the plan comes from the library
        return getattr(self, name)


def _keys(recipients, add, remove, passphrase, remove_own, allow_plugins):
    return dict(passphrase=passphrase, recipients=recipients, add=list(_seq(add)), remove=list(_seq(remove)),
                remove_own=remove_own, allow_plugins=allow_plugins)


def _seq(x):
    if x is None:
        return ()
    return (x,) if isinstance(x, str) or not isinstance(x, (list, tuple, set, frozenset)) else x


def _sops_keys(recipients, add, remove, passphrase, remove_own, allow_plugins, rotate):
    """The library's sops re-key arguments: the target (``recipients``, or ``add``/``remove``;
    none: each file's ``.sops.yaml`` rule), ``force`` (``remove_own``) and ``rotate``."""
    if passphrase is not None:
        from ._errors import ArgumentError

        raise ArgumentError("sops files are opened with age identities, not a passphrase")
    return dict(recipients=recipients, add=list(_seq(add)), remove=list(_seq(remove)), force=remove_own,
                rotate=rotate, allow_plugins=allow_plugins)


def _no_sops_options(rotate, format=None):
    if rotate or format is not None:
        from ._errors import ArgumentError

        raise ArgumentError("rotate and format are options of sops files (sops=True)")
