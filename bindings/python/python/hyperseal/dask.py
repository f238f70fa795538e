"""Many files on a Dask cluster: :func:`encrypt_files` and :func:`decrypt_files` run one task
per file, each on the library's multi-core engine, and report per file (sizes, or the error and
its code) instead of failing the batch. Paths are local paths or fsspec URLs (``s3://...``,
``memory://...``); a failed file leaves nothing at its destination: local destinations go
through the library's nothing-lost output (the same as :func:`hyperseal.encrypt_file`), others
are discarded on failure (an object store's multipart upload is aborted) and created only if
still absent when they complete (mode ``"xb"``: on S3 ``If-None-Match: *``), so an object that
appeared during the run is kept::

    from dask.distributed import Client, LocalCluster
    import hyperseal, hyperseal.dask

    me = hyperseal.generate_key()
    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
        results = hyperseal.dask.encrypt_files(client, ["a.csv", "s3://bkt/b.csv"], "s3://bkt/sealed",
                                               me.public)
        assert all(r.error is None for r in results)

On a real cluster the same calls run unchanged: ``Client("tcp://scheduler:8786")``; the paths
must then be reachable from every worker (a shared filesystem or an object store). Ray
(``ray.remote`` over the same per-file function) and Spark (``rdd.map``) are equivalent
drivers; only Dask is tested.

**What a worker learns.** Encrypting needs only public recipients. Decrypting sends the
identities (or passphrase) to every worker that runs a task: the worker can open any file
for those keys, so (1) run the cluster with TLS between client, scheduler and workers
(``distributed.security.Security``, ``tls://`` addresses), (2) trust the workers' hosts as
you trust the machine holding the key, (3) never put keys in task names or logs (these
functions pass them as arguments only; their repr() is redacted). The library zeroizes key
material and plaintext buffers it owns when they are dropped.

**One huge object across workers** (:func:`encrypt_large`, :func:`decrypt_large`): the client
makes the header and the file's payload key once (:class:`hyperseal.parts.PartKey`), every
worker seals (or opens) chunk-aligned parts at their explicit chunk positions, the part holding
the end carries the final chunk, and the parts become one ordinary file that the CLI opens byte
for byte. Every part is sealed at most once per key: the library claims the plan and each
sealed part in a store beside the destination before the part leaves its worker, and refuses a
rerun that sealed other bytes (see :func:`encrypt_large`). Where the parts go — the library's
``AtomicOutput`` for local paths (on a filesystem every worker sees), one conditionally
completed multipart upload for ``s3://``, hidden part objects elsewhere — is described in
:mod:`hyperseal._large`.

*What a worker learns here*: the payload key of that one file, which reads and forges that file
and no other; no identity or passphrase leaves the client. Tasks receive the key wrapped under a
per-job key held in the workers' plugins, so it never sits in data a worker may spill to disk.
The same advice holds: TLS between nodes, trusted worker hosts, keys never in task names or
logs (``repr(PartKey)`` is redacted). Decrypted parts exist in the hidden temporary file (or
upload, or part objects) only until a part fails, then everything written is removed.

:func:`rekey_prefix` re-keys every object under an S3 prefix (new headers, payloads copied by
the server), the objects spread over the workers, resumable through a manifest of header
digests (:mod:`hyperseal._rekey_prefix`). The identities reach the workers sealed under a
per-run key held in their plugins, as the part key above does. With ``sops=True`` it re-keys
the sops objects under the prefix instead (each read whole, re-keyed in memory by the library,
written back by one conditional ``PutObject``; ``rotate=True`` for a fresh data key).

:func:`rotate_large` re-encrypts one huge object under a fresh file key the same way (each task
opens an old part and seals it anew, the plaintext only in that worker's memory): the change of
recipients that also shuts out a removed recipient who kept the old file key, which
:func:`hyperseal.rekey_file` (a new header only) cannot.

Measured throughput per worker (``python -m hyperseal.bench``, README) times the workers is
the projection for a cluster, until the storage's bandwidth is the limit.
"""

import os
import posixpath
import shutil
from dataclasses import dataclass

from . import _hyperseal, _large
from ._large import _PART, LargeResult, _check_s3_parts, _hyperseal_io_error, _job, _part_size, _run_parts  # noqa: F401

_COPY = 4 << 20


@dataclass(frozen=True)
class FileResult:
    """What happened to one file: ``size`` is the plaintext length; on failure ``error`` is the
    message and ``code`` the hyperseal error code (None for errors from elsewhere)."""

    src: str
    dst: str
    size: int | None = None
    error: str | None = None
    code: str | None = None


