"""hyperseal.c2sp against the real pyca/cryptography (``cryptography.cobblestone``, >= 50) in
the same process: each side opens the other's messages at every size around the 16 KiB chunk
boundary and for every way of cutting the input into pieces; damage of every kind is refused;
the pyca method contract (update_into sizes, overlapping buffers, AlreadyFinalized) holds."""

import os

import pytest
from cryptography import cobblestone as pyca

import hyperseal
from hyperseal import c2sp

from gil import ticks_during

CHUNK = 16 * 1024
WIRE = CHUNK + 16
HEADER = 56
SIZES = [0, 1, 57, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 500, 3 * CHUNK, 300_000]
PIECES = [None, 1000, CHUNK, WIRE, 70_000]

# (name, encryptor class, decryptor class, key bytes) for each implementation and key size.
HS = {16: (c2sp.Cobblestone128Encryptor, c2sp.Cobblestone128Decryptor),
      32: (c2sp.Cobblestone256Encryptor, c2sp.Cobblestone256Decryptor)}
PYCA = {16: (pyca.Cobblestone128Encryptor, pyca.Cobblestone128Decryptor),
        32: (pyca.Cobblestone256Encryptor, pyca.Cobblestone256Decryptor)}
DIRECTIONS = [("hs->pyca", HS, PYCA), ("pyca->hs", PYCA, HS), ("hs->hs", HS, HS)]


