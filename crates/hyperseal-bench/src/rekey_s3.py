"""The S3 part of the bench's `rekey` table (crates/hyperseal-bench/src/rekey.rs runs it in the
project venv): one object on a MinIO started here on 127.0.0.1, re-keyed with
``hyperseal.rekey_file("s3://…")`` (ranged GET of the head + UploadPartCopy), against the store's
own server-side copy (s3fs ``copy``) and a plain Python decrypt + encrypt streamed through this
process (``hyperseal.open`` over s3fs files), which is what re-keying costs without rekey.

Every figure is a wall time of one operation, the operations run in turn (rekey, copy, stream, …)
so load from elsewhere falls on all of them alike. The client's traffic is counted once per
operation, in its warm-up run, by a TCP relay on 127.0.0.1 in front of MinIO; the timed runs go
to MinIO directly, so the relay's own cost is in no figure.

Usage: python rekey_s3.py --minio PATH --size BYTES --runs N --dir DIR --json OUT
Exit 0 with a JSON report; on a missing package or a MinIO that does not start, exit 3 with the
reason on stderr (the table then becomes a note)."""

import argparse
import json
import os
import sys
import time

from s3_local import CountingRelay, start_minio, stop

USER, PASSWORD = "hyperseal-bench", "hyperseal-bench-secret"


def start(minio, data):
    """MinIO on 127.0.0.1 (s3_local.py, the tests' own start-up): ``(process, url)``, or exit 3."""
    try:
        return start_minio(minio, data, USER, PASSWORD)
    except RuntimeError as e:
        fail(str(e)[-500:])


def fail(why):
    print(why, file=sys.stderr)
    sys.exit(3)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--minio", "--dir", "--json"):
        ap.add_argument(a, required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    try:
        import s3fs

        import hyperseal
    except ImportError as e:
        fail(f"the venv lacks {e.name} (make python)")
    if not os.path.exists(a.minio):
        fail(f"{a.minio} missing (make minio)")

    proc, direct = start(a.minio, a.dir)
    try:
        run(a, s3fs, hyperseal, direct)
    finally:
        stop(proc)


def run(a, s3fs, hyperseal, direct):
    relay = CountingRelay(direct)

    def fs_for(url):
        return s3fs.S3FileSystem(endpoint_url=url, key=USER, secret=PASSWORD, use_listings_cache=False,
                                 skip_instance_cache=True)

    fs, counted = fs_for(direct), fs_for(relay.url)
    keys = [hyperseal.generate_key(), hyperseal.generate_key()]
    fs.mkdir("bench")
    # The object as `hyperseal encrypt` leaves it (header with slack), written in parts so the
    # plaintext is never whole in memory.
    block = os.urandom(1 << 20)
    with fs.open("bench/obj.hs", "wb", block_size=64 << 20) as raw:
        with hyperseal.open(raw, "wb", recipients=keys[0].public) as w:
            left = a.size
            while left > 0:
                n = min(left, len(block))
                w.write(block[:n])
                left -= n
    stored = fs.info("bench/obj.hs")["size"]
    state = {"owner": 0}

    def rekey(f, url):
        # A→B, then B→A on the next call: the object is the same object every other run.
        i = state["owner"]
        opts = dict(endpoint_url=url, key=USER, secret=PASSWORD, skip_instance_cache=True)
        got = hyperseal.rekey_file("s3://bench/obj.hs", keys[i], recipients=keys[1 - i].public, remove_own=True,
                                   storage_options=opts)
        state["written"] = got.written
        state["owner"] = 1 - i

    def server_copy(f, url):
        f.copy("bench/obj.hs", "bench/copy.hs")

    def stream(f, url):
        i = state["owner"]
        with f.open("bench/obj.hs", "rb", block_size=16 << 20) as src, \
                hyperseal.open(src, "rb", identities=keys[i]) as r, \
                f.open("bench/new.hs", "wb", block_size=64 << 20) as dst, \
                hyperseal.open(dst, "wb", recipients=keys[1 - i].public, force=True) as w:
            while chunk := r.read(8 << 20):
                w.write(chunk)

    def tidy():
        for k in ("bench/copy.hs", "bench/new.hs"):
            if fs.exists(k):
                fs.rm(k)

    ops = {"rekey": rekey, "server copy": server_copy, "decrypt + encrypt": stream}
    rows = {name: {"seconds": [], "up": 0, "down": 0} for name in ops}
    for name, op in ops.items():
        relay.up = relay.down = 0
        op(counted, relay.url)
        rows[name]["up"], rows[name]["down"] = relay.up, relay.down
        tidy()
    for _ in range(max(1, a.runs)):
        for name, op in ops.items():
            t = time.perf_counter()
            op(fs, direct)
            rows[name]["seconds"].append(time.perf_counter() - t)
            tidy()
    relay.close()
    report(a.json, rows, hyperseal, s3fs, size=a.size, stored=stored, written=state.get("written"))


def report(path, rows, hyperseal, s3fs, **figures):
    """Writes the JSON report: ``figures``, the versions, the load, and each operation's row."""
    out = {
        **figures,
        "versions": {"python": sys.version.split()[0], "hyperseal": hyperseal.__version__, "s3fs": s3fs.__version__},
        "load": os.getloadavg()[0],
        "rows": [{"op": name, **r} for name, r in rows.items()],
    }
    with open(path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
