"""Claim stores for :meth:`hyperseal.parts.PartKey.seal_claimed`: the library records the plan
and every sealed part here before the sealed bytes are released, so no part is sealed twice
with different bytes under one key (``parts::claim`` in the library says why and how).

A store needs one operation, ``put_new(name, record)``: store ``record`` under ``name`` only if
the name is new, atomically, and return ``None`` — or return the record already there. Claims
protect exactly as well as that "only if new" holds, so a job proves it first (:meth:`check`,
which :func:`hyperseal.dask.encrypt_large` runs before any part is sealed): it creates one probe
name twice, and a store that lets the second create through is refused, named, before any key
exists. Three implementations, for where :mod:`hyperseal.dask` puts its outputs:

* :class:`LocalClaims`, a directory on a filesystem every worker sees: the record is written
  to a private temporary name and hard-linked to its name (``link(2)`` fails if the name
  exists), so a record appears whole or not at all and exactly one of two racing writers wins.
* :class:`S3Claims`, a prefix in an S3 bucket: one ``PutObject`` with ``If-None-Match: *`` per
  record, sent through s3fs's own botocore client (not through ``open(path, "xb")``: s3fs
  2024.12.0–2025.5.1 sent small "xb" writes without the condition). The answer is read by HTTP
  status: 412 means the name exists; 409 (``ConditionalRequestConflict``, a racing create) is
  retried. A server that ignores the header answers 200 twice: :meth:`check` catches it.
* :class:`FsspecClaims`, a folder on another fsspec filesystem, created with mode ``"xb"``: as
  atomic as that backend's exclusive create (``memory://`` is for tests in one process).
"""

import asyncio
import os
import posixpath
import secrets
import time

#: What every store must do, said once for every refusal.
_NEEDS = ("claims need a store that creates a name only if it is new (an S3 PutObject with "
          "If-None-Match: * answered 412 when the object exists; O_EXCL/link(2) on a filesystem)")


def _refuse(where, why):
    from ._errors import IoError

    return IoError(f"{where} cannot hold part claims: {why}; {_NEEDS}. Nothing was sealed")


class _Probe:
    """:meth:`check`, shared: the same probe name created twice must be refused the second time."""

    def check(self):
        """Proves this store refuses a second create of one name; raises ``IoError`` naming the
        store otherwise. The probe is removed where the store allows."""
        name = f"probe-{secrets.token_hex(8)}"
        first, second = b"\x01" * 32, b"\x02" * 32
        try:
            try:
                got = [self.put_new(name, first), self.put_new(name, second)]
            except OSError as e:
                raise _refuse(self.where, f"a conditional create failed ({e})") from e
            if got[0] is not None:
                raise _refuse(self.where, "a new name was reported as taken")
            if got[1] is None:
                raise _refuse(self.where, "it let a second create of one name through (the first was overwritten)")
            if bytes(got[1]) != first:
                raise _refuse(self.where, "it returned another record than the one stored")
        finally:
            self._delete(name)


