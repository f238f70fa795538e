"""Re-keying every object under an S3 prefix on a Dask cluster (:func:`rekey_prefix`).

The client lists the prefix (paginated) and hands the objects to the workers in batches; a
worker re-keys the objects of its batch concurrently on s3fs's event loop, each as
:func:`hyperseal._rekey_s3` does (a ranged GET of the head, conditional on the ETag the listing
gave, then one ``PutObject`` or a multipart upload whose parts past the first are copied by the
server), with at most ``max_concurrency`` objects in flight per worker. Objects that are not
hyperseal or age files, or that the identities do not open, are skipped and never written; a
failed object is reported with its error and the run goes on.

**Keys on the workers.** The identities, passphrase and recipients are sealed (AES-256-GCM)
under a fresh per-run key that reaches the workers only as a worker plugin, held in memory and
removed when the run ends (the part key of :mod:`hyperseal._large` travels the same way): tasks
carry only the sealed bytes, so nothing a worker may spill to disk holds a key, and no task
name holds anything but the object keys.

**The manifest** (docs/FORMAT.md, "The manifest of a prefix re-key") is written by the client
alone: before a batch is handed out, a ``begin`` line with the object's listed ETag; after, a
``done`` line with the SHA-256 of the header before and after and the new ETag. A resumed run
skips an object whose ETag is the recorded new one, or (ETag moved) whose header digest is the
recorded "after" (checked on the head the worker reads anyway). Every object a re-key writes
carries the user metadata ``hyperseal-rekey: <change id> <SHA-256 of the new header>``, so an
object whose ``begin`` line has no ``done`` and whose ETag moved is done only if its head says,
by that mark, that it is this change's header (written by a run stopped before it heard back);
any other version, such as one its owner saved after the run was stopped, is re-keyed. So a
change such as "add a recipient" is applied once per object, and never skipped where no run
applied it.

**Sops objects** (``sops=True``): each object is read whole and re-keyed in memory by the
library (:func:`hyperseal._rekey_s3._plan_sops`), then written by one conditional ``PutObject``;
objects that are not sops files are skipped, and one already the target is ``"unchanged"``.
The manifest, the mark and the digests are the same, over the whole object instead of its
header, so a rotation too is applied once per object.
"""

import asyncio
import hashlib
import os
import pickle
import secrets
import time

from ._hyperseal import rekey_change_id as _change_id
from ._hyperseal import rekey_selected as _selected
from ._rekey_common import _keys, _no_sops_options, _sops_keys
from ._rekey_s3 import _changed, _not_ours, _not_sops, _plan, _plan_sops, _write

MANIFEST_NAME = ".hyperseal-rekey.manifest"
_MAGIC = "hyperseal-s3-rekey-manifest v1"
#: Read whole on resume, so bounded (about a million objects).
_MANIFEST_MAX = 256 << 20
#: The part copies of one large object in flight at once (the objects' own concurrency is apart).
_PART_COPIES = 4
#: The user metadata every object a prefix re-key writes carries: the change and its header.
_MARK = "hyperseal-rekey"
#: Begin lines are written this many objects ahead of the batches handed out, and done lines
#: at least this often (seconds), so the manifest is rewritten a few times per run, not per batch.
_AHEAD, _FLUSH_S = 512, 10.0


def _escape(key):
    return key.replace("%", "%25").replace("\t", "%09").replace("\r", "%0D").replace("\n", "%0A")


def _unescape(s):
    return s.replace("%0A", "\n").replace("%0D", "\r").replace("%09", "\t").replace("%25", "%")


def _selector(include, exclude):
    """The tree re-key's selection (the library's ``selected_by``): a glob without ``/`` is
    matched against the key's last segment, one with ``/`` against the key under the prefix."""
    return lambda rel: _selected(include, exclude, rel)


# The manifest --------------------------------------------------------------------------------


