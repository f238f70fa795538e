"""Benchmarks from Python, same process, same inputs (``python -m hyperseal.bench``).

Tables, each hyperseal against the peer Python users run for the same job today:

* ``aead``: AES-256-GCM one-shot, ``hyperseal.aead`` vs pyca/cryptography's ``AESGCM``;
* ``c2sp``: C2SP chunked encryption, ``hyperseal.c2sp`` (every core) vs pyca's ``Cobblestone256``
  (the same format), ``update(data) + finalize()`` on in-memory buffers;
* ``age``: age files to an X25519 recipient, ``hyperseal.encrypt(format="age")`` /
  ``decrypt`` in memory and ``encrypt_file`` / ``decrypt_file`` on files, vs pyrage (rage's
  Python binding): ``encrypt``/``decrypt`` and ``encrypt_file``/``decrypt_file``;
* ``small``: a 1 KB encrypt + decrypt round trip in µs to a hybrid (ML-KEM-768 + X25519)
  recipient, and to X25519 beside pyrage's;
* ``dask``: one file at the largest size through ``hyperseal.dask.encrypt_large`` /
  ``decrypt_large`` on a ``LocalCluster`` of 1 and 2 worker processes vs ``encrypt_file`` /
  ``decrypt_file`` in one process (the cluster's overhead, and the per-worker rate).

Each figure is the median of ``--runs`` calls; ``cpu`` is process CPU time per wall second (2.0 =
two cores busy). ``--json FILE`` (``-`` for stdout) writes the rows for machines
(``hyperseal-bench``'s ``python`` table reads it).
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import hyperseal

from . import tables
from .dask import dask_table

TABLES = ("aead", "c2sp", "age", "small", "dask")
TITLES = {
    "aead": "AES-256-GCM one-shot (in memory)",
    "c2sp": "C2SP chunked encryption, Cobblestone-256 (in memory)",
    "age": "age, X25519 recipient (in memory)",
    "age-file": "age files, X25519 recipient (file to file)",
    "small": "1 KB encrypt + decrypt round trip",
    "dask": "one file across Dask worker processes (LocalCluster) vs one process",
}
MULT = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_sizes(text):
    return [int(s[:-1]) * MULT[s[-1].upper()] if s[-1].upper() in MULT else int(s) for s in text.split(",")]


def fmt_size(n):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= m and n % m == 0:
            return f"{n // m} {unit}"
    return f"{n} B"


def machine():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = {"python": platform.python_version(), "hyperseal": hyperseal.__version__}
    for mod in ("cryptography", "pyrage"):
        try:
            from importlib.metadata import version

            versions[mod] = version(mod)
        except Exception:  # noqa: BLE001 (a missing peer is reported, not fatal)
            versions[mod] = None
    return {"cpu": cpu, "cores": os.cpu_count(), "versions": versions}


def busy_seconds():
    """CPU seconds the whole machine has spent busy (``/proc/stat``), or None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def others_share(run):
    """Runs ``run()`` and returns its result and the share of one core that *other* processes
    used meanwhile (machine busy time minus this process's CPU time, per wall second): the
    honest measure of how quiet the machine was for these figures."""
    b0, c0, t0 = busy_seconds(), time.process_time(), time.perf_counter()
    out = run()
    b1, c1, t1 = busy_seconds(), time.process_time(), time.perf_counter()
    if b0 is None:
        return out, None
    return out, max(0.0, (b1 - b0) - (c1 - c0)) / (t1 - t0)


def ratios(rows):
    """For each hyperseal row: the peer's time ÷ hyperseal's (above 1: hyperseal is faster)."""
    out = {}
    for table, size, name, op, secs, _ in rows:
        peer = tables.PEERS.get(table)
        if peer and name.startswith("hyperseal"):
            theirs = next((r[4] for r in rows if r[0] == table and r[1] == size and r[2] == peer and r[3] == op), None)
            if theirs:
                out[(table, size, name, op)] = theirs / secs
    return out


