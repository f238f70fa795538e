"""hyperseal.dask against a real S3 server (MinIO on 127.0.0.1, see s3_server.py) with two Dask
worker processes: encrypt_files/decrypt_files and encrypt_large/decrypt_large to and from
s3:// at the sizes where things break (0, 1, around a chunk, around a 5 MiB multipart part,
100 MiB); the CLI opens every result byte for byte and the real age opens the age one; every
failure (a flipped byte, a cut file, a wrong key, an existing destination, one that appears
during the run, a worker killed with SIGKILL, a rerun over a changed source) leaves the bucket
as it was — no object, no part, no claim, no unfinished multipart upload."""

import hashlib
import os
import signal
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("s3fs")
pytest.importorskip("dask.distributed")
from dask.distributed import Client, LocalCluster
from s3_server import everything
from test_dask_retry import run_lost_worker_job

import hyperseal
import hyperseal.dask as hd

KIB, MIB = 1 << 10, 1 << 20
PART = 5 * MIB  # S3's smallest multipart part
AGE = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "age"


def cluster():
    return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")


@pytest.fixture(scope="module")
def procs(s3_endpoint):  # the workers inherit the AWS_* variables it sets
    with cluster() as c, Client(c) as client:
        yield client


@pytest.fixture
def fresh(s3_endpoint):  # for tests that kill or patch workers
    with cluster() as c, Client(c) as client:
        yield client


def cli_open(cli, me, tmp_path, sealed):
    (tmp_path / "k").write_text(me.secret)
    (tmp_path / "sealed").write_bytes(sealed)
    return subprocess.run([cli, "decrypt", "-i", tmp_path / "k", tmp_path / "sealed"], capture_output=True,
                          check=True).stdout


def test_encrypt_files_and_decrypt_files_on_s3(s3, bucket, me, cli, tmp_path, procs):
    plains = {f"f{i}": os.urandom(n) for i, n in enumerate([0, 1, 64 * KIB - 1, 64 * KIB, 64 * KIB + 1, 200 * KIB + 17])}
    for name, data in plains.items():
        s3.pipe(f"{bucket}/src/{name}", data)
    srcs = [f"s3://{bucket}/src/{n}" for n in plains]
    sealed = hd.encrypt_files(procs, srcs, f"s3://{bucket}/sealed", me.public)
    assert [r.error for r in sealed] == [None] * len(plains)
    for r, data in zip(sealed, plains.values()):
        assert cli_open(cli, me, tmp_path, s3.cat(r.dst)) == data
    back = hd.decrypt_files(procs, [r.dst for r in sealed], f"s3://{bucket}/back", me)
    assert [r.error for r in back] == [None] * len(plains)
    for name, data in plains.items():
        assert s3.cat(f"{bucket}/back/{name}") == data
    # Existing destinations are kept.
    again = hd.encrypt_files(procs, srcs[:1], f"s3://{bucket}/sealed", me.public)[0]
    assert again.code == "ERR_HYPERSEAL_IO" and "force" in again.error
    assert cli_open(cli, me, tmp_path, s3.cat(sealed[0].dst)) == plains["f0"]