class _Manifest:
    """The records of earlier runs, and the lines this run adds; written whole by :meth:`flush`
    (an object: conditional on the ETag of the version this run wrote last, so a second run on
    the same manifest is refused; a local file: written beside it and renamed over it)."""

    def __init__(self, fs, where, change_id):
        self.fs, self.where = fs, where  # fs None: a local path
        self.change = change_id
        self.begun, self.done = {}, {}  # key -> listed ETag; key -> (after digest, new ETag)
        self.lines, self.dirty, self.etag, self.flushed = [], False, None, time.monotonic()
        text = self._load()
        if text is None:
            self.lines = [_MAGIC, f"change {self.change}"]
            self.dirty = True
            return
        lines = text.split("\n")
        bad = lambda why: _argument(f"{self.name}: {why}")  # noqa: E731
        if lines[0] != _MAGIC:
            raise bad("not a hyperseal S3 re-key manifest")
        if len(lines) < 2 or lines[1] != f"change {self.change}":
            raise bad("this manifest records another change (remove it, or give another manifest=)")
        for line in lines[2:]:
            f = line.split("\t")
            if f[0] == "begin" and len(f) == 3:
                self.begun[_unescape(f[2])] = f[1]
            elif f[0] == "done" and len(f) == 5:
                self.done[_unescape(f[4])] = (f[2], f[3])
        self.lines = [line for line in lines if line]

    @property
    def name(self):
        return self.where if self.fs is None else f"s3://{self.where[0]}/{self.where[1]}"

    def _load(self):
        if self.fs is None:
            try:
                with open(self.where, "rb") as f:
                    if os.fstat(f.fileno()).st_size > _MANIFEST_MAX:
                        raise _argument(f"{self.name}: larger than a re-key manifest can be (256 MiB)")
                    return f.read().decode()
            except FileNotFoundError:
                return None
        from fsspec.asyn import sync

        got = sync(self.fs.loop, _get_manifest, self.fs, *self.where)
        if got is None:
            return None
        self.etag, data = got
        return data.decode()

    def begin(self, key, etag):
        self.begun[key] = etag
        self.lines.append(f"begin\t{etag}\t{_escape(key)}")
        self.dirty = True

    def finish(self, key, before, after, etag):
        self.done[key] = (after, etag)
        self.lines.append(f"done\t{before}\t{after}\t{etag}\t{_escape(key)}")
        self.dirty = True

    def flush(self, force=True):
        if not self.dirty or (not force and time.monotonic() - self.flushed < _FLUSH_S):
            return
        data = ("\n".join(self.lines) + "\n").encode()
        if self.fs is None:
            tmp = f"{self.where}.{secrets.token_hex(6)}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
                os.fsync(f.fileno())
            os.replace(tmp, self.where)
        else:
            from fsspec.asyn import sync

            self.etag = sync(self.fs.loop, _put_manifest, self.fs, *self.where, data, self.etag)
        self.dirty, self.flushed = False, time.monotonic()


async def _get_manifest(fs, bucket, key):
    """``(ETag, bytes)`` of the manifest object, or None where there is none."""
    from botocore.exceptions import ClientError

    await fs.set_session()
    s3 = await fs.get_s3(bucket)
    try:
        resp = await s3.get_object(Bucket=bucket, Key=key)
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise
    async with resp["Body"] as body:
        if resp["ContentLength"] > _MANIFEST_MAX:
            raise _argument(f"s3://{bucket}/{key}: larger than a re-key manifest can be (256 MiB)")
        return resp["ETag"], await body.read()


async def _honours_if_match(fs, bucket, prefix):
    """Whether the store refuses a PutObject whose ``If-Match`` names another ETag (S3 and MinIO
    do), tried on a scratch object of this run's own: then an object's conditional PUT needs no
    HEAD before it (that check is for stores that ignore the condition, module docs of
    ``_rekey_s3``). Any doubt (no right to write there, an odd answer) keeps the check."""
    from botocore.exceptions import ClientError

    await fs.set_session()
    s3 = await fs.get_s3(bucket)
    key = f"{prefix}.hyperseal-rekey-probe-{secrets.token_hex(8)}"
    try:
        await s3.put_object(Bucket=bucket, Key=key, Body=b"")
    except Exception:
        return False
    try:
        await s3.put_object(Bucket=bucket, Key=key, Body=b"x", IfMatch='"%s"' % ("0" * 32))
        return False
    except ClientError as e:
        return e.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 412
    finally:
        await s3.delete_object(Bucket=bucket, Key=key)


async def _put_manifest(fs, bucket, key, data, etag):
    """Writes the manifest over the version this run read or wrote last (or only if there is
    none yet): a second writer makes this fail instead of losing its lines or ours."""
    from botocore.exceptions import ClientError

    s3 = await fs.get_s3(bucket)
    cond = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
    try:
        return (await s3.put_object(Bucket=bucket, Key=key, Body=data, **cond))["ETag"]
    except ClientError as e:
        if e.response.get("ResponseMetadata", {}).get("HTTPStatusCode") in (409, 412):
            from ._errors import IoError

            raise IoError(f"s3://{bucket}/{key} was written by someone else during this run (another run "
                          f"of the same re-key?): stopped; run it again once the other run is over ({e})") from e
        raise


