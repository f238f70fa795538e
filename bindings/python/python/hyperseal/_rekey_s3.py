"""Re-keying an S3 object without downloading it.

The new object is the new header followed by the old object from the old header's end, so it
is written as one multipart upload over the same key: part 1 is the new header plus the
payload's first bytes up to S3's 5 MiB minimum part, read by one ranged GET of the object's
head; every other part is an ``UploadPartCopy`` of a byte range of the old object, done by the
server. Only the head crosses the network. An object smaller than that is written by one
``PutObject`` of the new header and the tail.

Every read and copy is conditional on the ETag seen at the start (``IfMatch`` /
``CopySourceIfMatch``), and so is the write that makes the new object visible
(``CompleteMultipartUpload`` or ``PutObject`` with ``If-Match``, botocore 1.35.2 or newer).
A store that ignores ``If-Match`` on the completion would let a write that landed between the
last check and the completion be overwritten; so the ETag is also checked just before
completing, which narrows that window to one round trip but cannot close it: on such a store,
do not re-key objects that others write at the same time. A concurrent writer wins: the
re-key raises ``IoError`` and the object is as that writer left it. A prefix re-key
(``hyperseal.dask.rekey_prefix``) first tries, on a scratch object, whether the store refuses a
``PutObject`` whose ``If-Match`` fails (S3 and MinIO do); where it does, a small object's PUT
goes without that HEAD before it, since the PUT's own condition then closes the window.

A write that fails (a refused condition, a refused part copy, a cancelled call) leaves no parts
behind: the part copies still running are cancelled and waited for, then the upload is aborted,
then its parts are listed until the store says the upload is gone (S3 documents that a part
still in flight can land after an abort; it is aborted again then). If the store still lists it
after three aborts, the error says so and names the upload ID to abort by hand.

A sops object (``sops=True``) is small and changes in its metadata only, so it is read whole by
one GET conditional on its ETag, re-keyed in memory by the library (``rekey::sops``), and written
back by one ``PutObject`` with the same conditions: the same nothing-lost rules.

Content type, user metadata and other stored headers, and tags, are carried over; the new
object gets a new ETag (and, with versioning, a new version: the old version still opens for
removed recipients).

The client is s3fs's own botocore client (as :class:`hyperseal._claims.S3Claims` uses it), so
its credentials, endpoint and timeouts apply.
"""

import asyncio
from urllib.parse import urlencode

from ._hyperseal import looks_encrypted as _looks_encrypted
from ._hyperseal import looks_like_sops as _looks_like_sops
from ._hyperseal import rekey_head as _rekey_head
from ._hyperseal import rekey_sops_bytes as _rekey_sops_bytes
from ._rekey_common import HEADER_BYTES, SOPS_BYTES, RekeyResult

#: S3's smallest part other than the last, its largest, and its most parts per upload.
MIN_PART = 5 << 20
MAX_PART = 5 << 30
MAX_PARTS = 10_000
#: Read beyond 5 MiB at once so a new header shorter than the old still fills part 1.
_MARGIN = 64 << 10
#: Stored headers carried over to the new object.
_CARRIED = ("ContentType", "ContentEncoding", "ContentDisposition", "ContentLanguage", "CacheControl",
            "Expires", "Metadata", "StorageClass", "ServerSideEncryption", "SSEKMSKeyId")


def _changed(where, e=None):
    from ._errors import IoError

    why = f" ({e})" if e is not None else ""
    return IoError(f"{where} changed while it was re-keyed{why}: it is as the other writer left it, "
                   "nothing was written; re-key it again")


def _refused(where, dest_url, e):
    """A conditional write refused: over the object, it changed; to another, that one exists."""
    if dest_url is None:
        return _changed(where, e)
    from ._errors import IoError

    return IoError(f"output {dest_url} appeared while it was written (pass force=True to replace it): "
                   f"nothing was written ({e})")


def _failed(where, e):
    """Any other refused step of the multipart write."""
    from ._errors import IoError

    # Steps before the completion write only parts, and those are aborted; S3 may report an
    # error for a completion it carried out, so after that one the object may be the new one.
    completing = e.operation_name == "CompleteMultipartUpload"
    done = "it may have been written: check it" if completing else "nothing was written"
    return IoError(f"re-keying {where} failed ({e}): the upload was aborted, {done}")


