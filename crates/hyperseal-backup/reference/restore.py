#!/usr/bin/env python3
"""Reference restorer for hyperseal backup repositories, written from docs/BACKUP.md alone.

    python3 restore.py REPO IDENTITY_FILE SNAPSHOT TARGET

SNAPSHOT is an id, a unique prefix of one, or "latest". Needs an age library with the
pyrage API (hyperseal.pyrage, or pyrage for X25519 repositories), the blake3 package and a zstd
decoder (Python 3.14's compression.zstd, the zstandard package, or pyarrow). Every chunk is
checked against its id, as well as by age's authentication and its lengths: an index is only
a writer's word, and whoever can write to the store can plant a pack and an index that place
other bytes under a snapshot's chunk id.
"""

import json
import os
import struct
import sys

try:
    from hyperseal import pyrage
except ImportError:
    import pyrage

# Without it no chunk could be checked against its id, so nothing is restored at all.
try:
    import blake3
except ImportError:
    sys.exit("restore.py: the blake3 package is needed to check chunk ids (pip install blake3)")

# Bounds from docs/BACKUP.md, "Limits": checked before anything is kept.
MAX_SNAPSHOT = 256 << 20
MAX_TABLE = 64 << 20
MAX_CHUNK = 8 << 20
MAX_STORED = MAX_CHUNK + (MAX_CHUNK >> 7)
MAX_PATH = 4096
MAX_DEPTH = 256


def zstd_decompress(data, size):
    try:
        from compression import zstd
        return zstd.decompress(data)
    except ImportError:
        pass
    try:
        import zstandard
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    except ImportError:
        import pyarrow
        return pyarrow.decompress(data, decompressed_size=size, codec="zstd", asbytes=True)


def load_identities(path):
    ids = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("AGE-SECRET-KEY-PQ-1"):
                ids.append(pyrage.pq.Identity.from_str(line))
            elif line.startswith("AGE-SECRET-KEY-1"):
                ids.append(pyrage.x25519.Identity.from_str(line))
    if not ids:
        sys.exit("restore.py: no identity in " + path)
    return ids


class Repo:
    def __init__(self, root, identities):
        self.root, self.ids = root, identities
        self.config = json.loads(self.open_age("config", 64 << 10))
        if self.config["version"] != 1 or self.config["compression"] != "zstd":
            sys.exit("restore.py: unsupported repository version")
        self.dedup_key = bytes.fromhex(self.config["dedup_key"])
        self.pack_name, self.pack_plain = None, None

    def names(self, folder):
        d = os.path.join(self.root, folder)
        if not os.path.isdir(d):
            return []
        return sorted(n for n in os.listdir(d) if not n.startswith("."))

    def open_age(self, name, limit):
        with open(os.path.join(self.root, name), "rb") as f:
            plain = pyrage.decrypt(f.read(), self.ids)
        if len(plain) > limit:
            sys.exit("restore.py: %s is over its bound" % name)
        return plain

    def snapshots(self):
        out = []
        for n in self.names("snapshots"):
            s = json.loads(self.open_age("snapshots/" + n, MAX_SNAPSHOT))
            if s["version"] != 1:
                sys.exit("restore.py: unsupported snapshot version")
            out.append((s["time"], s.get("nanos", 0), n, s))
        return sorted(out, key=lambda t: t[:3])

    def index(self):
        places = {}
        for n in self.names("index"):
            if not n.endswith(".ids"):
                for e in parse_table(self.open_age("index/" + n, MAX_TABLE)):
                    places.setdefault(e[0], []).append(e)
        return places

    def chunk(self, cid, entries):
        """The chunk from the first place that holds it whole: an index is a writer's word,
        so a place may be wrong (a planted index, a pack gone), and another index's is tried."""
        why = "it is in no index"
        for entry in entries:
            try:
                data = self.chunk_at(entry)
            except Exception as e:  # a pack that is gone or does not open: the next place
                why = "data/%s: %s" % (entry[1], e)
                continue
            if data is not None:
                return data
            why = "data/%s: damaged, or does not match its id" % entry[1]
        sys.exit("restore.py: chunk %s: %s" % (cid.hex(), why))

    def chunk_at(self, entry):
        cid, pack, offset, stored, raw = entry
        if pack != self.pack_name:
            self.pack_name, self.pack_plain = None, None
            self.pack_plain = self.open_age("data/" + pack, 1 << 30)
            self.pack_name = pack
        frame = self.pack_plain[offset:offset + stored]
        data = zstd_decompress(frame, raw) if len(frame) == stored else b""
        if len(data) != raw or blake3.blake3(data, key=self.dedup_key).digest() != cid:
            return None
        return data