def _argument(msg):
    from ._errors import ArgumentError

    return ArgumentError(msg)


# On the workers ----------------------------------------------------------------------------

_gates = {}  # (event loop, worker) -> the semaphore bounding that worker's objects in flight


def _unwrap(job, wrapped):
    from distributed import get_worker

    from .aead import open as aead_open

    plugin = get_worker().plugins.get(job)
    if plugin is None or plugin.secret is None:
        from ._errors import IoError

        raise IoError("this worker does not hold the run's key (the run ended)")
    return pickle.loads(aead_open("aes-256-gcm", plugin.secret, wrapped, aad=job.encode()))


def _classify(e):
    """An object's outcome for an error: not ours is skipped, anything else failed."""
    from ._errors import FormatError, NoIdentityError

    if isinstance(e, NoIdentityError):
        return {"outcome": "skipped", "reason": "none of the identities opens it"}
    if isinstance(e, FormatError) and _not_ours(e):
        return {"outcome": "skipped", "reason": "not a hyperseal or age file"}
    if isinstance(e, FormatError) and _not_sops(e):
        return {"outcome": "skipped", "reason": "not a sops file"}
    return {"outcome": "failed", "error": f"{type(e).__name__}: {e}", "code": getattr(e, "code", None)}


async def _one(fs, bucket, item, identities, keys, dry_run, part_size, if_match, change_id, sops):
    key, etag, size, expect = item
    out = {"key": key}
    try:
        plan = _plan_sops if sops else _plan
        st = await plan(fs, bucket, key, identities, keys, listed=(etag, size))
        st["if_match_honoured"] = if_match
        before = hashlib.sha256(st["head"][: st["old_len"]]).hexdigest()
        if expect is not None and before == expect:
            return {**out, "outcome": "already_done"}  # the header a recorded run left
        if _marked(st["info"]) == f"{change_id} {before}":
            return {**out, "outcome": "already_done"}  # this change's header, its record lost
        if st.get("unchanged"):
            return {**out, "outcome": "unchanged"}
        out["plan"] = dict(st["plan"])
        if dry_run:
            return {**out, "outcome": "planned"}
        st["mark"] = {_MARK: f"{change_id} {hashlib.sha256(st['new']).hexdigest()}"}
        got = await _write(st, None, False, part_size, _PART_COPIES)
        return {**out, "outcome": got.written, "bytes": got.bytes, "before": before,
                "after": hashlib.sha256(st["new"]).hexdigest(), "etag": st.get("written_etag")}
    except Exception as e:  # reported per object; the batch goes on
        return {**out, **_classify(e)}


def _marked(info):
    """The re-key mark of an object's stored headers (user metadata), or None."""
    return {k.lower(): v for k, v in (info.get("Metadata") or {}).items()}.get(_MARK)


def _batch(items, bucket, wrapped, job, dry_run, part_size, per_worker, if_match, change_id):
    """The task: one batch of objects, at most ``per_worker`` of this worker's in flight."""
    import fsspec
    from distributed import get_worker
    from fsspec.asyn import sync

    keys = _unwrap(job, wrapped)
    identities, storage_options = keys.pop("identities"), keys.pop("storage_options")
    sops = keys.pop("sops", False)
    fs = fsspec.filesystem("s3", **storage_options)
    worker = get_worker().address

    async def run():
        gate = _gates.setdefault((id(asyncio.get_running_loop()), worker, per_worker),
                                 asyncio.Semaphore(per_worker))

        async def bounded(item):
            async with gate:
                return await _one(fs, bucket, item, identities, keys, dry_run, part_size, if_match, change_id,
                                  sops)

        return await asyncio.gather(*(bounded(i) for i in items))

    return sync(fs.loop, run)


# On the client -----------------------------------------------------------------------------


async def _list(fs, bucket, prefix):
    """``(key, ETag, size)`` of every object under ``prefix``, page by page."""
    await fs.set_session()
    s3 = await fs.get_s3(bucket)
    out = []
    async for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out += [(o["Key"], o["ETag"], o["Size"]) for o in page.get("Contents", [])]
    return out


def _split(url):
    if not isinstance(url, str) or not url.startswith(("s3://", "s3a://")):
        raise _argument(f"{url!r}: rekey_prefix takes an s3:// URL (s3://bucket/prefix/)")
    bucket, _, prefix = url.split("://", 1)[1].partition("/")
    if not bucket:
        raise _argument(f"{url!r}: no bucket")
    return bucket, prefix if not prefix or prefix.endswith("/") else prefix + "/"


