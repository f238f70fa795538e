"""The machinery of :func:`hyperseal.dask.encrypt_large` and :func:`~hyperseal.dask.decrypt_large`:
source stamps, where the parts go (destinations), the part key kept off the workers' disks, and
the tasks. The rules themselves are the library's: the nonce rule (``PartKey.seal_claimed`` and a
claim store, :mod:`hyperseal._claims`), the nothing-lost output (:class:`AtomicOutput`).

**Destinations.** A local path (on a filesystem every worker sees) is the library's
``AtomicOutput`` with a named temporary: workers write their parts at their offsets into the
hidden ``.hyperseal-*.partial`` beside the destination, which gets its name at the end by
``link(2)`` — a file that appeared there meanwhile is kept and the job fails — or, with
``force=True``, by an atomic rename. An ``s3://`` destination is one multipart upload: every
worker uploads its part as part number *i* (no part objects, no server-side copy), and the
client completes it with ``If-None-Match: *`` (without ``force``), so an object that appeared
meanwhile is kept; on failure the upload is aborted. Any other fsspec destination gets one
hidden object per part, joined by streaming into the destination opened with mode ``"xb"``.

**The part key stays off disk.** A Dask worker spills data it holds (task arguments and
results) to its local directory under memory pressure. So tasks never get the part key itself:
they get it sealed (AES-256-GCM) under a fresh per-job key that reaches the workers only as a
worker plugin — held in worker memory, never in spillable data — and is unregistered when the
job ends. A task unwraps the part key for the duration of its part.
"""

import os
import posixpath
import secrets
import threading
from dataclasses import dataclass

from . import _hyperseal
from ._claims import LocalClaims, S3Claims, claims_at

_COPY = 4 << 20
#: S3 refuses multipart uploads whose parts (all but the last) are smaller.
S3_MIN_PART = 5 << 20


def is_local(path):
    return "://" not in path or path.startswith("file://")


def local(path):
    return path[len("file://"):] if path.startswith("file://") else path


def _io_error(msg):
    from ._errors import IoError

    return IoError(msg)


def _fs(url):
    import fsspec

    return fsspec.core.url_to_fs(url)


# Source stamps ------------------------------------------------------------------------------


def stamp(url):
    """What must not change while a source is sealed, size first: on local files (inode, size,
    mtime_ns, ctime_ns) — ``os.utime`` can put back the modification time, not the change
    time; on object stores the version id or ETag, which every rewrite changes."""
    if is_local(url) or url.startswith("local://"):
        st = os.stat(local(url.removeprefix("local://")))
        return st.st_size, ("file", st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    fs, path = _fs(url)
    fs.invalidate_cache(path)
    info = fs.info(path)
    version = next((info[k] for k in ("VersionId", "ETag", "etag", "generation", "md5") if info.get(k)), None)
    modified = next((str(info[k]) for k in ("mtime", "LastModified", "last_modified", "created") if info.get(k)), None)
    return info["size"], (version, modified)


# The part key, wrapped under a per-job key --------------------------------------------------

try:
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # hyperseal.dask needs distributed; this module may be imported without it
    WorkerPlugin = object


class _JobKey(WorkerPlugin):
    """A per-job key, held in each worker's memory as a plugin (plugins are never spilled)."""

    def __init__(self, name, secret):
        self.name, self.secret = name, secret

    def teardown(self, worker):
        self.secret = None


class JobKeys:
    """Registers a fresh job key on the cluster and wraps the part key under it; ``close()``
    removes it from every worker."""

    def __init__(self, client, part_key):
        from .aead import seal

        self.client, self.name = client, f"hyperseal-job-{secrets.token_hex(8)}"
        secret = secrets.token_bytes(32)
        client.register_plugin(_JobKey(self.name, secret), name=self.name)
        self.wrapped = seal("aes-256-gcm", secret, part_key.to_bytes(), aad=self.name.encode())

    def close(self):
        try:
            self.client.unregister_worker_plugin(self.name)
        except Exception:  # the cluster is gone: so is the key
            pass


def unwrap(job, wrapped):
    """In a task: the part key, from the job key this worker holds."""
    from distributed import get_worker

    from .aead import open as aead_open
    from .parts import PartKey

    plugin = get_worker().plugins.get(job)
    if plugin is None or plugin.secret is None:
        raise _io_error("this worker does not hold the job's key (the job ended)")
    return PartKey.from_bytes(aead_open("aes-256-gcm", plugin.secret, wrapped, aad=job.encode()))


# Reading and writing parts --------------------------------------------------------------------

_scratch = threading.local()


def _buffer(name, n):
    """A per-thread buffer of ``n`` bytes, reused from part to part (a fresh 64 MiB object per
    part costs more page faults than its sealing)."""
    buf = getattr(_scratch, name, None)
    if buf is None or len(buf) < n:
        buf = bytearray(n)
        setattr(_scratch, name, buf)
    return memoryview(buf)[:n]


def read_range(url, start, end):
    """Bytes ``start:end`` of ``url``."""
    n = end - start
    if is_local(url):
        view = _buffer("input", n)
        with open(local(url), "rb") as f:
            got = 0
            while got < n:
                k = os.preadv(f.fileno(), [view[got:]], start + got)
                if k == 0:
                    break
                got += k
    else:
        fs, path = _fs(url)
        view = fs.cat_file(path, start=start, end=end)
        got = len(view)
    if got != n:
        raise _io_error(f"{url} changed size while it was being read")
    return view


def _pwrite_all(fd, data, at):
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, at)
        view, at = view[n:], at + n


