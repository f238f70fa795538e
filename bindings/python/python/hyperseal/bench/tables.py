"""The tables of ``python -m hyperseal.bench``: each returns rows ``(table, size, impl, op,
seconds, cpu)``, hyperseal's and its peer's measured in turn on the same input."""

import os
import statistics
import time

import hyperseal

PEERS = {
    "aead": "pyca AESGCM",
    "c2sp": "pyca Cobblestone256",
    "age": "pyrage",
    "age-file": "pyrage",
    "dask": "one process",
}


def measure(fn, runs, setup=None):
    """Median wall seconds and median CPU seconds per wall second over ``runs`` calls of ``fn``
    (``setup`` runs before each call, untimed)."""
    walls, cpus = [], []
    for _ in range(runs):
        if setup:
            setup()
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        t1, c1 = time.perf_counter(), time.process_time()
        walls.append(t1 - t0)
        cpus.append((c1 - c0) / (t1 - t0))
    return statistics.median(walls), statistics.median(cpus)


def runs_for(size, runs):
    """Small inputs are cheap: more runs for a steadier median."""
    return runs if size >= 1 << 20 else max(runs, 50)


def aead_table(sizes, runs):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = os.urandom(32)
    peer, aad = AESGCM(key), b"bench"
    rows = []
    for size in sizes:
        data, n = os.urandom(size), runs_for(size, runs)
        ours = hyperseal.aead.seal("aes-256-gcm", key, data, aad=aad)
        nonce = os.urandom(12)
        theirs = peer.encrypt(nonce, data, aad)
        # Each opens the other's message (the same format), split or joined outside the timing.
        ours_nonce, ours_ct, theirs = ours[:12], ours[12:], nonce + theirs
        assert peer.decrypt(ours_nonce, ours_ct, aad) == data
        assert hyperseal.aead.open("aes-256-gcm", key, theirs, aad=aad) == data
        cases = [
            ("hyperseal aead", "encrypt", lambda: hyperseal.aead.seal("aes-256-gcm", key, data, aad=aad)),
            # A fresh random nonce per message on both sides (hyperseal draws its own).
            ("pyca AESGCM", "encrypt", lambda: peer.encrypt(os.urandom(12), data, aad)),
            ("hyperseal aead", "decrypt", lambda: hyperseal.aead.open("aes-256-gcm", key, theirs, aad=aad)),
            ("pyca AESGCM", "decrypt", lambda: peer.decrypt(ours_nonce, ours_ct, aad)),
        ]
        for name, op, fn in cases:
            rows.append(("aead", size, name, op, *measure(fn, n)))
        del data, ours, ours_ct, theirs
    return rows


def c2sp_table(sizes, runs):
    from cryptography import cobblestone as pyca

    from .. import c2sp

    key = os.urandom(32)
    impls = {
        "hyperseal c2sp": (c2sp.Cobblestone256Encryptor, c2sp.Cobblestone256Decryptor),
        "pyca Cobblestone256": (pyca.Cobblestone256Encryptor, pyca.Cobblestone256Decryptor),
    }
    rows = []
    for size in sizes:
        data, n = os.urandom(size), runs_for(size, runs)
        made = {}
        for name, (enc_cls, _) in impls.items():
            e = enc_cls(key, b"bench")
            made[name] = e.update(data) + e.finalize()
        for name, (enc_cls, dec_cls) in impls.items():
            other = made[next(o for o in impls if o != name)]  # each opens the other's message

            def enc(enc_cls=enc_cls):
                e = enc_cls(key, b"bench")
                e.update(data)
                e.finalize()

            def dec(dec_cls=dec_cls, ct=other):
                d = dec_cls(key, b"bench")
                assert len(d.update(ct)) + len(d.finalize()) == size

            rows.append(("c2sp", size, name, "encrypt", *measure(enc, n)))
            rows.append(("c2sp", size, name, "decrypt", *measure(dec, n)))
        del made, data
    return rows


def age_table(sizes, runs, workdir):
    """age files to one X25519 recipient, in memory and on files in ``workdir``."""
    import pyrage

    me = hyperseal.generate_key("x25519")
    # The same key for both: pyrage parses the strings hyperseal prints.
    pr = pyrage.x25519.Recipient.from_str(me.public)
    pi = pyrage.x25519.Identity.from_str(me.secret)
    rows = []
    for size in sizes:
        data, n = os.urandom(size), runs_for(size, runs)
        ours = hyperseal.encrypt(data, me.public, format="age")
        theirs = pyrage.encrypt(data, [pr])
        assert pyrage.decrypt(ours, [pi]) == data and hyperseal.decrypt(theirs, me) == data
        mem = [
            ("hyperseal", "encrypt", lambda: hyperseal.encrypt(data, me.public, format="age")),
            ("pyrage", "encrypt", lambda: pyrage.encrypt(data, [pr])),
            ("hyperseal", "decrypt", lambda: hyperseal.decrypt(theirs, me)),
            ("pyrage", "decrypt", lambda: pyrage.decrypt(ours, [pi])),
        ]
        for name, op, fn in mem:
            rows.append(("age", size, name, op, *measure(fn, n)))
        del ours, theirs
        src, sealed, out = (os.path.join(workdir, f"bench-{size}.{x}") for x in ("bin", "age", "out"))
        with open(src, "wb") as f:
            f.write(data)
        del data

        def clear(*paths):
            return lambda: [os.remove(p) for p in paths if os.path.exists(p)]

        files = [
            ("hyperseal", "encrypt", lambda: hyperseal.encrypt_file(src, sealed, me.public, format="age"), clear(sealed)),
            ("pyrage", "encrypt", lambda: pyrage.encrypt_file(src, sealed, [pr]), clear(sealed)),
            ("hyperseal", "decrypt", lambda: hyperseal.decrypt_file(sealed, out, me), clear(out)),
            ("pyrage", "decrypt", lambda: pyrage.decrypt_file(sealed, out, [pi]), clear(out)),
        ]
        for name, op, fn, setup in files:
            if op == "decrypt" and not os.path.exists(sealed):
                pyrage.encrypt_file(src, sealed, [pr])  # decrypt what the peer wrote
            rows.append(("age-file", size, name, op, *measure(fn, n, setup)))
        with open(out, "rb") as a, open(src, "rb") as b:
            assert a.read() == b.read()
        clear(src, sealed, out)()
    return rows


def small_table(runs):
    """1 KB encrypt + decrypt, one round trip per call, in µs (the ``seconds`` column)."""
    import pyrage

    data, n = os.urandom(1000), max(runs, 200)
    hybrid, classic = hyperseal.generate_key("hybrid"), hyperseal.generate_key("x25519")
    pr = pyrage.x25519.Recipient.from_str(classic.public)
    pi = pyrage.x25519.Identity.from_str(classic.secret)

    def rt(fn):
        assert fn() == data
        return measure(fn, n)

    return [
        ("small", 1000, "hyperseal hybrid", "round trip", *rt(lambda: hyperseal.decrypt(hyperseal.encrypt(data, hybrid), hybrid))),
        (
            "small", 1000, "hyperseal hybrid (key strings)", "round trip",
            *rt(lambda: hyperseal.decrypt(hyperseal.encrypt(data, hybrid.public), hybrid.secret)),
        ),
        (
            "small", 1000, "hyperseal age X25519", "round trip",
            *rt(lambda: hyperseal.decrypt(hyperseal.encrypt(data, classic, format="age"), classic)),
        ),
        ("small", 1000, "pyrage X25519", "round trip", *rt(lambda: pyrage.decrypt(pyrage.encrypt(data, [pr]), [pi]))),
    ]
