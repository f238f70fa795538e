"""Many files on a Dask cluster: :func:`encrypt_files` and :func:`decrypt_files` run one task
per file, each on the library's multi-core engine, and report per file (sizes, or the error and
its code) instead of failing the batch. Paths are local paths or fsspec URLs (``s3://...``,
``memory://...``); a failed file leaves nothing at its destination: local destinations go
through the library's nothing-lost output (the same as :func:`hyperseal.encrypt_file`), others
are discarded on failure (an object store's multipart upload is aborted)::

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

**One huge object across workers** (``encrypt_large``) needs a core API that does not exist
yet: sealing a chunk-aligned plaintext range at explicit chunk positions under one header and
payload key. Until the library has it, one object is sealed by one worker, on all its cores.
"""

import os
import posixpath
import shutil
from dataclasses import dataclass

from . import _hyperseal

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
    if encrypting:
        sealed = HypersealFileSystem(dst_fs, threads=threads, format=options.get("format", "hyperseal"),
                                     suite=options.get("suite"), **keys)
        with src_fs.open(src_path, "rb") as fin, sealed.open(dst_path, "wb") as fout:
            shutil.copyfileobj(fin, fout, _COPY)
            return fin.tell()  # plaintext bytes read
    opened = HypersealFileSystem(src_fs, threads=threads, **keys)
    with opened.open(src_path, "rb") as fin:
        fout = dst_fs.open(dst_path, "wb")
        try:
            shutil.copyfileobj(fin, fout, _COPY)
            n = fin.tell()
        except BaseException:
            discard = getattr(fout, "discard", None)
            discard() if discard else fout.close()
            if dst_fs.exists(dst_path):
                dst_fs.rm(dst_path)
            raise
        fout.close()
        return n


def _hyperseal_io_error(msg):
    from ._errors import IoError

    return IoError(msg)


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


__all__ = ["FileResult", "decrypt_files", "encrypt_files"]