def _status(e):
    return e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")


async def _abandon(s3, bucket, key, uid, copies):
    """Cancels the part copies, waits for them, aborts the upload and lists its parts to see it
    gone. Returns None when it is, else what is left (a phrase for the caller's error)."""
    from botocore.exceptions import ClientError

    for task in copies:
        task.cancel()
    # Aborting while a sibling is still sending its request would race it: its part could be
    # stored after the abort. Cancelling only stops the client, so a copy the server had already
    # begun may still land; the listing below catches that, and the upload is aborted again.
    await asyncio.gather(*copies, return_exceptions=True)
    left = None
    for attempt in range(3):
        await asyncio.sleep(attempt)  # 0, 1, 2 s: time for a late part to land before the next abort
        try:
            await s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=uid)
        except Exception:  # already gone (NoSuchUpload) or not: the listing decides
            pass
        try:
            listed = await s3.list_parts(Bucket=bucket, Key=key, UploadId=uid)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") == "NoSuchUpload" or _status(e) == 404:
                return None
            left = f"its parts could not be listed ({e})"
            continue
        except Exception as e:
            left = f"its parts could not be listed ({e!r})"
            continue
        n = len(listed.get("Parts", []))
        left = f"it still lists {n}{' or more' if listed.get('IsTruncated') else ''} part(s) after the abort"
    return (f"the multipart upload {uid} of s3://{bucket}/{key} may not be gone: {left}; abort it with "
            f"`aws s3api abort-multipart-upload --bucket {bucket} --key {key} --upload-id {uid}`")


async def _get(s3, bucket, key, etag, lo, hi):
    """The response to a GET of bytes [lo, hi), only if the object's ETag is still ``etag``:
    its stored headers, and its bytes under ``"Body"``."""
    resp = await s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={lo}-{hi - 1}", IfMatch=etag)
    async with resp["Body"] as body:
        return {**resp, "Body": await body.read()}


async def _read(s3, bucket, key, etag, lo, hi):
    """Bytes [lo, hi) of the object, only if its ETag is still ``etag``."""
    return (await _get(s3, bucket, key, etag, lo, hi))["Body"]


def _not_ours(e):
    """Whether a header error says the bytes are no hyperseal or age file at all (the library's
    words for that, as against a header cut short by the read), so reading more cannot help."""
    return "not a hyperseal or age file" in str(e)


async def _plan(fs, bucket, key, identities, keys, listed=None):
    """Reads the object's head and plans the re-key: the state :func:`_write` needs.
    ``listed``: the ``(ETag, size)`` a listing gave, so no HEAD is sent: the first ranged GET
    is conditional on that ETag and its response carries the stored headers and tag count."""
    from botocore.exceptions import ClientError

    from ._errors import FormatError

    await fs.set_session()
    s3 = await fs.get_s3(bucket)
    where = f"s3://{bucket}/{key}"
    try:
        if listed is None:
            info = await s3.head_object(Bucket=bucket, Key=key)
            etag, size = info["ETag"], info["ContentLength"]
            tag_count = None  # a HEAD does not say: the tags are read before writing
        else:
            etag, size = listed
        # The head: one ranged GET covers part 1 in the usual case; a header beyond it (up to
        # the library's limit) or a new header much shorter than the old needs one more.
        if size == 0:
            raise FormatError("the input is empty: not a hyperseal or age file")
        first = await _get(s3, bucket, key, etag, 0, min(size, MIN_PART + _MARGIN))
        head = first.pop("Body")
        if listed is not None:
            info, tag_count = first, first.get("TagCount", 0)
        while True:
            try:
                new, old_len, plan = _rekey_head(head, identities, **keys)
                break
            except FormatError as e:  # a header longer than the first read; a wrong key is not retried
                if not _looks_encrypted(bytes(head[:64])):
                    raise FormatError("unknown file format: not a hyperseal or age file") from e
                limit = min(size, HEADER_BYTES + _MARGIN)
                if len(head) >= limit or _not_ours(e):
                    raise
                head += await _read(s3, bucket, key, etag, len(head), limit)
        first_end = min(size, old_len + max(0, MIN_PART - len(new)))
        if first_end > len(head):
            head += await _read(s3, bucket, key, etag, len(head), first_end)
    except ClientError as e:
        if _status(e) == 412:
            raise _changed(where, e) from e
        raise
    return dict(s3=s3, bucket=bucket, key=key, where=where, info=info, etag=etag, size=size, head=head,
                new=new, old_len=old_len, first_end=first_end, plan=plan, tag_count=tag_count)


