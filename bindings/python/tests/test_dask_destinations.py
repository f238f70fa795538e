"""hyperseal.dask's large-object destinations and keys, locally: a file that appears at the
destination during the run is kept (the library's AtomicOutput links without replacing), and
``force=True`` replaces it; the part key reaches the tasks only wrapped under a per-job key
that lives in the workers' plugins (never in spillable task data) and is gone when the job
ends."""

import os

import pytest

pytest.importorskip("dask.distributed")

import hyperseal
import hyperseal.dask as hd
from hyperseal import _large
from hyperseal.parts import PartKey

from dask_cluster import procs  # noqa: F401 (a fixture)

KIB = 1024


def hidden(d):
    return sorted(p for p in os.listdir(d) if p.startswith("."))


def test_a_destination_that_appears_during_the_run_is_kept(tmp_path, me, procs):
    plain = os.urandom(300 * KIB)
    (tmp_path / "p").write_bytes(plain)
    late = tmp_path / "late.hs"

    def appear(_done):
        if not late.exists():
            late.write_bytes(b"came first")

    with pytest.raises(hyperseal.IoError, match="exists"):
        hd.encrypt_large(procs, tmp_path / "p", late, me.public, part_size=64 * KIB, progress=appear)
    assert late.read_bytes() == b"came first" and hidden(tmp_path) == []
    hd.encrypt_large(procs, tmp_path / "p", late, me.public, part_size=64 * KIB, force=True)
    assert hyperseal.decrypt(late.read_bytes(), me) == plain and hidden(tmp_path) == []


def test_the_part_key_reaches_tasks_only_wrapped(me, procs):
    _, key = PartKey.seal_new(1000, me.public)
    raw = key.to_bytes()
    job = _large.JobKeys(procs, key)
    try:
        assert raw[-64:-32] not in job.wrapped  # the payload key bytes are not in the task argument
        assert set(procs.run(lambda dask_worker, n=job.name: n in dask_worker.plugins).values()) == {True}
        got = procs.submit(lambda w, n: _large.unwrap(n, w).to_bytes(), job.wrapped, job.name, pure=False).result()
        assert got == raw
    finally:
        job.close()
    assert set(procs.run(lambda dask_worker, n=job.name: n in dask_worker.plugins).values()) == {False}
    with pytest.raises(hyperseal.IoError, match="job ended"):
        procs.submit(_large.unwrap, job.name, job.wrapped, pure=False).result()
