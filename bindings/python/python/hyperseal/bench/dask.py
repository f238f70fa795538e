"""The ``dask`` table of ``python -m hyperseal.bench``: one object across worker processes
(:func:`hyperseal.dask.encrypt_large` / ``decrypt_large`` on a ``LocalCluster``) against
:func:`hyperseal.encrypt_file` / ``decrypt_file`` in this process, on the same file at the
largest size — the cluster's overhead as a ratio — and one worker's throughput, the figure a
real cluster's is projected from (workers × the per-worker rate, until storage is the limit)."""

import os

import hyperseal

from .tables import measure

#: Each task seals this much (whole 64 KiB chunks); a 256 MiB file is 8 parts.
PART = 32 << 20


def dask_table(sizes, runs, workdir):
    from dask.distributed import Client, LocalCluster

    import hyperseal.dask as hd

    size = max(sizes)
    me = hyperseal.generate_key("x25519")
    src, out, back = (os.path.join(workdir, n) for n in ("large.bin", "large.hs", "large.out"))
    with open(src, "wb") as f:
        for at in range(0, size, 16 << 20):
            f.write(os.urandom(min(16 << 20, size - at)))
    hyperseal.encrypt_file(src, out, me.public, force=True)
    rows = [
        ("dask", size, "one process", "encrypt", *measure(lambda: hyperseal.encrypt_file(src, out, me.public, force=True), runs)),
        ("dask", size, "one process", "decrypt", *measure(lambda: hyperseal.decrypt_file(out, back, me, force=True), runs)),
    ]
    for workers in (1, 2):
        name = f"hyperseal encrypt_large, {workers} worker process{'es' if workers > 1 else ''}"
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            seal = lambda: hd.encrypt_large(client, src, out, me.public, part_size=PART, force=True)  # noqa: E731
            seal()  # warm: the workers import hyperseal
            rows.append(("dask", size, name, "encrypt", *measure(seal, runs)))
            rows.append(("dask", size, name.replace("encrypt_large", "decrypt_large"), "decrypt",
                         *measure(lambda: hd.decrypt_large(client, out, back, me, part_size=PART, force=True), runs)))
    for path in (src, out, back):
        os.unlink(path)
    return rows