async def _plan_sops(fs, bucket, key, identities, keys, listed=None):
    """Reads a sops object whole and re-keys it in memory: the state :func:`_write` needs, the
    new object being the new bytes alone (``old_len`` and ``first_end`` at the old end), with
    ``unchanged`` where it is already the target."""
    from botocore.exceptions import ClientError

    from ._errors import FormatError

    await fs.set_session()
    s3 = await fs.get_s3(bucket)
    where = f"s3://{bucket}/{key}"
    try:
        tag_count = None
        if listed is None:
            info = await s3.head_object(Bucket=bucket, Key=key)
            etag, size = info["ETag"], info["ContentLength"]
        else:
            etag, size = listed
        if size == 0:
            raise FormatError("not a sops file (no sops metadata)")
        # One byte past the library's bound, so a larger object is refused by its own error.
        got = await _get(s3, bucket, key, etag, 0, min(size, SOPS_BYTES + 1))
        body = got.pop("Body")
        if listed is not None:
            info, tag_count = got, got.get("TagCount", 0)
    except ClientError as e:
        if _status(e) == 412:
            raise _changed(where, e) from e
        raise
    if not _looks_like_sops(body, key):
        raise FormatError("not a sops file (no sops metadata)")
    new, added, removed = _rekey_sops_bytes(body, identities, name=key, **keys)
    return dict(s3=s3, bucket=bucket, key=key, where=where, info=info, etag=etag, size=size, head=body,
                new=body if new is None else new, old_len=size, first_end=size, unchanged=new is None,
                plan=dict(added=added, removed=removed), tag_count=tag_count)


def _not_sops(e):
    return "not a sops file" in str(e)


def rekey_s3_sops(fs, path, identities, keys, *, dry_run=False):
    """Re-keys the sops object at ``path`` (``bucket/key`` on ``fs``) where it is."""
    from fsspec.asyn import sync

    bucket, key, _ = fs.split_path(path)
    state = sync(fs.loop, _plan_sops, fs, bucket, key, identities, keys)
    if state["unchanged"]:
        return RekeyResult(written="unchanged")
    if dry_run:
        return RekeyResult(**state["plan"])
    result = sync(fs.loop, _write, state, None, False, MIN_PART, 1)
    fs.invalidate_cache(path)
    return result