def parse_table(b):
    """The chunk table: "HSBKTBL1", u32 P, P 16-byte pack names, u32 N, N 52-byte entries."""
    if len(b) < 16 or b[:8] != b"HSBKTBL1":
        sys.exit("restore.py: damaged chunk table")
    (p,) = struct.unpack_from(">I", b, 8)
    if p > 1 << 16 or len(b) < 16 + 16 * p:
        sys.exit("restore.py: damaged chunk table")
    packs = [b[12 + 16 * i:28 + 16 * i].hex() for i in range(p)]
    at = 12 + 16 * p
    (n,) = struct.unpack_from(">I", b, at)
    if n > 1 << 20 or len(b) != at + 4 + 52 * n:
        sys.exit("restore.py: damaged chunk table")
    out = []
    for i in range(n):
        r = at + 4 + 52 * i
        cid = b[r:r + 32]
        ordinal, offset, stored, raw = struct.unpack_from(">IQII", b, r + 32)
        if ordinal >= p or raw > MAX_CHUNK or stored > MAX_STORED:
            sys.exit("restore.py: damaged chunk table")
        out.append((cid, packs[ordinal], offset, stored, raw))
    return out


def safe_path(p):
    parts = p.split("/")
    bad = ("", ".", "..")
    return (len(p.encode()) <= MAX_PATH and len(parts) <= MAX_DEPTH and
            all(c not in bad and len(c.encode()) <= 255 and not any(x in c for x in "\0\n\r") for c in parts))


def validate(entries):
    seen, files = set(), set()
    for e in entries:
        p = e["path"]
        if not safe_path(p) or p in seen:
            sys.exit("restore.py: unsafe or repeated path %r; nothing restored" % p)
        seen.add(p)
        if e["type"] == "file":
            files.add(p)
        elif e["type"] == "hardlink" and e["target"] not in files:
            sys.exit("restore.py: hard link %r to no earlier file; nothing restored" % p)
        elif e["type"] == "symlink" and (not e["target"] or "\0" in e["target"]):
            sys.exit("restore.py: impossible link target; nothing restored")
        elif e["type"] not in ("dir", "file", "symlink", "hardlink"):
            sys.exit("restore.py: unknown entry type")


def place(target, rel):
    """The path of rel under target; every folder on the way is a real folder (made if missing)."""
    at = target
    parts = rel.split("/")
    for c in parts[:-1]:
        at = os.path.join(at, c)
        if not os.path.lexists(at):
            os.mkdir(at, 0o700)
        elif os.path.islink(at) or not os.path.isdir(at):
            sys.exit("restore.py: %s is not a folder" % at)
    return os.path.join(at, parts[-1])


def put(at, make):
    """Makes the entry under a temporary name, then links it into place (never over a name)."""
    tmp = os.path.join(os.path.dirname(at), ".restore-py-" + os.urandom(8).hex())
    make(tmp)
    try:
        os.link(tmp, at, follow_symlinks=False)
    finally:
        os.unlink(tmp)


def restore(repo, snap, target):
    entries = snap["entries"]
    validate(entries)
    places = repo.index()
    os.makedirs(target, exist_ok=True)
    dirs = []
    for e in entries:
        at = place(target, e["path"])
        kind = e["type"]
        if kind == "dir":
            if not os.path.lexists(at):
                os.mkdir(at, 0o700)
            elif os.path.islink(at) or not os.path.isdir(at):
                sys.exit("restore.py: %s is not a folder" % at)
            dirs.append((at, e["mode"], e["mtime"]))
        elif kind == "file":
            def write(tmp, e=e):
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as f:
                    for c in e["chunks"]:
                        cid = bytes.fromhex(c)
                        f.write(repo.chunk(cid, places.get(cid, [])))
                os.chmod(tmp, e["mode"] & 0o1777)
                os.utime(tmp, (max(e["mtime"], 0), max(e["mtime"], 0)))
            put(at, write)
        elif kind == "symlink":
            put(at, lambda tmp, e=e: os.symlink(e["target"], tmp))
        else:
            source = os.path.join(target, *e["target"].split("/"))
            if os.path.islink(source) or not os.path.isfile(source):
                sys.exit("restore.py: hard link source is not a file")
            put(at, lambda tmp, s=source: os.link(s, tmp, follow_symlinks=False))
    for at, mode, mtime in reversed(dirs):
        os.chmod(at, mode & 0o1777)
        os.utime(at, (max(mtime, 0), max(mtime, 0)))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    root, id_file, want, target = sys.argv[1:]
    repo = Repo(root, load_identities(id_file))
    snaps = repo.snapshots()
    if want == "latest":
        hits = snaps[-1:]
    else:
        hits = [s for s in snaps if s[2].startswith(want)]
    if len(hits) != 1:
        sys.exit("restore.py: no single snapshot %r" % want)
    restore(repo, hits[0][3], target)


if __name__ == "__main__":
    main()
