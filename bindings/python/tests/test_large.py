"""hyperseal.dask.encrypt_large / decrypt_large: one object sealed and opened by many worker
processes (a LocalCluster with 2 worker processes), the output an ordinary file the CLI and age
open byte for byte; damage, truncation, a changing source and every failure leave nothing at
the destination. hyperseal.parts.PartKey, the API under them, directly too."""

import io
import os
import pickle
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")
from dask.distributed import Client, LocalCluster

import hyperseal
import hyperseal.dask as hd
from hyperseal.parts import PartKey

from dask_cluster import procs  # noqa: F401 (a fixture)

AGE = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "age"
KIB = 1024


@pytest.fixture(scope="module")
def threads():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        with Client(cluster) as c:
            yield c


def data(n):
    return bytes((i * 7 + i // 251) % 256 for i in range(n)) if n < 4096 else os.urandom(n)


def leftovers(d):
    return sorted(p.name for p in Path(d).iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("size", [0, 1, 64 * KIB, 3 * 64 * KIB + 5, 2 * 1024 * KIB])
def test_parts_on_workers_make_a_file_the_cli_opens(tmp_path, me, cli, procs, size):
    plain = data(size)
    (tmp_path / "p").write_bytes(plain)
    done = []
    res = hd.encrypt_large(procs, tmp_path / "p", tmp_path / "p.hs", me.public, part_size=256 * KIB,
                           progress=done.append)
    assert (res.size, res.parts) == (size, max(1, -(-size // (256 * KIB))))
    assert res.file_len == (tmp_path / "p.hs").stat().st_size
    assert done[-1] == size
    key = tmp_path / "k"
    key.write_text(me.secret)
    out = subprocess.run([cli, "decrypt", "-i", key, tmp_path / "p.hs"], capture_output=True, check=True).stdout
    assert out == plain
    back = hd.decrypt_large(procs, tmp_path / "p.hs", tmp_path / "back", me, part_size=128 * KIB)
    assert (tmp_path / "back").read_bytes() == plain and back.size == size
    assert leftovers(tmp_path) == []


def test_age_file_from_workers_opens_with_age(tmp_path, procs):
    if not AGE.exists() and os.environ.get("HYPERSEAL_REQUIRE_PEERS") != "1":
        pytest.skip("needs age (make age)")
    x = hyperseal.generate_key("x25519")
    plain = os.urandom(5 * 64 * KIB + 3)
    (tmp_path / "p").write_bytes(plain)
    hd.encrypt_large(procs, tmp_path / "p", tmp_path / "p.age", x.public, format="age", part_size=128 * KIB)
    (tmp_path / "k").write_text(x.secret)
    out = subprocess.run([AGE, "-d", "-i", tmp_path / "k", tmp_path / "p.age"], capture_output=True, check=True)
    assert out.stdout == plain
    # And the reverse: a file age made opens in parts.
    subprocess.run([AGE, "-r", x.public, "-o", tmp_path / "a.age", tmp_path / "p"], check=True)
    hd.decrypt_large(procs, tmp_path / "a.age", tmp_path / "a", x, part_size=64 * KIB)
    assert (tmp_path / "a").read_bytes() == plain


def test_fsspec_destinations_are_joined_from_part_objects(me, threads):
    import fsspec

    mem = fsspec.filesystem("memory")
    plain = os.urandom(700 * KIB)
    mem.pipe("/large/in.bin", plain)
    res = hd.encrypt_large(threads, "memory://large/in.bin", "memory://large/out/in.bin.hs", me.public,
                           part_size=256 * KIB)
    assert res.parts == 3
    assert hyperseal.decrypt(mem.cat("/large/out/in.bin.hs"), me) == plain
    hd.decrypt_large(threads, "memory://large/out/in.bin.hs", "memory://large/back.bin", me, part_size=64 * KIB)
    assert mem.cat("/large/back.bin") == plain
    assert sorted(mem.ls("/large/out", detail=False)) == ["/large/out/in.bin.hs"]


def test_damage_and_truncation_leave_nothing(tmp_path, me, procs):
    plain = os.urandom(600 * KIB)
    (tmp_path / "p").write_bytes(plain)
    hd.encrypt_large(procs, tmp_path / "p", tmp_path / "p.hs", me.public, part_size=128 * KIB)
    sealed = (tmp_path / "p.hs").read_bytes()
    flipped = bytearray(sealed)
    flipped[len(sealed) // 2] ^= 1
    (tmp_path / "flip.hs").write_bytes(flipped)
    (tmp_path / "cut.hs").write_bytes(sealed[: len(sealed) - (64 * KIB + 16) - 7])
    for name in ["flip.hs", "cut.hs"]:
        with pytest.raises(hyperseal.AuthenticationError):
            hd.decrypt_large(procs, tmp_path / name, tmp_path / "out", me, part_size=128 * KIB)
        assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []
    with pytest.raises(hyperseal.NoIdentityError):
        hd.decrypt_large(procs, tmp_path / "p.hs", tmp_path / "out", hyperseal.generate_key(), part_size=128 * KIB)
    assert not (tmp_path / "out").exists()


def test_existing_destination_and_changing_source(tmp_path, me, procs):
    (tmp_path / "p").write_bytes(os.urandom(300 * KIB))
    (tmp_path / "taken").write_bytes(b"keep me")
    with pytest.raises(hyperseal.IoError, match="already exists"):
        hd.encrypt_large(procs, tmp_path / "p", tmp_path / "taken", me.public)
    assert (tmp_path / "taken").read_bytes() == b"keep me"

    def touch(_done):  # the source changes while its parts are sealed
        os.utime(tmp_path / "p", ns=(1, 1))

    with pytest.raises(hyperseal.IoError, match="changed"):
        hd.encrypt_large(procs, tmp_path / "p", tmp_path / "p.hs", me.public, part_size=64 * KIB, progress=touch)
    assert not (tmp_path / "p.hs").exists() and leftovers(tmp_path) == []


def test_part_key_in_one_process(me):
    plain = os.urandom(200 * KIB + 1)
    head, key = PartKey.seal_new(len(plain), me.public, chunk_size=16 * KIB)
    assert "redacted" in repr(key) and key.to_bytes().hex() not in repr(key)
    copy = pickle.loads(pickle.dumps(key))
    parts = key.plan(48 * KIB)
    # A copy knows no plan: the last part, sealed first, names its part size.
    sealed = [copy.seal(first, plain[p0:p1], part_size=48 * KIB) for first, p0, p1, _, _ in reversed(parts)][::-1]
    assert [len(s) for s in sealed] == [f1 - f0 for _, _, _, f0, f1 in parts]
    file = head + b"".join(sealed)
    assert hyperseal.decrypt(file, me) == plain
    opener = PartKey.open_file(io.BytesIO(file), len(file), me)
    assert b"".join(opener.open(first, file[f0:f1]) for first, _, _, f0, f1 in opener.plan(32 * KIB)) == plain
    with pytest.raises(hyperseal.ArgumentError):
        opener.seal(0, plain[: 16 * KIB])  # an opening key does not seal
    with pytest.raises(hyperseal.ArgumentError):
        key.seal(0, plain[: 16 * KIB + 1])  # not whole chunks, not the end
    # Into a caller's buffer: exactly the part's size, never overlapping the input.
    first, p0, p1, f0, f1 = parts[0]
    out = bytearray(f1 - f0)
    key.seal_into(first, plain[p0:p1], out)
    assert bytes(out) == sealed[0]
    with pytest.raises(hyperseal.ArgumentError):
        key.seal_into(first, plain[p0:p1], bytearray(f1 - f0 + 1))
    shared = bytearray(2 * (f1 - f0))
    with pytest.raises(hyperseal.ArgumentError, match="overlap"):
        key.seal_into(first, memoryview(shared)[: p1 - p0], memoryview(shared)[1:])
    back = bytearray(p1 - p0)
    assert opener.open_into(first, file[f0:f1], back) == p1 - p0 and bytes(back) == plain[p0:p1]


def test_part_key_seal_claims_every_part_in_memory(me):
    """`seal` and `seal_into` claim each part in the key's own store (the library's
    MemoryClaims): one part index never seals two plaintexts under one key."""
    plain = bytearray(os.urandom(100 * KIB + 3))
    _, key = PartKey.seal_new(len(plain), me.public, chunk_size=16 * KIB)
    first, p0, p1, f0, f1 = key.plan(32 * KIB)[1]
    sealed = key.seal(first, plain[p0:p1])
    assert key.seal(first, plain[p0:p1]) == sealed  # a retry with the same bytes
    changed = bytearray(plain[p0:p1])
    changed[5] ^= 1
    with pytest.raises(hyperseal.ArgumentError, match="reuse a nonce"):
        key.seal(first, changed)
    out = bytearray(f1 - f0)
    with pytest.raises(hyperseal.ArgumentError, match="reuse a nonce"):
        key.seal_into(first, changed, out)
    assert out == bytearray(f1 - f0), "the refused part is wiped"
    key.seal_into(first, plain[p0:p1], out)
    assert bytes(out) == sealed
    # Another plan under the same key would put other bytes under the same nonces.
    with pytest.raises(hyperseal.ArgumentError, match="another part size"):
        key.seal(0, plain[: 16 * KIB], part_size=16 * KIB)
    # Without a plan the part shows its size; the last part of an unnamed plan must say it.
    _, fresh = PartKey.seal_new(len(plain), me.public, chunk_size=16 * KIB)
    with pytest.raises(hyperseal.ArgumentError, match="part_size"):
        fresh.seal(6, plain[96 * KIB:])
    fresh.seal(2, plain[32 * KIB:64 * KIB])
    fresh.seal(6, plain[96 * KIB:])  # now the key knows its plan
    with pytest.raises(hyperseal.ArgumentError, match="reuse a nonce"):
        fresh.seal(6, plain[96 * KIB:-1] + b"x")
