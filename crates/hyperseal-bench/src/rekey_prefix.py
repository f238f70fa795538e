"""The S3-prefix row of the bench's `rekey` table (crates/hyperseal-bench/src/rekey_s3.rs runs it
in the project venv, beside rekey_s3.py, whose MinIO start-up and TCP relay it reuses): 1,000
objects on a MinIO started here on 127.0.0.1 (mostly small, four past S3's 5 MiB part, one of
12 MiB), re-keyed with ``hyperseal.dask.rekey_prefix`` on a LocalCluster of 2 worker processes,
against the floor of any re-key that writes new first bytes: no store can splice an object under
S3's 5 MiB part minimum, so each such object is a plain GET and PUT of the whole object, and a
larger one the store's own ``CopyObject``; fanned out on the same cluster in the same batches
with the same objects in flight per worker.

The operations run in turn, ``--runs`` rounds after one warm-up each; the client's traffic (the
workers' and the driver's) is counted in the warm-up by a TCP relay in front of MinIO, the timed
runs go to MinIO directly. The re-key's own manifest (an object beside the prefix) is part of
its figure; it is removed between runs, since the next run re-keys back (another change).

Usage: python rekey_prefix.py --minio PATH --objects N --runs N --dir DIR --json OUT
Exit 0 with a JSON report; exit 3 with the reason on stderr when a package or MinIO is missing."""

import argparse
import asyncio
import random
import time

from rekey_s3 import PASSWORD, USER, fail, report, start
from s3_local import CountingRelay, stop

PER_WORKER = 16  # rekey_prefix's default max_concurrency: objects in flight per worker and per task
MIN_PART = 5 << 20  # S3's smallest part but the last: below it, no store can splice new first bytes


def floor_batch(items, url):
    """A task: each (key, size) to copy/KEY by the cheapest write of new first bytes: GET + PUT
    under 5 MiB, the store's CopyObject from there; at most PER_WORKER in flight."""
    import s3fs
    from fsspec.asyn import sync

    fs = s3fs.S3FileSystem(endpoint_url=url, key=USER, secret=PASSWORD)

    async def run():
        await fs.set_session()
        s3 = await fs.get_s3("bench")
        gate = asyncio.Semaphore(PER_WORKER)

        async def one(k, size):
            async with gate:
                if size >= MIN_PART:
                    await s3.copy_object(Bucket="bench", Key=f"copy/{k}", CopySource={"Bucket": "bench", "Key": k})
                    return
                resp = await s3.get_object(Bucket="bench", Key=k)
                async with resp["Body"] as body:
                    data = await body.read()
                await s3.put_object(Bucket="bench", Key=f"copy/{k}", Body=data)

        await asyncio.gather(*(one(k, size) for k, size in items))
        return len(items)

    return sync(fs.loop, run)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--minio", "--dir", "--json"):
        ap.add_argument(a, required=True)
    ap.add_argument("--objects", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    try:
        import s3fs
        from dask.distributed import Client, LocalCluster

        import hyperseal
        import hyperseal.dask
    except ImportError as e:
        fail(f"the venv lacks {e.name} (make python)")
    proc, direct = start(a.minio, a.dir)
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            run(a, s3fs, hyperseal, client, direct)
    finally:
        stop(proc)


def run(a, s3fs, hyperseal, client, direct):
    relay = CountingRelay(direct)
    fs = s3fs.S3FileSystem(endpoint_url=direct, key=USER, secret=PASSWORD, use_listings_cache=False)
    keys = [hyperseal.generate_key(), hyperseal.generate_key()]
    fs.mkdir("bench")
    rng = random.Random(7)
    big = [(5 << 20) - 100, (5 << 20) + 1024, (5 << 20) + (70 << 10), 12 << 20]
    sizes = [rng.choice([0, 1, 100, 4 << 10, 20 << 10, (64 << 10) + 1]) for _ in range(a.objects - len(big))] + big
    objects = {f"p/d{i % 7}/o{i:05}.hs": hyperseal.encrypt(rng.randbytes(n), keys[0].public)
               for i, n in enumerate(sizes)}
    fs.pipe({f"bench/{k}": v for k, v in objects.items()})
    stored = sum(len(v) for v in objects.values())
    names = sorted(objects)
    batches = [[(k, len(objects[k])) for k in names[i:i + PER_WORKER]] for i in range(0, len(names), PER_WORKER)]
    state = {"owner": 0}

    def rekey(url):
        i = state["owner"]
        opts = dict(endpoint_url=url, key=USER, secret=PASSWORD)
        _, summary = hyperseal.dask.rekey_prefix(client, "s3://bench/p/", keys[i], recipients=keys[1 - i].public,
                                                 remove_own=True, storage_options=opts)
        if summary["failed"] or summary["s3_put"] + summary["s3_multipart"] != len(objects):
            raise SystemExit(f"rekey_prefix did not re-key every object: {summary}")
        state["summary"] = summary
        state["owner"] = 1 - i

    def floor(url):
        done = client.gather(client.map(floor_batch, batches, url=url, pure=False))
        assert sum(done) == len(objects)

    def tidy():
        fs.invalidate_cache()
        gone = fs.find("bench/copy") + [p for p in fs.find("bench/p") if p.endswith(".hyperseal-rekey.manifest")]
        if gone:
            fs.rm(gone)

    ops = {"rekey_prefix": rekey, "floor": floor}
    rows = {name: {"seconds": [], "up": 0, "down": 0} for name in ops}
    for name, op in ops.items():
        relay.up = relay.down = 0
        op(relay.url)
        rows[name]["up"], rows[name]["down"] = relay.up, relay.down
        tidy()
    for _ in range(max(1, a.runs)):
        for name, op in ops.items():
            t = time.perf_counter()
            op(direct)
            rows[name]["seconds"].append(time.perf_counter() - t)
            tidy()
    relay.close()
    report(a.json, rows, hyperseal, s3fs, objects=len(objects), stored=stored, summary=state.get("summary"))


if __name__ == "__main__":
    main()
