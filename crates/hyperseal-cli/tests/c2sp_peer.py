"""The pyca/cryptography side of tests/c2sp_interop.rs: runs a batch of jobs with the real
`cryptography.cobblestone` (pyca/cryptography >= 50, from the project venv).

usage: c2sp_peer.py JOBS.json RESULTS.json

Each job is {"op": "encrypt"|"decrypt", "key": HEX, "context": HEX, "input": PATH,
"output": PATH, "piece": N}. Input is fed to update() in pieces of N bytes (to cross chunk
boundaries in every way); the result of each job is "ok" or the exception's class name
(InvalidTag for every authentication failure). Decrypt jobs write nothing unless they succeed.
"""

import json
import sys

import cryptography
from cryptography.cobblestone import (
    Cobblestone128Decryptor,
    Cobblestone128Encryptor,
    Cobblestone256Decryptor,
    Cobblestone256Encryptor,
)

CLASSES = {
    ("encrypt", 16): Cobblestone128Encryptor,
    ("encrypt", 32): Cobblestone256Encryptor,
    ("decrypt", 16): Cobblestone128Decryptor,
    ("decrypt", 32): Cobblestone256Decryptor,
}


def run(job):
    key = bytes.fromhex(job["key"])
    ctx = bytes.fromhex(job["context"])
    with open(job["input"], "rb") as f:
        data = f.read()
    ctx_obj = CLASSES[(job["op"], len(key))](key, ctx)
    piece = job.get("piece") or max(len(data), 1)
    out = [ctx_obj.update(data[i : i + piece]) for i in range(0, len(data), piece)]
    out.append(ctx_obj.finalize())
    with open(job["output"], "wb") as f:
        f.write(b"".join(out))


def main():
    major = int(cryptography.__version__.split(".")[0])
    if major < 50:
        sys.exit(f"pyca/cryptography {cryptography.__version__} has no cobblestone (need >= 50)")
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    results = []
    for job in jobs:
        try:
            run(job)
            results.append("ok")
        except Exception as e:  # the test compares the class name
            results.append(type(e).__name__)
    with open(sys.argv[2], "w") as f:
        json.dump({"version": cryptography.__version__, "results": results}, f)


if __name__ == "__main__":
    main()
