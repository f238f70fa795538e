"""Part claims on S3 hold only if the store refuses a second create of one name. Against MinIO
(s3_server.py) they do; against a store that ignores ``If-None-Match: *`` (s3_proxy.py: older
MinIO releases, some S3-compatible servers, or s3fs 2024.12.0–2025.5.1 sending small "xb"
writes without the header) a claim is silently overwritten, and a rerun part that read other
bytes would be sealed under the nonces of the first attempt. ``encrypt_large`` must refuse such
a store before it seals anything, name it, and leave nothing behind."""

import os

import pytest

pytest.importorskip("s3fs")
pytest.importorskip("dask.distributed")
from dask.distributed import Client, LocalCluster
from s3_proxy import IgnoringProxy
from s3_server import everything
from test_dask_retry import _lose_worker_after_part

import hyperseal
import hyperseal.dask as hd

MIB = 1 << 20
PART = 5 * MIB


def _record_reruns(side, first_chunk):
    """In a worker, over the lost-worker fault: keeps what a rerun of the part at `first_chunk`
    sealed, to compare with the lost attempt's bytes."""
    import hyperseal._large as wd

    write = wd.write_part

    def writing(where, offset, index, head, data):
        write(where, offset, index, head, data)
        if index == first_chunk and os.path.exists(side):
            with open(side + ".rerun", "wb") as f:
                f.write(bytes(data))

    wd.write_part = writing


@pytest.fixture
def ignoring(s3_endpoint):
    """(proxy, client): a Dask cluster whose workers, and this process, reach S3 through a proxy
    that drops If-None-Match (the workers inherit AWS_ENDPOINT_URL)."""
    import s3fs

    with IgnoringProxy(s3_endpoint) as proxy:
        saved = os.environ["AWS_ENDPOINT_URL"]
        os.environ["AWS_ENDPOINT_URL"] = proxy.url
        s3fs.S3FileSystem.clear_instance_cache()
        try:
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
                with Client(c) as client:
                    yield proxy, client
        finally:
            os.environ["AWS_ENDPOINT_URL"] = saved
            s3fs.S3FileSystem.clear_instance_cache()


def test_a_store_that_ignores_if_none_match_is_refused_before_sealing(s3, bucket, me, tmp_path, ignoring):
    proxy, client = ignoring
    src = tmp_path / "p"
    src.write_bytes(os.urandom(3 * PART))
    marker, side = str(tmp_path / "fired"), str(tmp_path / "first-attempt")
    # The lost worker of test_dask_retry: the last part written, the source changed unseen, the
    # worker killed; Dask reruns the part, which reads the new bytes.
    last = 2 * (PART // (64 << 10))
    client.run(_lose_worker_after_part, marker, side, "local://" + str(src), last)
    client.run(_record_reruns, side, last)
    error = None
    try:
        hd.encrypt_large(client, "local://" + str(src), f"s3://{bucket}/out/p.hs", me.public, part_size=PART)
    except hyperseal.Error as e:
        error = e
    if os.path.exists(side + ".rerun"):
        twice = open(side, "rb").read() != open(side + ".rerun", "rb").read()
        pytest.fail(f"the rerun's claim silently overwrote the first ({proxy.stripped} If-None-Match dropped): "
                    + ("two different ciphertexts were sealed under one key and the same nonces" if twice
                       else "the part was sealed again") + f"; the job ended with {error!r}")
    assert error is not None, "encrypt_large ran on a store that ignores If-None-Match"
    msg = str(error)
    assert isinstance(error, hyperseal.IoError), repr(error)
    assert proxy.url in msg and f"bucket {bucket}" in msg, msg
    assert "If-None-Match" in msg and "412" in msg, msg
    assert "\n" not in msg
    assert not os.path.exists(side), "a part was sealed before the store was proven"
    assert everything(s3, bucket) == [], "the refused job left something behind"


def test_s3_claims_create_once_and_report_the_record_there(s3, bucket, s3_endpoint):
    from hyperseal._claims import S3Claims, claims_at

    claims = claims_at(f"s3://{bucket}/.x.claims")
    assert isinstance(claims, S3Claims)
    claims.check()
    assert everything(s3, bucket) == [], "the probe was removed"
    assert claims.put_new("part-1", b"a" * 32) is None
    assert claims.put_new("part-1", b"b" * 32) == b"a" * 32
    assert s3.cat(f"{bucket}/.x.claims/part-1") == b"a" * 32
    claims.remove()
    assert everything(s3, bucket) == []


def test_the_probe_names_a_store_that_lets_a_second_create_through(s3, bucket, s3_endpoint):
    import s3fs

    from hyperseal._claims import S3Claims

    with IgnoringProxy(s3_endpoint) as proxy:
        os.environ["AWS_ENDPOINT_URL"] = proxy.url
        s3fs.S3FileSystem.clear_instance_cache()
        try:
            claims = S3Claims(f"s3://{bucket}/.y.claims")
            # What a job's claims met before the probe: the second record replaced the first.
            assert claims.put_new("part-0", b"a" * 32) is None
            assert claims.put_new("part-0", b"b" * 32) is None
            with pytest.raises(hyperseal.IoError, match="let a second create of one name through") as e:
                claims.check()
            assert f"{proxy.url}, bucket {bucket}" in str(e.value)
            assert proxy.stripped == 4
        finally:
            os.environ["AWS_ENDPOINT_URL"] = s3_endpoint
            s3fs.S3FileSystem.clear_instance_cache()
    assert everything(s3, bucket) == [f"{bucket}/.y.claims/part-0"], "the probe was removed"