def targets(rows, ratio):
    """The targets, from this run's rows (None when the row was not measured)."""
    big = max((r[1] for r in rows if r[0] == "c2sp"), default=None)
    fbig = max((r[1] for r in rows if r[0] == "age-file"), default=None)
    hyb = next((r[4] for r in rows if r[0] == "small" and r[2] == "hyperseal hybrid"), None)

    def both(table, size):
        got = [ratio.get((table, size, n, op)) for n in ("hyperseal c2sp", "hyperseal") for op in ("encrypt", "decrypt")]
        got = [g for g in got if g is not None]
        return min(got) if got else None

    return {
        "c2sp_vs_cobblestone": {"size": big, "min_ratio": both("c2sp", big), "target": 1.7},
        "age_files_vs_pyrage": {"size": fbig, "min_ratio": both("age-file", fbig), "target": 3.0},
        "hybrid_1kb_round_trip_us": {"us": hyb and hyb * 1e6, "target": 150},
    }


def render(rows, ratio, info, runs, load, others):
    print(f"# python -m hyperseal.bench: {info['cpu']}, {info['cores']} cores, median of {runs} runs (more below 1 MiB)")
    print(f"versions: {info['versions']}; load average at start / end: {load[0]:.2f} / {load[1]:.2f}")
    busy = ", ".join(f"{t} {x:.0%}" for t, x in others.items() if x is not None)
    print(f"other processes' CPU during each table, in cores: {busy or 'unknown'}")
    for table in dict.fromkeys(r[0] for r in rows):
        print(f"\n## {TITLES[table]}\n")
        unit = "µs" if table == "small" else "GB/s"
        print(f"| size | implementation | op | time | {unit} | CPU | peer ÷ hyperseal |")
        print("|---:|---|---|---:|---:|---:|---:|")
        for t, size, name, op, secs, cpu in (r for r in rows if r[0] == table):
            x = ratio.get((t, size, name, op))
            speed = f"{secs * 1e6:.1f}" if table == "small" else f"{size / secs / 1e9:.2f}"
            print(
                f"| {fmt_size(size)} | {name} | {op} | {secs * 1e3:.3f} ms | {speed} | {cpu:.2f} | "
                f"{f'{x:.2f}×' if x else '–'} |"
            )


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m hyperseal.bench", description=__doc__.split("\n")[0])
    p.add_argument("--tables", default=",".join(TABLES), help=f"comma-separated, of: {', '.join(TABLES)}")
    p.add_argument("--sizes", default="1K,64K,1M,16M,256M", help="comma-separated sizes (K, M, G suffixes)")
    p.add_argument("--runs", type=int, default=5, help="runs per figure (at least 50 below 1 MiB)")
    p.add_argument("--quick", action="store_true", help="sizes 1K,1M,256M and 3 runs")
    p.add_argument("--dir", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir(),
                   help="where the age-file rows write (default: /dev/shm, a tmpfs, when writable)")
    p.add_argument("--json", metavar="FILE", help="also write the rows as JSON (- for stdout, instead of the table)")
    a = p.parse_args(argv)
    sizes, runs = parse_sizes("1K,1M,256M" if a.quick else a.sizes), 3 if a.quick else a.runs
    chosen = a.tables.split(",")
    load0 = os.getloadavg()[0]
    rows, others = [], {}
    with tempfile.TemporaryDirectory(dir=a.dir, prefix="hyperseal-bench-") as work:
        run = {
            "aead": lambda: tables.aead_table(sizes, runs),
            "c2sp": lambda: tables.c2sp_table(sizes, runs),
            "age": lambda: tables.age_table(sizes, runs, work),
            "small": lambda: tables.small_table(runs),
            "dask": lambda: dask_table(sizes, runs, work),
        }
        for t in chosen:
            if t not in run:
                p.error(f"unknown table {t!r}")
            got, others[t] = others_share(run[t])
            rows += got
    load = (load0, os.getloadavg()[0])
    info, ratio = machine(), ratios(rows)
    if a.json:
        doc = {
            **info,
            "runs": runs,
            "load": load,
            "others_cpu": others,
            "dir": a.dir,
            "rows": [
                {"table": t, "size": s, "impl": n, "op": o, "seconds": secs, "cpu": c,
                 "peer": tables.PEERS.get(t), "ratio": ratio.get((t, s, n, o))}
                for t, s, n, o, secs, c in rows
            ],
            "targets": targets(rows, ratio),
        }
        text = json.dumps(doc, indent=1)
        if a.json == "-":
            print(text)
            return
        with open(a.json, "w") as f:
            f.write(text + "\n")
    render(rows, ratio, info, runs, load, others)
    for name, t in targets(rows, ratio).items():
        print(f"target {name}: {t}", file=sys.stderr)