def write_part(where, offset, index, head, data):
    """A worker's output for the part whose first chunk is ``index``: at ``offset`` in the
    shared temporary file (the header, on the first part, just before it), as part number
    ``index // chunks_per_part + 1`` of the multipart upload, or as part object ``index``."""
    kind = where[0]
    if kind == "file":
        fd = os.open(where[1], os.O_WRONLY)  # never O_CREAT: a discarded output stays gone
        try:
            if head:
                _pwrite_all(fd, head, offset - len(head))
            _pwrite_all(fd, data, offset)
        finally:
            os.close(fd)
        return
    fs, path = _fs(where[1])
    if kind == "s3":
        _, _, upload_id, per = where
        bucket, key, _ = fs.split_path(path)
        body = bytes(head) + bytes(data) if head else data if isinstance(data, bytes) else bytes(data)
        fs.call_s3("upload_part", Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=index // per + 1,
                   Body=body)
        return
    with fs.open(posixpath.join(path, f"{index:020d}"), "wb") as f:
        f.write(head)
        f.write(data)


def _mapped(f, start, end, writable):
    import mmap

    base = start - start % mmap.ALLOCATIONGRANULARITY
    access = mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ
    m = mmap.mmap(f.fileno(), end - base, offset=base, access=access)
    return memoryview(m)[start - base:end - base], m


def seal_task(part, src, wrapped, job, where, head, part_size, claims):
    """Seals one part into memory this worker owns, claiming it first (the library refuses
    other bytes under nonces already used), then writes it."""
    key = unwrap(job, wrapped)
    first, p0, p1, f0, f1 = part
    data = read_range(src, p0, p1)
    if where[0] == "file":
        out = _buffer("output", f1 - f0)
        key.seal_claimed_into(claims, part_size, first, data, out)
    else:
        out = key.seal_claimed(claims, part_size, first, data)
    write_part(where, f0, first, head if first == 0 else b"", out)
    return p1 - p0


