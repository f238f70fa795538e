"""Wycheproof vectors from the repository copy (vectors/wycheproof, Apache-2.0), for the toolkit
tests: each group's tests as (group, test) pairs."""

import json
from pathlib import Path

DIR = Path(__file__).resolve().parents[3] / "vectors" / "wycheproof"


def cases(name):
    doc = json.loads((DIR / f"{name}.json").read_text())
    return [(g, t) for g in doc["testGroups"] for t in g["tests"]]


def h(s):
    return bytes.fromhex(s)
