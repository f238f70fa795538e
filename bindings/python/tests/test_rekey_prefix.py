"""hyperseal.dask.rekey_prefix against the tests' MinIO, through a proxy that counts each object's
requests and bytes both ways, on a LocalCluster of two worker processes: 1,000 objects of mixed
sizes (a few past S3's 5 MiB part, so the multipart path is taken) all open for the new set with
their payloads byte for byte, objects that are not ours are never written, each object's traffic
stays within the multipart minimum (a small object about its own size, a large one about 5 MiB,
never its whole size); a run stopped midway resumes applying the change once per object; an
object overwritten during the run fails and keeps the other writer's bytes."""

import os
import random
import threading
import time

import fsspec
import pytest

pytest.importorskip("s3fs")
pytest.importorskip("dask.distributed")
from dask.distributed import Client, LocalCluster
from s3_proxy import CountingProxy, IgnoringProxy
from s3_server import PASSWORD, USER, everything

import hyperseal
import hyperseal.dask as hd

KIB, MIB = 1 << 10, 1 << 20
PART = 5 * MIB
MANIFEST = ".hyperseal-rekey.manifest"
#: Per request: the request line and headers up (SigV4 signs several), status and headers down.
HTTP = 4 * KIB
#: A new header is at most this much longer than the old (slack pads it to a 4 KiB boundary).
SLACK = 16 * KIB


@pytest.fixture(scope="module")
def client(s3_endpoint):  # the workers inherit the AWS_* variables it sets
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c, \
            Client(c) as cl:
        yield cl


def opts(url):
    return dict(endpoint_url=url, key=USER, secret=PASSWORD)


def fill(s3, bucket, objects):
    s3.pipe({f"{bucket}/{k}": v for k, v in objects.items()})


def stanzas(blob, ident):
    """The stanza types of an encrypted object's header, as the library plans a change of it."""
    return hyperseal.rekey.rekey_head(blob, ident, add=ident.public)[2]["before"]


def payload(blob, ident):
    return blob[hyperseal.rekey.rekey_head(blob, ident, add=ident.public)[1]:]


def etags(s3, bucket, keys):
    return {k: s3.call_s3("head_object", Bucket=bucket, Key=k)["ETag"] for k in keys}


def idle(client):
    """Waits until no task runs anywhere (a cancelled task still finishes on its worker)."""
    deadline = time.monotonic() + 60
    while any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)


def test_a_prefix_is_rekeyed_and_each_object_moves_only_its_head(s3_endpoint, s3, bucket, me, client):
    rng = random.Random(7)
    other, stranger = hyperseal.generate_key(), hyperseal.generate_key()
    plains = {}
    for i in range(985):
        plains[f"p/d{i % 7}/o{i:04}.hs"] = rng.randbytes(rng.choice([0, 1, 100, 4 * KIB, 20 * KIB, 64 * KIB + 1]))
    for i, n in enumerate([PART - 100, PART + KIB, PART + 70 * KIB, 12 * MIB]):
        plains[f"p/big/o{i}.hs"] = rng.randbytes(n)
    sealed = {k: hyperseal.encrypt(v, me.public) for k, v in plains.items()}
    theirs = {f"p/theirs{i}.hs": hyperseal.encrypt(b"not for us", stranger.public) for i in range(3)}
    clear = {f"p/plain{i}.csv": rng.randbytes(n) for i, n in enumerate([0, 10, 3 * KIB, 7 * MIB])}
    kept = {"p/d0/x.keep": hyperseal.encrypt(b"excluded", me.public), "q/outside.hs": sealed["p/d0/o0000.hs"]}
    fill(s3, bucket, {**sealed, **theirs, **clear, **kept})
    untouched = etags(s3, bucket, [*theirs, *clear, *kept])

    with CountingProxy(s3_endpoint) as proxy:
        seen = []
        objects, summary = hd.rekey_prefix(client, f"s3://{bucket}/p", me, add=other.public, exclude=["*.keep"],
                                           storage_options=opts(proxy.url), progress=lambda d, t: seen.append((d, t)))
        counted = {k: dict(v) for k, v in proxy.per_key.items()}
    assert [o for o in objects if o["outcome"] == "failed"] == []
    assert summary == {"s3_put": 985, "s3_multipart": 4, "planned": 0, "already_done": 0, "skipped": 7,
                       "failed": 0}
    assert seen[-1] == (996, 996) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    by_key = {o["key"]: o for o in objects}
    assert set(by_key) == {*sealed, *theirs, *clear}  # the excluded one and the one outside are not listed
    assert all(by_key[k]["reason"] == "none of the identities opens it" for k in theirs)
    assert all(by_key[k]["reason"] == "not a hyperseal or age file" for k in clear)
    assert by_key["p/big/o3.hs"]["outcome"] == "s3_multipart" and by_key["p/d0/o0000.hs"]["plan"]["added"] == 1

    after = s3.cat([f"{bucket}/{k}" for k in sealed])
    for k, plain in plains.items():
        blob = after[f"{bucket}/{k}"]
        assert hyperseal.decrypt(blob, other) == plain and hyperseal.decrypt(blob, me) == plain, k
        assert payload(blob, other) == payload(sealed[k], me), k
        assert len(stanzas(blob, other)) == 2, k
    assert etags(s3, bucket, [*theirs, *clear, *kept]) == untouched

    # Per object, through the proxy: a small object moves about its own size each way, a large
    # one about S3's 5 MiB part (the head read, part 1 written), never the rest of its payload.
    zero = {"requests": 0, "up": 0, "down": 0}
    for k, blob in {**sealed, **theirs, **clear}.items():
        c, size, ours = counted.get(k, zero), len(blob), k in sealed
        head = min(size, PART + 64 * KIB)
        # A small object: its GET and its conditional PUT (MinIO refuses a failed If-Match, so no
        # HEAD before the PUT); a large one: the GET, the upload, its parts, the completion.
        assert c["requests"] <= ((6 if by_key[k]["outcome"] == "s3_multipart" else 2) if ours else 1), (k, c)
        assert c["down"] <= head + c["requests"] * HTTP, (k, size, c)
        assert c["up"] <= (head + SLACK if ours else 0) + c["requests"] * HTTP, (k, size, c)
        if size > PART + 2 * MIB:
            assert c["down"] + c["up"] < size - MIB, (k, size, c)
    assert "p/d0/x.keep" not in counted and "q/outside.hs" not in counted

    # The same call again: everything is done, and no object is read (the manifest's ETags).
    with CountingProxy(s3_endpoint) as proxy:
        _, again = hd.rekey_prefix(client, f"s3://{bucket}/p/", me, add=other.public, exclude=["*.keep"],
                                   storage_options=opts(proxy.url))
        touched = {k for k in proxy.per_key if ".hyperseal-rekey-probe-" not in k}
        touched -= {"", f"p/{MANIFEST}", *theirs, *clear}
    assert again == {**summary, "s3_put": 0, "s3_multipart": 0, "already_done": 989}
    assert touched == set(), sorted(touched)[:5]  # skipped objects are looked at again, not ours
    assert everything(s3, bucket) == sorted(f"{bucket}/{k}" for k in [*sealed, *theirs, *clear, *kept,
                                                                       f"p/{MANIFEST}"])