class LocalClaims(_Probe):
    """Claims as files in ``directory`` (created, mode 0700, by :meth:`create`)."""

    def __init__(self, directory):
        self.directory = directory

    @classmethod
    def create(cls, directory):
        os.mkdir(directory, 0o700)
        return cls(directory)

    @property
    def where(self):
        return f"the directory {self.directory}"

    def put_new(self, name, record):
        path = os.path.join(self.directory, name)
        tmp = os.path.join(self.directory, f".{name}.{secrets.token_hex(6)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, record)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
            return None
        except FileExistsError:
            with open(path, "rb") as f:
                return f.read()
        finally:
            os.unlink(tmp)

    def _delete(self, name):
        try:
            os.unlink(os.path.join(self.directory, name))
        except FileNotFoundError:
            pass

    def remove(self):
        import shutil

        shutil.rmtree(self.directory, ignore_errors=True)


class S3Claims(_Probe):
    """Claims as objects under ``url`` (``s3://bucket/prefix``), each created by a conditional
    ``PutObject``. Holds only the URL, so it pickles to workers, which find the filesystem as
    the driver did."""

    #: Attempts at a create that keeps meeting 409 (a racing create still in flight).
    CONFLICT_TRIES = 8

    def __init__(self, url):
        self.url = url

    def _fs(self):
        import fsspec

        fs, path = fsspec.core.url_to_fs(self.url)
        bucket, prefix, _ = fs.split_path(path)
        return fs, bucket, prefix.rstrip("/")

    def _run(self, coro_fn, *args):
        from fsspec.asyn import sync

        fs, bucket, prefix = self._fs()
        return sync(fs.loop, coro_fn, fs, bucket, prefix, *args)

    @property
    def where(self):
        async def endpoint(fs, bucket, prefix):
            await fs.set_session()
            return (await fs.get_s3(bucket)).meta.endpoint_url

        try:
            at = self._run(endpoint)
        except Exception:  # naming the store must not hide why it was refused
            at = "an unknown endpoint"
        return f"the S3 store at {at}, bucket {self._fs()[1]},"

    def check(self):
        """As every store's (see :class:`_Probe`), after checking that this botocore knows the
        condition on both writes that need it (s3fs drops parameters its botocore does not
        know, so an old one would send them unconditionally)."""

        async def unknown(fs, bucket, prefix):
            await fs.set_session()
            model = (await fs.get_s3(bucket)).meta.service_model
            ops = ("PutObject", "CompleteMultipartUpload")
            return [op for op in ops if "IfNoneMatch" not in model.operation_model(op).input_shape.members]

        missing = self._run(unknown)
        if missing:
            import botocore

            raise _refuse(self.where, f"botocore {botocore.__version__} cannot send If-None-Match on "
                          f"{', '.join(missing)} (botocore 1.35.2 or newer can)")
        super().check()

    def put_new(self, name, record):
        return self._run(self._put_new, name, bytes(record))

    async def _put_new(self, fs, bucket, prefix, name, record):
        from botocore.exceptions import ClientError

        await fs.set_session()
        s3 = await fs.get_s3(bucket)
        key = f"{prefix}/{name}" if prefix else name
        for attempt in range(self.CONFLICT_TRIES):
            try:
                # Straight to the client: botocore checks the parameter (one too old to know
                # IfNoneMatch fails here instead of sending an unconditional put).
                await s3.put_object(Bucket=bucket, Key=key, Body=record, IfNoneMatch="*")
                return None
            except ClientError as e:
                status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if status == 412:
                    break
                if status == 409 and attempt + 1 < self.CONFLICT_TRIES:
                    await asyncio.sleep(0.05 * (attempt + 1))
                    continue
                raise OSError(f"cannot claim {name} under {self.url}: {e}") from e
        resp = await s3.get_object(Bucket=bucket, Key=key)
        async with resp["Body"] as body:
            return await body.read()

    def _delete(self, name):
        async def delete(fs, bucket, prefix):
            await fs.set_session()
            s3 = await fs.get_s3(bucket)
            await s3.delete_object(Bucket=bucket, Key=f"{prefix}/{name}" if prefix else name)

        try:
            self._run(delete)
        except Exception:  # a probe left behind is a 32-byte object under the job's prefix
            pass

    def remove(self):
        fs, bucket, prefix = self._fs()
        path = f"{bucket}/{prefix}"
        fs.invalidate_cache(path)
        if fs.exists(path):
            fs.rm(path, recursive=True)


class FsspecClaims(_Probe):
    """Claims as objects under ``url`` (an fsspec URL of a folder), created with mode ``"xb"``."""

    def __init__(self, url):
        self.url = url

    def _fs(self):
        import fsspec

        return fsspec.core.url_to_fs(self.url)

    @property
    def where(self):
        return f"the fsspec folder {self.url}"

    def put_new(self, name, record):
        fs, root = self._fs()
        path = posixpath.join(root, name)
        for attempt in range(5):
            try:
                with fs.open(path, "xb") as f:
                    f.write(record)
                return None
            except FileExistsError:
                pass
            except OSError as e:
                # Some backends name a refused exclusive create FileExistsError only sometimes;
                # a conflict (a racing create) is retried.
                if not fs.exists(path):
                    if "Conflict" in str(e) and attempt < 4:
                        time.sleep(0.05 * (attempt + 1))
                        continue
                    raise
            fs.invalidate_cache(path)
            return fs.cat_file(path)
        raise OSError(f"cannot claim {name} under {self.url}")

    def _delete(self, name):
        fs, root = self._fs()
        try:
            fs.rm_file(posixpath.join(root, name))
        except (FileNotFoundError, OSError):
            pass

    def remove(self):
        fs, root = self._fs()
        if fs.exists(root):
            fs.rm(root, recursive=True)


def claims_at(url):
    """The store for a folder URL on a shared filesystem or object store: S3 (s3fs) gets
    :class:`S3Claims`, any other fsspec filesystem :class:`FsspecClaims`."""
    import fsspec

    fs, _ = fsspec.core.url_to_fs(url)
    if type(fs).__name__ == "S3FileSystem":
        return S3Claims(url)
    return FsspecClaims(url)
