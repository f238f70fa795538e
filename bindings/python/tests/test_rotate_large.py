"""hyperseal.dask.rotate_large: one object re-encrypted under a fresh file key across workers,
local and on S3 (the tests' MinIO): the new recipients open it, the old key does not, and the
file key (so the payload) is new."""

import os

import pytest

pytest.importorskip("distributed")

import hyperseal  # noqa: E402
import hyperseal.dask  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        with Client(cluster) as c:
            yield c


def _check(old_blob, new_blob, data, old_key, new_key):
    assert hyperseal.decrypt(new_blob, new_key) == data
    with pytest.raises(hyperseal.Error):
        hyperseal.decrypt(new_blob, old_key)
    assert old_blob[-4096:] != new_blob[-4096:]  # a fresh file key: every payload byte differs


def test_rotate_large_local(tmp_path, me, client):
    new = hyperseal.generate_key()
    data = os.urandom((9 << 20) + 12345)
    src, dst = tmp_path / "f.hs", tmp_path / "g.hs"
    src.write_bytes(hyperseal.encrypt(data, me.public))
    done = []
    got = hyperseal.dask.rotate_large(client, str(src), str(dst), me, new.public, part_size=2 << 20,
                                      progress=done.append)
    assert got.parts == 5 and got.size == len(data) and got.file_len == dst.stat().st_size
    assert done[-1] == len(data)
    _check(src.read_bytes(), dst.read_bytes(), data, me, new)
    assert sorted(os.listdir(tmp_path)) == ["f.hs", "g.hs"]  # no claims left
    with pytest.raises(hyperseal.ArgumentError):
        hyperseal.dask.rotate_large(client, str(src), str(src), me, new.public)


def test_rotate_large_on_s3_and_wrong_key_leaves_nothing(s3, bucket, me, client):
    from s3_server import everything

    new = hyperseal.generate_key()
    data = os.urandom(13 << 20)
    sealed = hyperseal.encrypt(data, me.public)
    s3.pipe_file(f"{bucket}/f.hs", sealed)
    src, dst = f"s3://{bucket}/f.hs", f"s3://{bucket}/g.hs"
    got = hyperseal.dask.rotate_large(client, src, dst, me, new.public, part_size=5 << 20)
    assert got.parts == 3
    _check(sealed, s3.cat_file(dst), data, me, new)
    assert everything(s3, bucket) == [f"{bucket}/f.hs", f"{bucket}/g.hs"]
    with pytest.raises(hyperseal.Error):
        hyperseal.dask.rotate_large(client, src, f"s3://{bucket}/h.hs", new, me.public)
    assert everything(s3, bucket) == [f"{bucket}/f.hs", f"{bucket}/g.hs"]


def test_rotate_large_into_an_age_file_the_real_age_opens(tmp_path, me, client):
    import subprocess
    from pathlib import Path

    age = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "age"
    if not age.exists():
        pytest.skip("needs the real age (make tools)")
    new = hyperseal.generate_key("x25519")
    data = os.urandom((3 << 20) + 7)
    src, dst = tmp_path / "f.hs", tmp_path / "g.age"
    src.write_bytes(hyperseal.encrypt(data, me.public))
    got = hyperseal.dask.rotate_large(client, str(src), str(dst), me, new.public, format="age", part_size=1 << 20)
    assert got.parts == 4
    key = tmp_path / "key"
    key.write_text(new.secret + "\n")
    out = subprocess.run([age, "-d", "-i", key, dst], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == data