def data(n):
    return bytes((i * 31 + i // 4099) % 256 for i in range(n)) if n < 100_000 else os.urandom(n)


def run(ctx, payload, piece):
    """Feeds ``payload`` to ``ctx.update`` in pieces (all at once for None), then finalizes."""
    piece = piece or max(len(payload), 1)
    out = [ctx.update(payload[i:i + piece]) for i in range(0, len(payload), piece)]
    return b"".join(out) + ctx.finalize()


@pytest.mark.parametrize("key_len", [16, 32])
@pytest.mark.parametrize("direction", DIRECTIONS, ids=lambda d: d[0])
@pytest.mark.parametrize("n", SIZES)
def test_each_side_opens_the_other(key_len, direction, n):
    _, maker, opener = direction
    key = os.urandom(key_len)
    plain = data(n)
    for piece in PIECES:
        for ctx in (b"", b"context \x00 bytes"):
            sealed = run(maker[key_len][0](key, ctx), plain, piece)
            assert len(sealed) == HEADER + n + (n // CHUNK + 1) * 16
            assert run(opener[key_len][1](key, ctx), sealed, piece) == plain


@pytest.mark.parametrize("key_len", [16, 32])
def test_one_shots_and_generic_classes_interoperate(key_len):
    key = c2sp.generate_key(key_len * 8)
    assert len(key) == key_len
    plain = os.urandom(5 * CHUNK + 123)
    sealed = c2sp.encrypt(key, plain, b"ctx")
    dec = PYCA[key_len][1](key, b"ctx")
    assert dec.update(sealed) + dec.finalize() == plain
    enc = PYCA[key_len][0](key, b"ctx")
    assert c2sp.decrypt(key, enc.update(plain) + enc.finalize(), b"ctx") == plain
    # Encryptor/Decryptor take either key size, a default empty context, and a thread count.
    for threads in (1, 4, None):
        sealed = run(c2sp.Encryptor(key, threads=threads), plain, 100_000)
        assert run(c2sp.Decryptor(key, b"", threads=threads), sealed, 50_000) == plain
    assert c2sp.decrypt(key, c2sp.encrypt(key, memoryview(bytearray(plain)))) == plain


def damaged(ct, other):
    at = lambda i: HEADER + i * WIRE  # noqa: E731
    out = []
    for pos in (0, 30, at(0) + 9, at(1) - 1, at(1) + 5, at(2) - 1, at(2) + 2, len(ct) - 1):
        c = bytearray(ct)
        c[pos] ^= 1
        out.append((f"flip {pos}", bytes(c)))
    for n in (0, HEADER - 1, HEADER, at(1) - 1, at(1), at(2) - 1, at(2), at(2) + 15, len(ct) - 1):
        out.append((f"cut to {n}", ct[:n]))
    c0, c1, fin, head = ct[at(0):at(1)], ct[at(1):at(2)], ct[at(2):], ct[:HEADER]
    out += [
        ("drop 0", head + c1 + fin), ("drop 1", head + c0 + fin), ("swap 0 1", head + c1 + c0 + fin),
        ("swap 1 final", head + c0 + fin + c1), ("append chunk", ct + c0), ("append final", ct + fin),
        ("append bytes", ct + b"\0" * 20), ("append message", ct + other),
        ("foreign chunk", head + c0 + other[at(1):at(2)] + fin), ("foreign header", other[:HEADER] + ct[HEADER:]),
    ]
    return out


@pytest.mark.parametrize("key_len", [16, 32])
def test_every_kind_of_damage_is_refused(key_len):
    key = os.urandom(key_len)
    plain = os.urandom(2 * CHUNK + 500)
    seal = lambda: run(PYCA[key_len][0](key, b"ctx"), plain, None)  # noqa: E731
    ct, other = seal(), seal()
    cases = damaged(ct, other)
    cases += [("wrong key", ct, os.urandom(key_len), b"ctx"), ("wrong context", ct, key, b"ctX")]
    for case in cases:
        what, c = case[0], case[1]
        k, ctx = (case[2], case[3]) if len(case) == 4 else (key, b"ctx")
        # A message cut inside its salt and commitment is malformed; anything else fails to
        # authenticate.
        expected = hyperseal.FormatError if len(c) < HEADER else hyperseal.AuthenticationError
        with pytest.raises(expected) as e:
            c2sp.decrypt(k, c, ctx)
        assert e.value.code == expected.code
        for step in (max(len(c), 1), 1000):
            dec = HS[key_len][1](k, ctx)
            got = []
            with pytest.raises(expected):
                for i in range(0, len(c), step):
                    got.append(dec.update(c[i:i + step]))
                dec.finalize()
            assert plain.startswith(b"".join(got)), f"{what}: released unauthenticated bytes"
        # pyca refuses it too: the damage is real.
        with pytest.raises(Exception):
            run(PYCA[key_len][1](k, ctx), c, None)


def test_update_into_follows_pycas_contract():
    key = c2sp.generate_key()
    plain = os.urandom(CHUNK + 100)
    enc = c2sp.Cobblestone256Encryptor(key, b"")
    buf = bytearray(HEADER + 2 * WIRE)
    n = enc.update_into(plain, buf)
    assert n == HEADER + WIRE
    sealed = bytes(buf[:n]) + enc.finalize()
    dec = c2sp.Cobblestone256Decryptor(key, b"")
    out = bytearray(2 * CHUNK)
    n = dec.update_into(sealed, out)
    assert n == CHUNK and bytes(out[:n]) + dec.finalize() == plain
    # Too small: ValueError, nothing consumed, the object stays usable.
    enc = c2sp.Cobblestone256Encryptor(key, b"")
    with pytest.raises(ValueError, match="buffer must be at least"):
        enc.update_into(b"abc", bytearray(HEADER - 1))
    sealed = enc.update(b"abc") + enc.finalize()
    dec = c2sp.Cobblestone256Decryptor(key, b"")
    with pytest.raises(hyperseal.ArgumentError):
        dec.update_into(sealed + bytes(WIRE), bytearray(CHUNK - 1))
    assert dec.update(sealed) == b"" and dec.finalize() == b"abc"
    with pytest.raises(TypeError):
        c2sp.Encryptor(key).update_into(b"x", b"immutable bytes")


@pytest.mark.parametrize("offset", [0, 10])
def test_update_into_with_the_input_inside_the_output(offset):
    key = c2sp.generate_key(128)
    plain = os.urandom(2 * CHUNK + 100)
    enc = c2sp.Encryptor(key)
    buf = bytearray(offset + HEADER + 3 * WIRE)
    sealed = b""
    for a, b in ((0, 100), (100, CHUNK + 50), (CHUNK + 50, len(plain))):
        piece = plain[a:b]
        buf[offset:offset + len(piece)] = piece
        n = enc.update_into(memoryview(buf)[offset:offset + len(piece)], buf)
        sealed += bytes(buf[:n])
    sealed += enc.finalize()
    dec = pyca.Cobblestone128Decryptor(key, b"")
    assert dec.update(sealed) + dec.finalize() == plain


def test_finalized_and_failed_objects_refuse_more_work():
    key = c2sp.generate_key()
    enc = c2sp.Encryptor(key)
    sealed = enc.update(b"data") + enc.finalize()
    for call in (lambda: enc.update(b"x"), enc.finalize, lambda: enc.update_into(b"", bytearray(WIRE))):
        with pytest.raises(hyperseal.AlreadyFinalized):
            call()
    bad = bytearray(sealed)
    bad[-1] ^= 1
    dec = c2sp.Decryptor(key)
    assert dec.update(bytes(bad)) == b""
    with pytest.raises(hyperseal.AuthenticationError):
        dec.finalize()
    with pytest.raises(hyperseal.AlreadyFinalized):
        dec.update(b"")
    dec = c2sp.Decryptor(key)
    with pytest.raises(hyperseal.FormatError):
        dec.finalize()  # not even a salt and commitment


def test_keys_types_and_error_classes():
    for n in (0, 15, 17, 31, 33, 64):
        with pytest.raises(ValueError):
            c2sp.Encryptor(b"\0" * n)
        with pytest.raises(hyperseal.InvalidKeyError):
            c2sp.Decryptor(b"\0" * n)
    with pytest.raises(ValueError):
        c2sp.Cobblestone256Encryptor(os.urandom(16), b"")
    with pytest.raises(ValueError):
        c2sp.Cobblestone128Decryptor(os.urandom(32), b"")
    with pytest.raises(TypeError):
        c2sp.Encryptor("not bytes")
    with pytest.raises(TypeError):
        c2sp.Encryptor(os.urandom(32)).update("not bytes")
    assert issubclass(hyperseal.InvalidKeyError, ValueError)
    assert hyperseal.AuthenticationError.code == "ERR_HYPERSEAL_AUTH"
    assert c2sp.Cobblestone256Encryptor.generate_key() != c2sp.Cobblestone256Encryptor.generate_key()
    assert len(c2sp.Cobblestone128Encryptor.generate_key()) == 16


def test_long_calls_release_the_gil():
    """A Python thread keeps running while a large message is sealed: with a 1 s switch
    interval it could not, were the GIL held (it never asks for it within the call)."""
    payload = os.urandom(128 << 20)
    key = c2sp.generate_key()
    sealed = []
    during = ticks_during(lambda: sealed.append(c2sp.encrypt(key, payload)))
    sealed = sealed[0]
    assert len(sealed) > len(payload)
    assert during >= 5, f"the other thread ran {during} times during the call"
