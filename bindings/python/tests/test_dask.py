"""hyperseal.dask on a dask.distributed LocalCluster (2 in-process workers): one task per file,
results per file, the CLI opens every output, failures are reported per file and leave nothing
at their destination, fsspec URLs work as paths."""

import os
import subprocess

import fsspec
import pytest
from dask.distributed import Client, LocalCluster

import hyperseal
import hyperseal.dask as hd


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        with Client(cluster) as c:
            yield c


def test_encrypt_files_then_the_cli_and_decrypt_files(tmp_path, me, cli, client):
    src = tmp_path / "in"
    src.mkdir()
    plains = {f"f{i}.bin": os.urandom(n) for i, n in enumerate([0, 1, 65536, 65537, 2_000_000])}
    for name, data in plains.items():
        (src / name).write_bytes(data)
    paths = [src / n for n in plains] + [src / "missing.bin"]
    results = hd.encrypt_files(client, paths, tmp_path / "sealed", me.public)
    assert [r.src for r in results] == [str(p) for p in paths]
    *good, missing = results
    assert [r.error for r in good] == [None] * len(good) and [r.size for r in good] == [len(d) for d in plains.values()]
    assert missing.error and missing.code == "ERR_HYPERSEAL_IO" and not os.path.exists(missing.dst)
    key = tmp_path / "k"
    key.write_text(me.secret)
    for r, data in zip(good, plains.values()):
        assert r.dst.endswith(".hs")
        out = subprocess.run([cli, "decrypt", "-i", key, r.dst], capture_output=True, check=True)
        assert out.stdout == data
    back = hd.decrypt_files(client, [r.dst for r in good], tmp_path / "back", me)
    assert all(r.error is None for r in back)
    for name, data in plains.items():
        assert (tmp_path / "back" / name).read_bytes() == data


def test_a_damaged_file_is_reported_and_leaves_nothing(tmp_path, me, client):
    (tmp_path / "a").write_bytes(os.urandom(500_000))
    (tmp_path / "b").write_bytes(os.urandom(500_000))
    sealed = hd.encrypt_files(client, [tmp_path / "a", tmp_path / "b"], tmp_path, me)
    raw = bytearray(open(sealed[1].dst, "rb").read())
    raw[-200] ^= 1
    open(sealed[1].dst, "wb").write(raw)
    out = tmp_path / "out"
    out.mkdir()
    a, b = hd.decrypt_files(client, [r.dst for r in sealed], out, me)
    assert a.error is None and (out / "a").read_bytes() == (tmp_path / "a").read_bytes()
    assert b.code == "ERR_HYPERSEAL_AUTH" and "AuthenticationError" in b.error
    assert os.listdir(out) == ["a"]
    again = hd.decrypt_files(client, [sealed[0].dst], out, me)[0]  # exists: needs force
    assert again.code == "ERR_HYPERSEAL_IO" and "force" in again.error


def test_fsspec_urls(me, client):
    mem = fsspec.filesystem("memory")
    try:
        mem.pipe_file("/src/x.csv", b"a,b\n1,2\n" * 10_000)
        mem.pipe_file("/src/y.csv", b"")
        sealed = hd.encrypt_files(client, ["memory://src/x.csv", "memory://src/y.csv"], "memory://sealed", me)
        assert [r.error for r in sealed] == [None, None] and sealed[0].size == 80_000
        assert hyperseal.decrypt(mem.cat_file("/sealed/x.csv.hs"), me) == mem.cat_file("/src/x.csv")
        mem.pipe_file("/sealed/bad.csv.hs", mem.cat_file("/sealed/x.csv.hs")[:-5])
        back = hd.decrypt_files(client, ["memory://sealed/x.csv.hs", "memory://sealed/bad.csv.hs"],
                                "memory://back", me)
        assert back[0].error is None and mem.cat_file("/back/x.csv") == mem.cat_file("/src/x.csv")
        assert back[1].code == "ERR_HYPERSEAL_AUTH" and not mem.exists("/back/bad.csv")
    finally:
        mem.rm("/", recursive=True)


def test_colliding_names_are_refused(tmp_path, me, client):
    with pytest.raises(hyperseal.ArgumentError):
        hd.encrypt_files(client, [tmp_path / "a" / "x", tmp_path / "b" / "x"], tmp_path, me)


def test_worker_processes_get_the_keys_by_pickle(tmp_path, me):
    """In-process workers share objects; real workers get everything pickled. Two worker
    processes (spawned, as on a cluster) decrypt with an Identity object sent to them."""
    (tmp_path / "p").write_bytes(b"across processes" * 1000)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with Client(cluster) as c:
            sealed = hd.encrypt_files(c, [tmp_path / "p"], tmp_path / "s", me.public)
            back = hd.decrypt_files(c, [r.dst for r in sealed], tmp_path / "b", me)
            assert c.run(os.getpid).keys() and len(set(c.run(os.getpid).values()) - {os.getpid()}) == 2
    assert [r.error for r in sealed + back] == [None, None]
    assert (tmp_path / "b" / "p").read_bytes() == b"across processes" * 1000