def _is_local(path):
    return "://" not in path or path.startswith("file://")


def _local(path):
    return path[len("file://"):] if path.startswith("file://") else path


def _join(base, name):
    return posixpath.join(base, name) if not _is_local(base) else os.path.join(_local(base), name)


def _through_fsspec(src, dst, encrypting, keys, options):
    """Copies src to dst through hyperseal.open on fsspec files; dst is discarded on failure."""
    import fsspec

    from .fsspec import HypersealFileSystem

    src_fs, src_path = fsspec.core.url_to_fs(src)
    dst_fs, dst_path = fsspec.core.url_to_fs(dst)
    dst_fs.makedirs(dst_fs._parent(dst_path), exist_ok=True)
    if not options.get("force") and dst_fs.exists(dst_path):
        raise _hyperseal_io_error(f"output file {dst} already exists (pass force=True to replace it)")
    threads = options.get("threads", 0)
    # "xb": created only if still absent when it completes (s3fs: If-None-Match: *), so an
    # object that appeared during the run is kept.
    mode = "wb" if options.get("force") else "xb"
    if encrypting:
        sealed = HypersealFileSystem(dst_fs, threads=threads, format=options.get("format", "hyperseal"),
                                     suite=options.get("suite"), **keys)
        with src_fs.open(src_path, "rb") as fin, sealed.open(dst_path, mode) as fout:
            shutil.copyfileobj(fin, fout, _COPY)
            return fin.tell()  # plaintext bytes read
    opened = HypersealFileSystem(src_fs, threads=threads, **keys)
    with opened.open(src_path, "rb") as fin:
        fout = dst_fs.open(dst_path, mode)
        try:
            shutil.copyfileobj(fin, fout, _COPY)
            n = fin.tell()
        except BaseException:
            discard = getattr(fout, "discard", None)
            discard() if discard else fout.close()
            raise
        fout.close()
        return n


def _one(src, dst, encrypting, keys, options):
    """The task: one file. Never raises: the result says what happened."""
    try:
        if _is_local(src) and _is_local(dst):
            os.makedirs(os.path.dirname(_local(dst)) or ".", exist_ok=True)
            run = _hyperseal.encrypt_file if encrypting else _hyperseal.decrypt_file
            extra = {"format": options.get("format", "hyperseal"), "suite": options.get("suite")} if encrypting else {}
            size = run(_local(src), _local(dst), force=options.get("force", False),
                       threads=options.get("threads", 0), **keys, **extra)
        else:
            size = _through_fsspec(src, dst, encrypting, keys, options)
        return FileResult(src, dst, size=size)
    except Exception as e:  # reported per file, the batch goes on
        return FileResult(src, dst, error=f"{type(e).__name__}: {e}", code=getattr(e, "code", None))


def _run(client, paths, dst_dir, encrypting, keys, options, name):
    paths = [os.fspath(p) for p in paths]
    dsts = [_join(os.fspath(dst_dir), name(posixpath.basename(_local(p)))) for p in paths]
    if len(set(dsts)) != len(dsts):
        from ._errors import ArgumentError

        raise ArgumentError("two inputs have the same file name: their outputs would collide")
    futures = client.map(_one, paths, dsts, encrypting=encrypting, keys=keys, options=options, pure=False)
    return client.gather(futures)


def encrypt_files(client, paths, dst_dir, recipients=None, *, passphrase=None, format="hyperseal", suite=None,
                  suffix=".hs", force=False, threads=0):
    """Encrypts each of ``paths`` into ``dst_dir/<name><suffix>`` (``dst_dir`` is created), one
    Dask task per file.
    Returns a :class:`FileResult` per input, in order."""
    keys = {"recipients": recipients} if passphrase is None else {"passphrase": passphrase}
    options = {"format": format, "suite": suite, "force": force, "threads": threads}
    return _run(client, paths, dst_dir, True, keys, options, lambda n: n + suffix)


def decrypt_files(client, paths, dst_dir, identities=None, *, passphrase=None, suffix=".hs", force=False,
                  threads=0):
    """Decrypts each of ``paths`` into ``dst_dir/<name without suffix>`` (or ``<name>.out``), one
    Dask task per file. The identities travel to the workers (see the module docs). Returns a
    :class:`FileResult` per input, in order."""
    keys = {"identities": identities, "passphrase": passphrase}
    options = {"force": force, "threads": threads}
    return _run(client, paths, dst_dir, False, keys, options,
                lambda n: n[: -len(suffix)] if suffix and n.endswith(suffix) else n + ".out")


