"""The Dask table of ``python -m hyperseal.bench``: one object across workers
(:func:`hyperseal.dask.encrypt_large`) against :func:`hyperseal.encrypt_file` in this process,
same file, same machine — the cluster's overhead as a ratio — and one worker's throughput, the
figure a cluster's throughput is projected from (workers × per-worker rate, until the storage
is the limit)."""

import os
import statistics
import tempfile
import time


def _best(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def large_table(size, runs, part_size=32 << 20):
    """Rows ``(name, seconds_min, seconds_median, GB/s)`` for a ``size``-byte file on tmpfs when
    there is one (so the figures are the cipher and the cluster, not the disk)."""
    from dask.distributed import Client, LocalCluster

    import hyperseal
    import hyperseal.dask as hd

    me = hyperseal.generate_key("x25519")
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    rows = []
    with tempfile.TemporaryDirectory(dir=base) as d:
        src, out, back = (os.path.join(d, n) for n in ("in.bin", "out.hs", "back.bin"))
        with open(src, "wb") as f:
            for _ in range(0, size, 16 << 20):
                f.write(os.urandom(min(16 << 20, size - f.tell())))

        def one_process():
            hyperseal.encrypt_file(src, out, me.public, force=True)

        rows.append(("encrypt_file, one process (all cores)", *_best(one_process, runs)))
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=":0") as cluster, Client(cluster) as client:
                def large():
                    hd.encrypt_large(client, src, out, me.public, part_size=part_size, force=True)

                def large_back():
                    hd.decrypt_large(client, out, back, me, part_size=part_size, force=True)

                large()  # warm: workers import hyperseal, the key reaches them
                rows.append((f"encrypt_large, {workers} worker process{'es' if workers > 1 else ''}",
                             *_best(large, runs)))
                rows.append((f"decrypt_large, {workers} worker process{'es' if workers > 1 else ''}",
                             *_best(large_back, runs)))
    return [(name, lo, med, size / lo / 1e9) for name, lo, med in rows]


if __name__ == "__main__":
    for name, lo, med, gbs in large_table(256 << 20, 3):
        print(f"{name:45s} {lo * 1e3:8.1f} ms  {med * 1e3:8.1f} ms  {gbs:6.2f} GB/s")