def _open_manifest(fs, manifest, bucket, prefix, change_id):
    if manifest is None:
        return _Manifest(fs, (bucket, prefix + MANIFEST_NAME), change_id)
    manifest = os.fspath(manifest)
    if manifest.startswith(("s3://", "s3a://")):
        mbucket, mkey = manifest.split("://", 1)[1].split("/", 1)
        return _Manifest(fs, (mbucket, mkey), change_id)
    if "://" in manifest:
        raise _argument(f"{manifest!r}: a manifest is an s3:// URL or a local path")
    return _Manifest(None, manifest, change_id)


class _RunKey:
    """The run's key as a plugin on every worker, and the keys sealed under it."""

    def __init__(self, client, keys):
        from ._large import _JobKey
        from .aead import seal

        self.client, self.name = client, f"hyperseal-rekey-{secrets.token_hex(8)}"
        secret = secrets.token_bytes(32)
        client.register_plugin(_JobKey(self.name, secret), name=self.name)
        self.wrapped = seal("aes-256-gcm", secret, pickle.dumps(keys), aad=self.name.encode())

    def close(self):
        try:
            self.client.unregister_worker_plugin(self.name)
        except Exception:  # the cluster is gone: so is the key
            pass


_OUTCOMES = ("s3_put", "s3_multipart", "planned", "already_done", "skipped", "failed")


def _sops_change_id(keys):
    """A sops change's name in the manifest and the marks: what it does, digested."""
    from ._rekey_common import _seq

    names = lambda xs: sorted(x if isinstance(x, str) else x.public for x in _seq(xs))  # noqa: E731
    what = repr((keys["rotate"], names(keys["recipients"]), names(keys["add"]), names(keys["remove"]), keys["force"]))
    return ("sops-rotate-" if keys["rotate"] else "sops-") + hashlib.sha256(what.encode()).hexdigest()[:32]


