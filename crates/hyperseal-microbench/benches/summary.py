#!/usr/bin/env python3
"""Prints mean and median of every criterion benchmark under $CARGO_TARGET_DIR/criterion
(or the path given), one line each: `group/function/param  mean  median`."""
import json, os, sys, glob
root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
def fmt(ns):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= div:
            return f"{ns / div:8.3f} {unit}"
    return f"{ns:8.1f} ns"
for est in sorted(glob.glob(os.path.join(root, "**", "new", "estimates.json"), recursive=True)):
    bench = json.load(open(os.path.join(os.path.dirname(est), "benchmark.json")))
    e = json.load(open(est))
    print(f"{bench['full_id']:<60} mean {fmt(e['mean']['point_estimate'])}  median {fmt(e['median']['point_estimate'])}")
