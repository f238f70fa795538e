"""Re-keying S3 objects without downloading them, against the tests' MinIO: the payload is
copied by the server (the client's traffic, counted by a TCP relay in front of MinIO, stays
near the 5 MiB head), a concurrent writer wins cleanly, metadata and tags are carried over."""

import os
import time

import pytest

import hyperseal
from hyperseal import _rekey_s3
from s3_local import CountingRelay
from s3_server import PASSWORD, USER, everything

pytest.importorskip("s3fs")


def _put(s3, url, data, **kw):
    bucket, key = url[len("s3://"):].split("/", 1)
    s3.call_s3("put_object", Bucket=bucket, Key=key, Body=data, **kw)


def _payload_from(blob, ident):
    return blob[hyperseal.rekey.rekey_head(blob, ident, add=(), remove=(), recipients=ident.public,
                                           remove_own=True)[1]:]


@pytest.mark.parametrize("size", [1 << 20, 12 << 20])
def test_an_object_is_rekeyed_in_place_and_the_payload_is_untouched(s3, bucket, me, size):
    other, gone = hyperseal.generate_key(), hyperseal.generate_key()
    data = os.urandom(size)
    sealed = hyperseal.encrypt(data, [me.public, gone.public])
    url = f"s3://{bucket}/f.hs"
    _put(s3, url, sealed, ContentType="application/x-hyperseal", Metadata={"owner": "ops"},
         Tagging="team=data&tier=1")
    got = hyperseal.rekey_file(url, me, recipients=[me.public, other.public], part_size=5 << 20)
    assert got.written == ("s3_put" if size < (5 << 20) else "s3_multipart") and not got.in_place
    assert got.removed == 2 and got.added == 2
    after = s3.cat_file(url)
    assert len(after) == got.bytes
    assert _payload_from(after, other) == _payload_from(sealed, me)
    assert hyperseal.decrypt(after, other) == data and hyperseal.decrypt(after, me) == data
    with pytest.raises(hyperseal.Error):
        hyperseal.decrypt(after, gone)
    bucket_, key = url[5:].split("/", 1)
    info = s3.call_s3("head_object", Bucket=bucket_, Key=key)
    assert info["ContentType"] == "application/x-hyperseal" and info["Metadata"] == {"owner": "ops"}
    tags = s3.call_s3("get_object_tagging", Bucket=bucket_, Key=key)["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("team", "data"), ("tier", "1")]
    assert everything(s3, bucket) == [f"{bucket}/f.hs"]


def test_dry_run_writes_nothing(s3, bucket, me):
    url = f"s3://{bucket}/f.hs"
    sealed = hyperseal.encrypt(os.urandom(6 << 20), me.public)
    _put(s3, url, sealed)
    etag = s3.info(url)["ETag"]
    got = hyperseal.rekey_file(url, me, add=hyperseal.generate_key().public, dry_run=True)
    assert got.dry_run and got.added == 1 and got.after == ["mlkem768x25519"] * 2
    s3.invalidate_cache()
    assert s3.info(url)["ETag"] == etag and s3.cat_file(url) == sealed
    assert everything(s3, bucket) == [f"{bucket}/f.hs"]


@pytest.mark.parametrize("size", [1 << 20, 20 << 20])
def test_an_object_changed_meanwhile_wins_and_nothing_is_left(s3, bucket, me, size):
    """Planned (head read), then another writer puts a new version, then the write: refused."""
    url = f"s3://{bucket}/f.hs"
    _put(s3, url, hyperseal.encrypt(os.urandom(size), me.public))
    fs = s3
    state = _sync(fs, _rekey_s3._plan(fs, bucket, "f.hs", me, hyperseal.rekey._keys(
        hyperseal.generate_key().public, (), (), None, True, False)))
    theirs = hyperseal.encrypt(b"the other writer", me.public)
    _put(s3, url, theirs)
    with pytest.raises(hyperseal.IoError, match="changed while it was re-keyed"):
        _sync(fs, _rekey_s3._write(state, None, False, 5 << 20, 4))
    s3.invalidate_cache()
    assert s3.cat_file(url) == theirs
    assert everything(s3, bucket) == [f"{bucket}/f.hs"]  # no multipart upload left
    assert s3.call_s3("list_multipart_uploads", Bucket=bucket).get("Uploads", []) == []


def test_a_wrong_key_writes_nothing(s3, bucket, me):
    url = f"s3://{bucket}/f.hs"
    sealed = hyperseal.encrypt(os.urandom(6 << 20), me.public)
    _put(s3, url, sealed)
    stranger = hyperseal.generate_key()
    with pytest.raises(hyperseal.Error):
        hyperseal.rekey_file(url, stranger, add=stranger.public)
    assert s3.cat_file(url) == sealed and everything(s3, bucket) == [f"{bucket}/f.hs"]


def test_client_traffic_stays_near_the_head(s3_endpoint, s3, bucket, me):
    url = f"s3://{bucket}/big.hs"
    data = os.urandom(64 << 20)
    sealed = hyperseal.encrypt(data, me.public)
    _put(s3, url, sealed)
    other = hyperseal.generate_key()
    relay = CountingRelay(s3_endpoint)
    opts = dict(endpoint_url=relay.url, key=USER, secret=PASSWORD, skip_instance_cache=True)
    try:
        start = time.monotonic()
        got = hyperseal.rekey_file(url, me, add=other.public, storage_options=opts, part_size=16 << 20)
        took = time.monotonic() - start
    finally:
        relay.close()
    assert got.written == "s3_multipart"
    print(f"\n64 MiB object: client received {relay.down} B, sent {relay.up} B, {took:.2f} s")
    assert relay.down + relay.up <= 16 << 20
    after = s3.cat_file(url)
    assert _payload_from(after, other) == _payload_from(sealed, me)
    assert hyperseal.decrypt(after, other) == data


def _sync(fs, coro):
    from fsspec.asyn import sync

    async def run():
        return await coro

    return sync(fs.loop, run)


def test_output_to_another_key_leaves_the_object_and_needs_force_to_replace(s3, bucket, me):
    other = hyperseal.generate_key()
    data = os.urandom(7 << 20)
    sealed = hyperseal.encrypt(data, me.public)
    url, out = f"s3://{bucket}/f.hs", f"s3://{bucket}/g.hs"
    _put(s3, url, sealed)
    got = hyperseal.rekey_file(url, me, recipients=other.public, remove_own=True, output=out, part_size=5 << 20)
    assert got.written == "s3_multipart" and got.bytes == s3.size(out)
    assert hyperseal.decrypt(s3.cat_file(out), other) == data and s3.cat_file(url) == sealed
    with pytest.raises(hyperseal.IoError, match="force=True"):
        hyperseal.rekey_file(url, me, add=other.public, output=out)
    got = hyperseal.rekey_file(url, me, add=other.public, output=out, force=True)
    assert hyperseal.decrypt(s3.cat_file(out), me) == data
    assert everything(s3, bucket) == [f"{bucket}/f.hs", f"{bucket}/g.hs"]