def open_task(part, src, wrapped, job, where):
    """Opens one part. Local to local: both ranges memory-mapped, the plaintext written where
    it belongs in the (unnamed until commit) output."""
    key = unwrap(job, wrapped)
    first, p0, p1, f0, f1 = part
    if where[0] == "file" and is_local(src) and p1 > p0:
        with open(local(src), "rb") as fin, open(where[1], "r+b") as fout:
            (vin, min_), (vout, mout) = _mapped(fin, f0, f1, False), _mapped(fout, p0, p1, True)
            try:
                key.open_into(first, vin, vout)
            finally:
                vin.release()
                vout.release()
                min_.close()
                mout.close()
        return f1 - f0
    out = _buffer("output", f1 - f0)  # open_into takes a buffer of the sealed size
    n = key.open_into(first, read_range(src, f0, f1), out)
    write_part(where, p0, first, b"", out[:n])
    return f1 - f0


# Destinations ---------------------------------------------------------------------------------


def _checked(claims):
    """``claims``, once proven to refuse a second create of one name (see :mod:`._claims`);
    removed, and the job refused, otherwise."""
    try:
        claims.check()
    except BaseException:
        claims.remove()
        raise
    return claims


class LocalDestination:
    """The library's AtomicOutput; claims in a hidden directory beside it."""

    def __init__(self, dst, force, sealing, length):
        path = local(dst)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.out = _hyperseal.AtomicOutput(path, force=force)
        os.truncate(self.out.temporary_path, length)  # the decrypting workers map their ranges
        self.where = ("file", self.out.temporary_path)
        self.claims = None
        if sealing:
            try:
                self.claims = _checked(LocalClaims.create(self.out.temporary_path[: -len(".partial")] + ".claims"))
            except BaseException:
                self.out.discard()
                raise

    def commit(self, parts):
        self.out.commit()

    def discard(self):
        self.out.discard()


class S3Destination:
    """One multipart upload, completed conditionally or aborted."""

    def __init__(self, dst, force, sealing, per, name):
        self.fs, self.path = _fs(dst)
        self.force = force
        if not force and self.fs.exists(self.path):
            raise _io_error(f"output file {dst} already exists (pass force=True to replace it)")
        self.bucket, self.key, _ = self.fs.split_path(self.path)
        parent = self.fs._parent(self.path)
        # Proven before the upload exists, so a refused store leaves nothing behind.
        claims = S3Claims(self.fs.unstrip_protocol(posixpath.join(parent, f".{name}.claims")))
        self.claims = _checked(claims) if sealing else None
        self.upload = self.fs.call_s3("create_multipart_upload", Bucket=self.bucket, Key=self.key)["UploadId"]
        self.where = ("s3", self.fs.unstrip_protocol(self.path), self.upload, per)

    def commit(self, sizes):
        listed, marker = [], 0
        while True:
            page = self.fs.call_s3("list_parts", Bucket=self.bucket, Key=self.key, UploadId=self.upload,
                                   PartNumberMarker=marker)
            listed += page.get("Parts", [])
            if not page.get("IsTruncated"):
                break
            marker = page["NextPartNumberMarker"]
        got = [(p["PartNumber"], p["Size"]) for p in sorted(listed, key=lambda p: p["PartNumber"])]
        if got != [(i + 1, n) for i, n in enumerate(sizes)]:
            raise _io_error(f"the upload holds {len(got)} parts, not the {len(sizes)} expected")
        parts = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"]} for p in listed]
        match = {} if self.force else {"IfNoneMatch": "*"}
        try:
            self.fs.call_s3("complete_multipart_upload", Bucket=self.bucket, Key=self.key, UploadId=self.upload,
                            MultipartUpload={"Parts": sorted(parts, key=lambda p: p["PartNumber"])}, **match)
        except OSError as e:
            if not self.force and self.fs.exists(self.path):
                raise _io_error(f"output file s3://{self.path} appeared while it was written; it was kept "
                                "(pass force=True to replace it)") from e
            raise
        self.upload = None
        self.fs.invalidate_cache(self.path)

    def discard(self):
        if self.upload is not None:
            try:
                self.fs.call_s3("abort_multipart_upload", Bucket=self.bucket, Key=self.key, UploadId=self.upload)
            except FileNotFoundError:
                pass
            self.upload = None


