"""A re-key whose multipart write fails part way, against the tests' MinIO: the part copies still
in flight are cancelled and awaited before the upload is aborted, the store then lists nothing
for the key, and the error says what failed. The failures are the server's own (a copy range it
refuses, a copy condition that no longer holds); the test wraps the botocore client it hands to
the module only to choose which copy fails and to hold the other copies in flight meanwhile."""

import asyncio
import os
import time

import pytest

import hyperseal
from hyperseal import _rekey_s3
from s3_server import everything

pytest.importorskip("s3fs")

KEY = "f.hs"
#: 5 MiB parts: part 1 is the head, then six copies (parts 2..7); part 4 is the one that fails.
PART, SIZE, FAILING = 5 << 20, 31 << 20, 4


class HeldClient:
    """s3fs's botocore client with part ``FAILING`` made to fail on the server and every other
    copy held until it has, then sent after a pause: siblings still in flight when the write gives
    up. ``log`` records each copy's end and each abort, in order; ``abort`` False makes the aborts
    do nothing (a store on which the upload outlives them)."""

    def __init__(self, real, how, theirs=None, abort=True):
        self.real, self.how, self.theirs, self.abort = real, how, theirs, abort
        self.failed = asyncio.Event()
        self.log = []
        self.uid = None

    def __getattr__(self, name):
        return getattr(self.real, name)

    async def create_multipart_upload(self, **kw):
        r = await self.real.create_multipart_upload(**kw)
        self.uid = r["UploadId"]
        return r

    async def upload_part_copy(self, **kw):
        n = kw["PartNumber"]
        if n == FAILING:
            try:
                if self.how == "range":  # past the object's end: the server refuses the range
                    kw["CopySourceRange"] = f"bytes={1 << 40}-{(1 << 40) + 1}"
                else:  # another writer replaces the object: the copy's If-Match no longer holds
                    await self.real.put_object(Bucket=kw["Bucket"], Key=KEY, Body=self.theirs)
                return await self.real.upload_part_copy(**kw)
            finally:
                self.failed.set()
        try:
            await self.failed.wait()
            await asyncio.sleep(0.5)
            r = await self.real.upload_part_copy(**kw)
        except asyncio.CancelledError:
            self.log.append(("cancelled", n))
            raise
        except Exception as e:
            self.log.append((f"refused ({type(e).__name__})", n))
            raise
        self.log.append(("copied", n))
        return r

    async def abort_multipart_upload(self, **kw):
        self.log.append(("abort", None))
        if self.abort:
            return await self.real.abort_multipart_upload(**kw)
        return {}


def _sync(fs, coro):
    from fsspec.asyn import sync

    async def run():
        return await coro

    return sync(fs.loop, run)


def _start(s3, bucket, me, how, abort=True):
    """The object, the re-key's plan, and the held client put in place of s3fs's own."""
    sealed = hyperseal.encrypt(os.urandom(SIZE), me.public)
    s3.call_s3("put_object", Bucket=bucket, Key=KEY, Body=sealed)
    keys = hyperseal.rekey._keys(hyperseal.generate_key().public, (), (), None, True, False)
    state = _sync(s3, _rekey_s3._plan(s3, bucket, KEY, me, keys))
    theirs = hyperseal.encrypt(b"the other writer", me.public)
    state["s3"] = client = HeldClient(state["s3"], how, theirs, abort)
    return sealed, theirs, state, client


def _nothing_left(s3, client, bucket):
    from botocore.exceptions import ClientError

    assert s3.call_s3("list_multipart_uploads", Bucket=bucket, Prefix=KEY).get("Uploads", []) == []
    with pytest.raises(ClientError) as gone:  # botocore's own error (s3fs's call_s3 would map it)
        _sync(s3, client.real.list_parts(Bucket=bucket, Key=KEY, UploadId=client.uid))
    assert gone.value.response["Error"]["Code"] == "NoSuchUpload"
    assert everything(s3, bucket) == [f"{bucket}/{KEY}"]


@pytest.mark.parametrize("how", ["range", "replaced"])
def test_a_failed_part_copy_stops_its_siblings_before_the_abort(s3, bucket, me, how):
    sealed, theirs, state, client = _start(s3, bucket, me, how)
    expected = "failed .*InvalidRange.*nothing was written" if how == "range" else "changed while it was re-keyed"
    with pytest.raises(hyperseal.IoError, match=expected) as err:
        _sync(s3, _rekey_s3._write(state, None, False, PART, 16))
    assert err.value.__cause__ is not None and "UploadPartCopy" in str(err.value)
    # Every sibling ended (cancelled, never copied) before the first abort; none ran after it:
    # the log is the same a while later, once a sibling left running would have sent its copy.
    copies = -(-(state["size"] - state["first_end"]) // PART)
    siblings = {n for n in range(2, copies + 2) if n != FAILING}
    assert len(siblings) >= 4
    first_abort = client.log.index(("abort", None))
    assert sorted(client.log[:first_abort]) == sorted(("cancelled", n) for n in siblings), client.log
    settled = list(client.log)
    time.sleep(1.5)
    assert client.log == settled and set(client.log[first_abort:]) == {("abort", None)}, client.log
    _nothing_left(s3, client, bucket)
    s3.invalidate_cache()
    assert s3.cat_file(f"{bucket}/{KEY}") == (sealed if how == "range" else theirs)


def test_an_upload_that_outlives_the_aborts_is_reported(s3, bucket, me):
    """On a store that keeps the upload after three aborts, the error names it for a manual abort."""
    sealed, _, state, client = _start(s3, bucket, me, "range", abort=False)
    with pytest.raises(hyperseal.IoError, match="may not be gone: it still lists 1 part") as err:
        _sync(s3, _rekey_s3._write(state, None, False, PART, 16))
    assert client.uid in str(err.value) and "abort-multipart-upload" in str(err.value)
    assert client.log.count(("abort", None)) == 3
    # What the message says is true: the upload is there, with part 1; aborting it clears it.
    assert [u["UploadId"] for u in s3.call_s3("list_multipart_uploads", Bucket=bucket)["Uploads"]] == [client.uid]
    s3.call_s3("abort_multipart_upload", Bucket=bucket, Key=KEY, UploadId=client.uid)
    _nothing_left(s3, client, bucket)
    assert s3.cat_file(f"{bucket}/{KEY}") == sealed