class Stop(BaseException):
    """Raised from the progress callback: the run is interrupted as by Ctrl-C."""


def test_a_stopped_run_resumes_applying_the_change_once(s3, bucket, me, client, tmp_path):
    other, third = hyperseal.generate_key(), hyperseal.generate_key()
    plains = {f"r/o{i:03}.hs": os.urandom(i * 97) for i in range(240)}
    plains["r/big.hs"] = os.urandom(PART + KIB)
    sealed = {k: hyperseal.encrypt(v, me.public) for k, v in plains.items()}
    fill(s3, bucket, sealed)
    manifest = tmp_path / "m"

    # A dry run plans every object and writes nothing, not even a manifest.
    objects, summary = hd.rekey_prefix(client, f"s3://{bucket}/r/", me, add=other.public, dry_run=True,
                                       manifest=manifest)
    assert summary["planned"] == len(sealed) and not manifest.exists()
    assert s3.cat([f"{bucket}/{k}" for k in sealed]) == {f"{bucket}/{k}": v for k, v in sealed.items()}

    def stop(done, total):
        if done >= 60:
            raise Stop

    with pytest.raises(Stop):
        hd.rekey_prefix(client, f"s3://{bucket}/r/", me, add=other.public, manifest=manifest, progress=stop,
                        max_concurrency=4)
    idle(client)  # tasks handed out before the stop finish on their workers, unrecorded
    lines = manifest.read_text().splitlines()
    assert lines[0] == "hyperseal-s3-rekey-manifest v1" and lines[1].startswith("change ")
    assert any(line.startswith("done\t") for line in lines) and any(line.startswith("begin\t") for line in lines)
    first = s3.cat([f"{bucket}/{k}" for k in sealed])
    changed = [k for k in sealed if first[f"{bucket}/{k}"] != sealed[k]]
    assert 60 <= len(changed) < len(sealed)
    # An object begun ahead but never handed to a worker is saved anew by its owner: no run
    # re-keyed that version, so it must not count as done.
    begun = {line.split("\t")[2] for line in lines if line.startswith("begin\t")}
    done = {line.split("\t")[4] for line in lines if line.startswith("done\t")}
    saved = sorted(k for k in begun - done if k in sealed and k not in changed)[-1]
    plains[saved] = b"saved after the stop"
    s3.pipe(f"{bucket}/{saved}", hyperseal.encrypt(plains[saved], me.public))

    # Another change is refused against this manifest.
    with pytest.raises(hyperseal.ArgumentError, match="another change"):
        hd.rekey_prefix(client, f"s3://{bucket}/r/", me, add=third.public, manifest=manifest)

    objects, summary = hd.rekey_prefix(client, f"s3://{bucket}/r/", me, add=other.public, manifest=manifest)
    assert summary["failed"] == 0 and summary["already_done"] == len(changed)
    assert summary["s3_put"] + summary["s3_multipart"] == len(sealed) - len(changed)
    assert next(o for o in objects if o["key"] == saved)["outcome"] == "s3_put"
    after = s3.cat([f"{bucket}/{k}" for k in sealed])
    for k, plain in plains.items():
        blob = after[f"{bucket}/{k}"]
        assert stanzas(blob, other) == ["mlkem768x25519"] * 2, k  # the recipient added once
        assert hyperseal.decrypt(blob, other) == plain, k


