"""Rotating one huge object across Dask workers: a fresh file key and a full re-encryption,
the only change of recipients that protects what is written from then on against a removed
recipient (re-keying keeps the file key, which a removed recipient may have kept).

It is :func:`hyperseal.dask.decrypt_large` and :func:`hyperseal.dask.encrypt_large` in one
pass: the client opens the old header (the identities never leave it) and makes the new header
and payload key; both part plans use one part size (a multiple of both chunk sizes), so old
part ``i`` and new part ``i`` cover the same plaintext bytes; each task opens its old part into
memory it owns, seals it under the new key (claimed first, as every sealed part is), wipes the
plaintext and writes the sealed part. Plaintext never reaches storage. The destinations and
their rules are :func:`encrypt_large`'s.
"""

import math
import os

from . import _large
from ._large import LargeResult, _check_s3_parts, _hyperseal_io_error, _job, _run_parts


def rotate_task(pair, src, old_wrapped, old_job, wrapped, job, where, head, part_size, claims):
    """Opens one old part and seals its plaintext as the same part of the new file."""
    old, key = _large.unwrap(old_job, old_wrapped), _large.unwrap(job, wrapped)
    (ofirst, op0, op1, of0, of1), (first, p0, p1, f0, f1) = pair
    if (op0, op1) != (p0, p1):
        raise ValueError("the old and new part plans disagree")  # a bug: the plans share a part size
    plain = _large._buffer("plain", of1 - of0)  # open_into takes a buffer of the sealed size
    try:
        n = old.open_into(ofirst, _large.read_range(src, of0, of1), plain)
        if where[0] == "file":
            out = _large._buffer("output", f1 - f0)
            key.seal_claimed_into(claims, part_size, first, plain[:n], out)
        else:
            out = key.seal_claimed(claims, part_size, first, plain[:n])
    finally:
        plain[:] = bytes(len(plain))  # the plaintext is wiped before the buffer is reused
    _large.write_part(where, f0, first, head if first == 0 else b"", out)
    return p1 - p0


def rotate_large(client, src, dst, identities=None, recipients=None, *, passphrase=None, new_passphrase=None,
                 format="hyperseal", suite=None, part_size=64 << 20, force=False, progress=None):
    """Re-encrypts **one** object ``src`` (opened with ``identities`` or ``passphrase``) into
    ``dst`` for ``recipients`` (or ``new_passphrase``) under a fresh file key, across the
    cluster's workers (see :mod:`hyperseal._rotate`). ``format``/``suite`` are the new file's.
    ``src`` must not change meanwhile (checked by its stamp before and after); ``dst`` must be
    another object, and appears only once every part is sealed (``force=True`` replaces an
    existing one). Returns a :class:`hyperseal.dask.LargeResult`."""
    import fsspec

    from .parts import PartKey

    src, dst = os.fspath(src), os.fspath(dst)
    if src == dst:
        from ._errors import ArgumentError

        raise ArgumentError("rotate into another object, then replace the old one (dst must not be src)")
    before = _large.stamp(src)
    src_fs, src_path = fsspec.core.url_to_fs(src)
    with src_fs.open(src_path, "rb") as f:
        old = PartKey.open_file(f, before[0], identities, passphrase=passphrase)
    head, key = PartKey.seal_new(old.plaintext_len, recipients, passphrase=new_passphrase, format=format,
                                 suite=suite)
    chunk = math.lcm(old.chunk_size, key.chunk_size)
    size = max(chunk, -(-part_size // chunk) * chunk)
    old_plan, plan = old.plan(size), key.plan(size)
    _check_s3_parts(dst, plan, size)
    sizes = [f1 - f0 + (len(head) if i == 0 else 0) for i, (_, _, _, f0, f1) in enumerate(plan)]

    def run(dest, job):
        old_job = _large.JobKeys(client, old)
        try:
            _run_parts(client, rotate_task, list(zip(old_plan, plan)), dest, progress, src=src,
                       old_wrapped=old_job.wrapped, old_job=old_job.name, wrapped=job.wrapped, job=job.name,
                       head=head, part_size=size, claims=dest.claims)
        finally:
            old_job.close()
        if _large.stamp(src) != before:
            raise _hyperseal_io_error(f"{src} changed while it was being rotated; nothing was written")
        dest.commit(sizes)

    _job(client, key, dst, force, True, size, key.file_len, run)
    return LargeResult(src, dst, key.plaintext_len, key.file_len, len(plan))
