"""What the re-key modules share (:mod:`hyperseal.rekey`, the S3 object re-key
:mod:`hyperseal._rekey_s3` and the prefix re-key :mod:`hyperseal._rekey_prefix`): the result type,
the header bound and the change's keyword arguments. It imports none of them, so imports run one
way: ``rekey`` → ``dask`` → ``_rekey_prefix`` → ``_rekey_s3`` → ``_rekey_common``."""

from dataclasses import dataclass, field

#: The longest header the library reads (``hyperseal::limits::HEADER_BYTES``).
HEADER_BYTES = 8 << 20


@dataclass(frozen=True)
class RekeyResult:
    """What a re-key did. ``before``/``after``: stanza types in order; ``removed``: stanzas of
    the old header not in the new one (non-zero: see the module docs: old copies still open
    for them); ``added``: stanzas wrapped for new recipients; ``in_place``: only the header was
    rewritten over the old one; ``written``: ``"in_place"``, ``"rewritten"``,
    ``"s3_multipart"``, ``"s3_put"`` or ``"nothing"`` (a dry run); ``bytes``: the new file's
    length where one was written."""

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

    def __getitem__(self, name):  # dict-style access, as the plan comes from the library
        return getattr(self, name)


def _keys(recipients, add, remove, passphrase, remove_own, allow_plugins):
    return dict(passphrase=passphrase, recipients=recipients, add=list(_seq(add)), remove=list(_seq(remove)),
                remove_own=remove_own, allow_plugins=allow_plugins)


def _seq(x):
    if x is None:
        return ()
    return (x,) if isinstance(x, str) or not isinstance(x, (list, tuple, set, frozenset)) else x