class FsspecDestination:
    """One hidden object per part, joined by streaming into the destination."""

    def __init__(self, dst, force, sealing, name):
        self.fs, self.path = _fs(dst)
        self.force = force
        if not force and self.fs.exists(self.path):
            raise _io_error(f"output file {dst} already exists (pass force=True to replace it)")
        parent = self.fs._parent(self.path)
        self.fs.makedirs(parent, exist_ok=True)
        self.tmp = posixpath.join(parent, f".{name}.parts")
        self.where = ("fs", self.fs.unstrip_protocol(self.tmp))
        claims = claims_at(self.fs.unstrip_protocol(posixpath.join(parent, f".{name}.claims")))
        self.claims = _checked(claims) if sealing else None

    def commit(self, sizes):
        names = sorted(self.fs.ls(self.tmp, detail=False)) if self.fs.exists(self.tmp) else []
        if len(names) != len(sizes):
            raise _io_error(f"{len(names)} of {len(sizes)} parts were written")
        try:
            with self.fs.open(self.path, "wb" if self.force else "xb") as out:
                for n in names:
                    with self.fs.open(n, "rb") as f:
                        while block := f.read(_COPY):
                            out.write(block)
        except FileExistsError as e:
            raise _io_error(f"output file {self.path} appeared while it was written; it was kept") from e
        self.fs.rm(self.tmp, recursive=True)

    def discard(self):
        if self.fs.exists(self.tmp):
            self.fs.rm(self.tmp, recursive=True)


def destination(dst, force, sealing, per, length):
    """Where the ``length`` bytes of ``dst`` go (see the module docs)."""
    if is_local(dst):
        return LocalDestination(dst, force, sealing, length)
    name = f"{posixpath.basename(dst.rstrip('/'))}.{secrets.token_hex(6)}"
    fs, _ = _fs(dst)
    if type(fs).__name__ == "S3FileSystem":
        return S3Destination(dst, force, sealing, per, name)
    return FsspecDestination(dst, force, sealing, name)


# What encrypt_large, decrypt_large (hyperseal.dask) and rotate_large (hyperseal._rotate) share.


def _hyperseal_io_error(msg):
    from ._errors import IoError

    return IoError(msg)


@dataclass(frozen=True)
class LargeResult:
    """One object sealed or opened across workers: ``size`` is the plaintext length,
    ``file_len`` the encrypted file's, ``parts`` how many tasks did the work."""

    src: str
    dst: str
    size: int
    file_len: int
    parts: int


_PART = 64 << 20


def _part_size(key, part_size):
    chunk = key.chunk_size
    return max(chunk, -(-part_size // chunk) * chunk)  # rounded up to whole chunks


def _run_parts(client, task, plan, dest, progress, **extra):
    from dask.distributed import as_completed, wait

    futures = client.map(task, plan, where=dest.where, pure=False, **extra)
    try:
        done = 0
        for f in as_completed(futures):
            done += f.result()  # the first failure raises here, with its hyperseal class
            if progress:
                progress(done)
    except Exception:
        # Running tasks cannot be stopped: wait for them, so none writes after the cleanup.
        wait(futures)
        raise
    except BaseException:  # interrupted: stop what has not started
        client.cancel(futures)
        raise


def _job(client, key, dst, force, sealing, part_size, length, run):
    """Runs ``run(dest, job)`` with the destination and the job key; the destination appears
    only if it returns, and nothing is left otherwise (claims are removed once every task has
    ended)."""
    per = part_size // key.chunk_size
    dest = destination(dst, force, sealing, per, length)
    job = None
    try:
        job = JobKeys(client, key)
        run(dest, job)
    except BaseException:
        dest.discard()
        raise
    finally:
        if job is not None:
            job.close()
        if dest.claims is not None:
            dest.claims.remove()


def _check_s3_parts(dst, plan, part_size):
    if len(plan) > 1 and dst.startswith(("s3://", "s3a://")) and part_size < S3_MIN_PART:
        from ._errors import ArgumentError

        raise ArgumentError(f"part_size {part_size} is below S3's 5 MiB minimum for multipart uploads")