# One object across workers ---------------------------------------------------------------


def encrypt_large(client, src, dst, recipients=None, *, passphrase=None, format="hyperseal", suite=None,
                  part_size=_PART, force=False, progress=None):
    """Encrypts **one** object ``src`` into ``dst`` across the cluster's workers: the header and
    payload key are made here once, each task seals ``part_size`` bytes (rounded up to whole
    chunks) at their chunk positions, and the result is one ordinary hyperseal (or age) file.

    Every part is sealed at most once per key: before its sealed bytes leave the worker, the
    library records the plan and the part in a claim store beside the destination (a file
    created with ``link(2)``, an object created with ``If-None-Match: *``), proven before any
    part is sealed: the job creates a probe there twice, and a store that lets the second
    create through (a server that ignores the condition) is refused with
    :class:`hyperseal.IoError` naming it, leaving nothing behind; a rerun task that
    reads other bytes (the source changed unseen and its worker was lost) is refused with
    :class:`hyperseal.ArgumentError` ("would reuse a nonce"), and the job fails leaving nothing
    — run it again, which makes a fresh key. ``src`` must not change while it is sealed: also
    checked by its stamp (local: inode, size, mtime and ctime in ns; object stores: version id
    or ETag) before and after. ``progress(bytes_done)`` is called as parts finish. Nothing is
    left at ``dst`` on failure; without ``force`` an existing ``dst`` — or one that appears
    during the run — is kept and the job fails. Returns a :class:`LargeResult`."""
    from .parts import PartKey

    src, dst = os.fspath(src), os.fspath(dst)
    before = _large.stamp(src)
    head, key = PartKey.seal_new(before[0], recipients, passphrase=passphrase, format=format, suite=suite)
    size = _part_size(key, part_size)
    plan = key.plan(size)
    _check_s3_parts(dst, plan, size)
    sizes = [f1 - f0 + (len(head) if i == 0 else 0) for i, (_, _, _, f0, f1) in enumerate(plan)]

    def run(dest, job):
        _run_parts(client, _large.seal_task, plan, dest, progress, src=src, wrapped=job.wrapped, job=job.name,
                   head=head, part_size=size, claims=dest.claims)
        if _large.stamp(src) != before:
            raise _hyperseal_io_error(f"{src} changed while it was being encrypted; nothing was written")
        dest.commit(sizes)

    _job(client, key, dst, force, True, size, key.file_len, run)
    return LargeResult(src, dst, key.plaintext_len, key.file_len, len(plan))


def decrypt_large(client, src, dst, identities=None, *, passphrase=None, part_size=_PART, force=False,
                  progress=None):
    """Decrypts one hyperseal or age file ``src`` into ``dst`` across the workers: the header is
    opened here (the identities never leave this process), each task opens ``part_size``
    plaintext bytes' worth of chunks, the part holding the end proves the file was not cut
    short, and ``dst`` appears only once every part authenticated (the same destination rules
    as :func:`encrypt_large`). Returns a :class:`LargeResult`."""
    from .parts import PartKey
    import fsspec

    src, dst = os.fspath(src), os.fspath(dst)
    src_fs, src_path = fsspec.core.url_to_fs(src)
    length = src_fs.info(src_path)["size"]
    with src_fs.open(src_path, "rb") as f:
        key = PartKey.open_file(f, length, identities, passphrase=passphrase)
    size = _part_size(key, part_size)
    plan = key.plan(size)
    _check_s3_parts(dst, plan, size)
    sizes = [p1 - p0 for _, p0, p1, _, _ in plan]

    def run(dest, job):
        _run_parts(client, _large.open_task, plan, dest, progress, src=src, wrapped=job.wrapped, job=job.name)
        dest.commit(sizes)

    _job(client, key, dst, force, False, size, key.plaintext_len, run)
    return LargeResult(src, dst, key.plaintext_len, key.file_len, len(plan))


# A fresh file key across workers (re-keying keeps it): defined beside the parts it reuses.
from ._rotate import rotate_large  # noqa: E402

# Every object under an S3 prefix re-keyed across workers, resumable through a manifest.
from ._rekey_prefix import rekey_prefix  # noqa: E402

__all__ = ["FileResult", "LargeResult", "decrypt_files", "decrypt_large", "encrypt_files", "encrypt_large",
           "rekey_prefix", "rotate_large"]