def test_an_object_overwritten_during_the_run_fails_and_keeps_the_other_writers_bytes(s3_endpoint, s3, bucket,
                                                                                      me, client):
    other = hyperseal.generate_key()
    plains = {f"w/o{i:02}.hs": os.urandom(i * 1000) for i in range(40)}
    plains["w/big.hs"] = os.urandom(PART + 100 * KIB)
    sealed = {k: hyperseal.encrypt(v, me.public) for k, v in plains.items()}
    fill(s3, bucket, sealed)
    theirs = {k: hyperseal.encrypt(b"the other writer's " + k.encode(), me.public) for k in ("w/o07.hs", "w/big.hs")}
    lock, written = threading.Lock(), set()

    def overwrite(method, key, query, status):
        # After the re-key read the head, before it writes: another writer puts a new version.
        with lock:
            if method == "GET" and key in theirs and key not in written and status == 206:
                written.add(key)
                s3.pipe(f"{bucket}/{key}", theirs[key])

    with CountingProxy(s3_endpoint, hook=overwrite) as proxy:
        objects, summary = hd.rekey_prefix(client, f"s3://{bucket}/w/", me, add=other.public,
                                           storage_options=opts(proxy.url))
    assert written == set(theirs)
    by_key = {o["key"]: o for o in objects}
    for k in theirs:
        assert by_key[k]["outcome"] == "failed" and "changed while it was re-keyed" in by_key[k]["error"], by_key[k]
        assert by_key[k]["code"] == "ERR_HYPERSEAL_IO"
        assert s3.cat(f"{bucket}/{k}") == theirs[k]
    assert summary["failed"] == 2 and summary["s3_put"] == len(sealed) - 2
    for k in set(sealed) - set(theirs):
        assert hyperseal.decrypt(s3.cat(f"{bucket}/{k}"), other) == plains[k]
    assert everything(s3, bucket) == sorted(f"{bucket}/{k}" for k in [*sealed, f"w/{MANIFEST}"])


def test_the_head_check_stays_where_a_store_ignores_if_match(s3_endpoint, s3, bucket):
    """The probe that lets a conditional PUT go without a HEAD before it: MinIO refuses a PutObject
    whose If-Match fails; the same store behind a proxy that drops If-Match does not, and then
    the check stays. The probe's scratch object is removed either way."""
    from fsspec.asyn import sync

    from hyperseal._rekey_prefix import _honours_if_match

    fs = fsspec.filesystem("s3", **opts(s3_endpoint), skip_instance_cache=True)
    assert sync(fs.loop, _honours_if_match, fs, bucket, "probe/") is True
    with IgnoringProxy(s3_endpoint, header="if-match") as proxy:
        fs = fsspec.filesystem("s3", **opts(proxy.url), skip_instance_cache=True)
        assert sync(fs.loop, _honours_if_match, fs, bucket, "probe/") is False
        assert proxy.stripped == 1
    s3.invalidate_cache()
    assert s3.find(f"{bucket}/probe/") == []


def test_rekey_tree_takes_an_s3_prefix_with_a_client(s3_endpoint, s3, bucket, me, client):
    """The tree re-key's one door for folders and prefixes: an s3:// URL goes to rekey_prefix on
    the client given; without one it says so, and nothing is touched."""
    other = hyperseal.generate_key()
    sealed = {f"t/o{i}.hs": hyperseal.encrypt(os.urandom(100 + i), me.public) for i in range(5)}
    fill(s3, bucket, sealed)
    with pytest.raises(hyperseal.ArgumentError, match="pass client="):
        hyperseal.rekey_tree(f"s3://{bucket}/t/", me, add=other.public)
    assert s3.cat([f"{bucket}/{k}" for k in sealed]) == {f"{bucket}/{k}": v for k, v in sealed.items()}
    objects, summary = hyperseal.rekey_tree(f"s3://{bucket}/t/", me, add=other.public, client=client,
                                            storage_options=opts(s3_endpoint))
    assert summary["s3_put"] == 5 and len(objects) == 5
    s3.invalidate_cache()
    for k in sealed:
        assert len(stanzas(s3.cat(f"{bucket}/{k}"), other)) == 2