def rekey_prefix(client, url, identities=None, *, passphrase=None, recipients=None, add=(), remove=(),
                 remove_own=False, include=(), exclude=(), dry_run=False, manifest=None, max_concurrency=16,
                 part_size=256 << 20, storage_options=None, progress=None, allow_plugins=False, sops=False,
                 rotate=False):
    """Re-keys every object under ``url`` (``s3://bucket/prefix/``; a prefix is a folder: a
    missing trailing ``/`` is added) across the cluster's workers, without downloading payloads
    (see the module docs). The keys are :func:`hyperseal.rekey_file`'s: ``identities`` (or
    ``passphrase``) open the headers; ``recipients`` (the full new list) or ``add``/``remove``
    (an edit); ``remove_own``; ``allow_plugins``. ``include``/``exclude``: globs on the key
    under the prefix, as the tree re-key's (``*``/``?`` within a segment, ``**`` across ``/``;
    a glob without ``/`` is matched against the last segment).

    Returns ``(objects, summary)``: a dict per listed object in listing order (``key``,
    ``outcome`` — ``"s3_put"`` or ``"s3_multipart"`` (re-keyed: its ``plan`` and ``bytes``),
    ``"planned"`` (dry run: its ``plan``), ``"already_done"``, ``"skipped"`` with its
    ``reason``, or ``"failed"`` with its ``error`` and ``code``) and the count of each outcome.
    A failed object (changed by another writer meanwhile: the other writer's bytes are kept) is
    reported, not raised; the call raises only for its own errors (the listing, the manifest).

    The manifest (``manifest=``: an ``s3://`` URL or a local path; by default the object
    ``PREFIX/.hyperseal-rekey.manifest``, never itself re-keyed) makes the call resumable: run it
    again with the same arguments and it re-keys only what is left, applying the change once per
    object. A manifest of another change is refused. ``dry_run=True`` reports, writes nothing
    (no manifest either).

    ``max_concurrency``: objects in flight per worker (and per task); ``part_size``: the
    server-side copy parts of large objects; ``storage_options``: s3fs's, on the client and
    every worker (sealed with the keys: they may hold credentials). ``progress(done, total)`` is
    called as objects finish.

    ``sops=True``: the sops objects under the prefix, each moved to ``recipients`` or edited by
    ``add``/``remove`` (``rotate=True``: a fresh data key too); see the module docs. Objects
    that are not sops files are skipped; one already the target is ``"unchanged"``; a
    re-keyed one is ``"s3_put"`` with ``plan`` ``{"added", "removed"}`` (age entries)."""
    import fsspec
    from distributed import as_completed, wait
    from fsspec.asyn import sync

    bucket, prefix = _split(url)
    if max_concurrency < 1:
        raise _argument("max_concurrency must be at least 1")
    storage_options = dict(storage_options or {})
    if sops:
        keys = _sops_keys(recipients, add, remove, passphrase, remove_own, allow_plugins, rotate)
        if not (keys["recipients"] or keys["add"] or keys["remove"]):
            raise _argument("a prefix has no .sops.yaml: give recipients, or add and remove")
        change_id = _sops_change_id(keys)
        keys["sops"] = True
    else:
        _no_sops_options(rotate)
        keys = _keys(recipients, add, remove, passphrase, remove_own, allow_plugins)
        # The change as every manifest names it (the library's Change::id).
        change_id = _change_id(recipients, keys["add"], keys["remove"], remove_own, allow_plugins)
    fs = fsspec.filesystem("s3", **storage_options)
    man = None if dry_run else _open_manifest(fs, manifest, bucket, prefix, change_id)
    own = man.where if man is not None and man.fs is not None else None
    select = _selector(list(include), list(exclude))

    listed = [o for o in sync(fs.loop, _list, fs, bucket, prefix)
              if (bucket, o[0]) != own and not o[0].endswith("/" + MANIFEST_NAME) and select(o[0][len(prefix):])]
    results, todo = {}, []
    for key, etag, size in listed:
        done = man.done.get(key) if man is not None else None
        if done is not None and done[1] == etag:
            results[key] = {"key": key, "outcome": "already_done"}
        else:
            # Anything else goes to a worker, which finds a write a stopped run made by its mark
            # (its head is read anyway) and re-keys every other version.
            todo.append((key, etag, size, done[0] if done is not None else None))
    total, count = len(listed), len(results)
    if progress and count:
        progress(count, total)

    if_match = bool(todo) and not dry_run and sync(fs.loop, _honours_if_match, fs, bucket, prefix)
    per = max_concurrency
    batches = [todo[i:i + per] for i in range(0, len(todo), per)]
    threads = max(1, sum(client.nthreads().values()))
    run_key = _RunKey(client, dict(identities=identities, storage_options=storage_options, **keys)) if todo else None
    begun_to = 0  # todo[:begun_to] have begin lines in the manifest

    def submit(i):
        nonlocal begun_to
        end = min(len(todo), (i + 1) * per)
        if man is not None and end > begun_to:
            for key, etag, _, _ in todo[begun_to:end + _AHEAD]:
                if man.begun.get(key) != etag:
                    man.begin(key, etag)
            begun_to = end + _AHEAD
            man.flush()  # durable before any object of the batch is touched
        fut = client.submit(_batch, batches[i], bucket, run_key.wrapped, run_key.name, dry_run, part_size, per,
                            if_match, change_id, pure=False)
        owner[fut] = i
        return fut

    def take(fut, report):
        nonlocal count
        try:
            got = fut.result()
        except Exception as e:  # the whole task failed (its worker was lost, ...): each object says so
            got = [{"key": k, **_classify(e)} for k, _, _, _ in batches[owner[fut]]]
        for r in got:
            before, after, etag = r.pop("before", None), r.pop("after", None), r.pop("etag", None)
            if man is not None and r["outcome"] in ("s3_put", "s3_multipart"):
                man.finish(r["key"], before, after, etag)
            results[r["key"]] = r
            count += 1
            if report and progress:
                progress(count, total)

    owner, inflight, nxt = {}, set(), 0
    try:
        ac = as_completed()
        while nxt < len(batches) and len(inflight) < 2 * threads:
            fut = submit(nxt)
            inflight.add(fut)
            ac.add(fut)
            nxt += 1
        for fut in ac:
            inflight.discard(fut)
            take(fut, True)
            if nxt < len(batches):
                fut = submit(nxt)
                inflight.add(fut)
                ac.add(fut)
                nxt += 1
            if man is not None:
                man.flush(force=False)
    except Exception:
        # Tasks that started cannot be stopped: wait for them, so their objects are recorded.
        wait(list(inflight))
        for fut in inflight:
            take(fut, False)
        raise
    except BaseException:  # interrupted: stop what has not started; the begin lines cover the rest
        client.cancel(list(inflight))
        raise
    finally:
        try:
            if man is not None:
                man.flush()
        finally:
            if run_key is not None:
                run_key.close()
    objects = [results[k] for k, _, _ in listed]
    summary = {o: 0 for o in _OUTCOMES + (("unchanged",) if sops else ())}
    for r in objects:
        summary[r["outcome"]] += 1
    return objects, summary