async def _write(st, dest, force, part_size, max_concurrency):
    """Writes the re-key planned by :func:`_plan`, conditional on the ETag it saw."""
    from botocore.exceptions import ClientError

    s3, bucket, key, where, info, etag, size = (st[k] for k in ("s3", "bucket", "key", "where", "info", "etag",
                                                               "size"))
    head, new, old_len, first_end, plan = (st[k] for k in ("head", "new", "old_len", "first_end", "plan"))
    dest_key = dest or key
    total = size - old_len + len(new)
    # A written object's condition: the old ETag over itself, else "only if new" unless forced.
    cond = {"IfMatch": etag} if dest is None else ({} if force else {"IfNoneMatch": "*"})
    carried = {k: info[k] for k in _CARRIED if info.get(k)}
    if st.get("mark"):  # a prefix re-key's mark of the change (user metadata)
        carried["Metadata"] = {**carried.get("Metadata", {}), **st["mark"]}
    tags = [] if st.get("tag_count") == 0 else (await s3.get_object_tagging(Bucket=bucket, Key=key)).get("TagSet", [])
    if tags:
        carried["Tagging"] = urlencode([(t["Key"], t["Value"]) for t in tags])

    async def check_unchanged():
        now = await s3.head_object(Bucket=bucket, Key=key)
        if now["ETag"] != etag:
            raise _changed(where)

    if first_end >= size:
        body = new + head[old_len:size]
        try:
            # A store known to refuse a PUT whose If-Match fails needs no HEAD before it.
            if not (dest is None and st.get("if_match_honoured")):
                await check_unchanged()
            st["written_etag"] = (await s3.put_object(Bucket=bucket, Key=dest_key, Body=body, **cond,
                                                      **carried))["ETag"]
        except ClientError as e:
            if _status(e) in (409, 412):
                raise _refused(where, dest and f"s3://{bucket}/{dest_key}", e) from e
            raise
        return RekeyResult(**plan, written="s3_put", bytes=total)

    # Copy parts: [first_end, size) in parts of at least `part_size`, at most MAX_PARTS - 1.
    rest = size - first_end
    step = max(MIN_PART, min(MAX_PART, part_size), -(-rest // (MAX_PARTS - 1)))
    if step > MAX_PART:
        raise ValueError(f"{where} is too large for one multipart upload ({size} bytes)")
    ranges = [(lo, min(size, lo + step)) for lo in range(first_end, size, step)]

    upload = await s3.create_multipart_upload(Bucket=bucket, Key=dest_key, **carried)
    uid = upload["UploadId"]
    copies = []  # the part copies' tasks: on failure, cancelled and awaited before the abort
    try:
        first = await s3.upload_part(Bucket=bucket, Key=dest_key, UploadId=uid, PartNumber=1,
                                     Body=new + head[old_len:first_end])
        parts = [{"PartNumber": 1, "ETag": first["ETag"]}]
        gate = asyncio.Semaphore(max(1, max_concurrency))

        async def copy(n, lo, hi):
            async with gate:
                r = await s3.upload_part_copy(Bucket=bucket, Key=dest_key, UploadId=uid, PartNumber=n,
                                              CopySource={"Bucket": bucket, "Key": key},
                                              CopySourceRange=f"bytes={lo}-{hi - 1}", CopySourceIfMatch=etag)
                return {"PartNumber": n, "ETag": r["CopyPartResult"]["ETag"]}

        copies = [asyncio.ensure_future(copy(i + 2, lo, hi)) for i, (lo, hi) in enumerate(ranges)]
        # gather raises the first failure and leaves the other copies running: _abandon stops them.
        parts += await asyncio.gather(*copies)
        # Also checked here, for stores that ignore If-Match on the completion (module docs).
        await check_unchanged()
        done = await s3.complete_multipart_upload(Bucket=bucket, Key=dest_key, UploadId=uid,
                                                  MultipartUpload={"Parts": parts}, **cond)
        st["written_etag"] = done.get("ETag")
    except BaseException as e:
        # Shielded: a caller cancelling again must not stop the clean-up half way.
        left = await asyncio.shield(_abandon(s3, bucket, dest_key, uid, copies))
        if isinstance(e, ClientError):
            if _status(e) in (409, 412):
                copying = e.operation_name == "UploadPartCopy"  # the source changed; else the write
                err = _changed(where, e) if copying else _refused(where, dest and f"s3://{bucket}/{dest_key}", e)
            else:
                err = _failed(where, e)
            if left:
                err = type(err)(f"{err}; but {left}")
            raise err from e
        if left:
            e.add_note(left)
        raise
    return RekeyResult(**plan, written="s3_multipart", bytes=total)


def rekey_s3(fs, path, identities, keys, *, output=None, force=False, dry_run=False, part_size=256 << 20,
             max_concurrency=8):
    """Re-keys the object at ``path`` (``bucket/key`` on the s3fs filesystem ``fs``); see the
    module docs. ``output`` (``bucket/key`` in the same bucket) writes the result there."""
    from fsspec.asyn import sync

    bucket, key, _ = fs.split_path(path)
    dest = None
    if output is not None:
        dbucket, dest, _ = fs.split_path(output)
        if dbucket != bucket:
            raise ValueError("the output must be in the same bucket as the object")
    state = sync(fs.loop, _plan, fs, bucket, key, identities, keys)
    if dry_run:
        return RekeyResult(**state["plan"])
    result = sync(fs.loop, _write, state, dest, force, part_size, max_concurrency)
    fs.invalidate_cache(path)
    if output is not None:
        fs.invalidate_cache(output)
    return result
