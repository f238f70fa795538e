"""Benchmarks from Python, same process, same inputs (``python -m hyperseal.bench``).

Today one table: C2SP chunked encryption, hyperseal's ``c2sp`` (every core) against
pyca/cryptography's ``Cobblestone256`` (the same format), streaming-shaped calls
(``update(data) + finalize()``) on in-memory buffers. Reports the median of ``--runs`` runs in
GB/s, and the process CPU time per wall second (CPU 2.0 = two cores busy).
"""

import argparse
import os
import statistics
import time


def measure(fn, runs):
    """Median wall seconds and CPU seconds per wall second over ``runs`` calls."""
    walls, cpus = [], []
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        t1, c1 = time.perf_counter(), time.process_time()
        walls.append(t1 - t0)
        cpus.append((c1 - c0) / (t1 - t0))
    return statistics.median(walls), statistics.median(cpus)


def c2sp_table(sizes, runs):
    from cryptography import cobblestone as pyca

    from . import c2sp

    key = os.urandom(32)
    rows = []
    for size in sizes:
        data = os.urandom(size)
        impls = {
            "hyperseal c2sp": (c2sp.Cobblestone256Encryptor, c2sp.Cobblestone256Decryptor),
            "pyca Cobblestone256": (pyca.Cobblestone256Encryptor, pyca.Cobblestone256Decryptor),
        }
        made = {}
        for name, (enc_cls, _) in impls.items():
            e = enc_cls(key, b"bench")
            made[name] = e.update(data) + e.finalize()
        for name, (enc_cls, dec_cls) in impls.items():
            # Each side opens the message the other made (the formats are the same).
            other = made[next(n for n in impls if n != name)]

            def enc(enc_cls=enc_cls):
                e = enc_cls(key, b"bench")
                e.update(data)
                e.finalize()

            def dec(dec_cls=dec_cls, ct=other):
                d = dec_cls(key, b"bench")
                assert len(d.update(ct)) + len(d.finalize()) == size

            for op, fn in (("encrypt", enc), ("decrypt", dec)):
                wall, cpu = measure(fn, runs)
                rows.append((size, name, op, size / wall / 1e9, cpu))
        del made, data
    return rows


def main():
    p = argparse.ArgumentParser(prog="python -m hyperseal.bench", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1K,1M,256M", help="comma-separated sizes (K, M suffixes)")
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    sizes = [int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s) for s in a.sizes.split(",")]
    print(f"# C2SP chunked encryption, Cobblestone-256, {os.cpu_count()} cores, median of {a.runs}")
    print("| size | implementation | op | GB/s | CPU |")
    print("|---:|---|---|---:|---:|")
    for size, name, op, gbs, cpu in c2sp_table(sizes, a.runs):
        print(f"| {size} | {name} | {op} | {gbs:.2f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