@pytest.mark.parametrize("size", [0, 1, 64 * KIB + 1, PART - 1, PART, PART + 1, 2 * PART + 64 * KIB + 3])
def test_encrypt_large_and_decrypt_large_on_s3(s3, bucket, me, cli, tmp_path, procs, size):
    plain = os.urandom(size)
    s3.pipe(f"{bucket}/p", plain)
    res = hd.encrypt_large(procs, f"s3://{bucket}/p", f"s3://{bucket}/out/p.hs", me.public, part_size=PART)
    assert (res.size, res.parts) == (size, max(1, -(-size // PART)))
    assert s3.info(f"{bucket}/out/p.hs")["size"] == res.file_len
    assert cli_open(cli, me, tmp_path, s3.cat(f"{bucket}/out/p.hs")) == plain
    hd.decrypt_large(procs, f"s3://{bucket}/out/p.hs", f"s3://{bucket}/back", me, part_size=PART)
    assert s3.cat(f"{bucket}/back") == plain
    assert everything(s3, bucket) == [f"{bucket}/back", f"{bucket}/out/p.hs", f"{bucket}/p"]


def test_100_mib_and_the_age_format(s3, bucket, me, cli, tmp_path, procs):
    plain = os.urandom(100 * MIB)
    s3.pipe(f"{bucket}/big", plain)
    res = hd.encrypt_large(procs, f"s3://{bucket}/big", f"s3://{bucket}/big.hs", me.public, part_size=32 * MIB)
    assert res.parts == 4
    out = cli_open(cli, me, tmp_path, s3.cat(f"{bucket}/big.hs"))
    assert hashlib.sha256(out).digest() == hashlib.sha256(plain).digest()
    hd.decrypt_large(procs, f"s3://{bucket}/big.hs", f"s3://{bucket}/big.back", me, part_size=32 * MIB)
    assert s3.cat(f"{bucket}/big.back") == plain
    if not AGE.exists() and os.environ.get("HYPERSEAL_REQUIRE_PEERS") != "1":
        pytest.skip("needs age (make age)")
    x = hyperseal.generate_key("x25519")
    small = plain[: 2 * PART + 5]
    s3.pipe(f"{bucket}/a", small)
    hd.encrypt_large(procs, f"s3://{bucket}/a", f"s3://{bucket}/a.age", x.public, format="age", part_size=PART)
    (tmp_path / "x").write_text(x.secret)
    (tmp_path / "a.age").write_bytes(s3.cat(f"{bucket}/a.age"))
    got = subprocess.run([AGE, "-d", "-i", tmp_path / "x", tmp_path / "a.age"], capture_output=True, check=True)
    assert got.stdout == small


def test_failures_leave_the_bucket_as_it_was(s3, bucket, me, procs):
    plain = os.urandom(2 * PART + 3)
    s3.pipe(f"{bucket}/p", plain)
    hd.encrypt_large(procs, f"s3://{bucket}/p", f"s3://{bucket}/p.hs", me.public, part_size=PART)
    sealed = s3.cat(f"{bucket}/p.hs")
    flipped = bytearray(sealed)
    flipped[len(sealed) // 2] ^= 1
    s3.pipe(f"{bucket}/flip.hs", bytes(flipped))
    s3.pipe(f"{bucket}/cut.hs", sealed[: len(sealed) - (64 * KIB + 16) - 7])
    before = everything(s3, bucket)
    for name in ["flip.hs", "cut.hs"]:
        with pytest.raises(hyperseal.AuthenticationError):
            hd.decrypt_large(procs, f"s3://{bucket}/{name}", f"s3://{bucket}/out", me, part_size=PART)
        assert everything(s3, bucket) == before
    with pytest.raises(hyperseal.NoIdentityError):
        hd.decrypt_large(procs, f"s3://{bucket}/p.hs", f"s3://{bucket}/out", hyperseal.generate_key(), part_size=PART)
    assert everything(s3, bucket) == before
    # An existing destination is kept, and so is one that appears while the parts are sealed.
    s3.pipe(f"{bucket}/taken", b"keep me")
    with pytest.raises(hyperseal.IoError, match="already exists"):
        hd.encrypt_large(procs, f"s3://{bucket}/p", f"s3://{bucket}/taken", me.public, part_size=PART)
    assert s3.cat(f"{bucket}/taken") == b"keep me"

    def appear(_done):
        if not s3.exists(f"{bucket}/late"):
            s3.pipe(f"{bucket}/late", b"came first")

    with pytest.raises(hyperseal.IoError, match="appeared"):
        hd.encrypt_large(procs, f"s3://{bucket}/p", f"s3://{bucket}/late", me.public, part_size=PART, progress=appear)
    assert s3.cat(f"{bucket}/late") == b"came first"
    assert everything(s3, bucket) == sorted(before + [f"{bucket}/late", f"{bucket}/taken"])


def _kill_before_first_write(marker):
    """In a worker: the first part write kills this worker process (SIGKILL), once per job."""
    import hyperseal._large as wd

    write = wd.write_part

    def writing(*args):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return write(*args)
        os.kill(os.getpid(), signal.SIGKILL)

    wd.write_part = writing


def test_a_worker_killed_mid_job_gives_the_file_or_nothing(s3, bucket, me, cli, tmp_path, fresh):
    plain = os.urandom(3 * PART + 11)
    s3.pipe(f"{bucket}/p", plain)
    fresh.run(_kill_before_first_write, str(tmp_path / "killed"))
    try:
        hd.encrypt_large(fresh, f"s3://{bucket}/p", f"s3://{bucket}/p.hs", me.public, part_size=PART)
    except hyperseal.Error:
        assert everything(s3, bucket) == [f"{bucket}/p"]
    else:  # Dask reran the lost task: the same bytes, claims agree, the file is whole
        assert cli_open(cli, me, tmp_path, s3.cat(f"{bucket}/p.hs")) == plain
        assert everything(s3, bucket) == [f"{bucket}/p", f"{bucket}/p.hs"]
    assert (tmp_path / "killed").exists()


def test_rerun_with_changed_source_is_refused_with_claims_on_s3(s3, bucket, me, tmp_path, fresh):
    error = run_lost_worker_job(fresh, tmp_path, me, "local://" + str(tmp_path / "p"), f"s3://{bucket}/out/p.hs",
                                lambda: everything(s3, bucket), part=PART)
    assert "reuse a nonce" in str(error), error
