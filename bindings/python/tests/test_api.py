"""The bytes API beyond the basics: options (format, suite, armor, passphrase, threads),
public_of, pickling of keys, the push-based Sealer/Opener, and the exception classes generated
from the library's error codes. The CLI opens what Python sealed with each option."""

import os
import pickle
import subprocess

import pytest

import hyperseal

from gil import ticks_during


def test_every_library_code_has_its_exception_class():
    assert hyperseal.ERROR_CODES[:6] == (
        "ERR_HYPERSEAL_AUTH", "ERR_HYPERSEAL_NO_IDENTITY", "ERR_HYPERSEAL_FORMAT",
        "ERR_HYPERSEAL_KEY", "ERR_HYPERSEAL_ARGUMENT", "ERR_HYPERSEAL_IO",
    )
    codes = set()
    for code in hyperseal.ERROR_CODES:
        cls = hyperseal._errors.BY_CODE[code]
        assert cls.code == code and issubclass(cls, hyperseal.Error)
        assert getattr(hyperseal, cls.__name__) is cls and cls.__name__ in hyperseal.__all__
        codes.add(cls.code)
    assert len(codes) == len(hyperseal.ERROR_CODES)
    assert issubclass(hyperseal.TokenExpiredError, hyperseal.AuthenticationError)
    assert issubclass(hyperseal.IoError, OSError) and issubclass(hyperseal.InvalidKeyError, ValueError)
    # Exceptions cross process boundaries (Dask, multiprocessing) intact.
    e = pickle.loads(pickle.dumps(hyperseal.AuthenticationError("x")))
    assert type(e) is hyperseal.AuthenticationError and e.code == "ERR_HYPERSEAL_AUTH"


def test_keys_public_of_and_pickling(me):
    assert hyperseal.public_of(me.secret) == me.public == hyperseal.public_of(me)
    x = hyperseal.generate_key("x25519")
    assert x.public.startswith("age1") and hyperseal.public_of(x.secret) == x.public
    back = pickle.loads(pickle.dumps(me))
    assert back == me and back.public == me.public and hash(back) == hash(me)
    assert back != x
    with pytest.raises(hyperseal.InvalidKeyError):
        hyperseal.public_of("AGE-SECRET-KEY-1NOTAKEY")


@pytest.mark.parametrize("fmt,suite", [("hyperseal", None), ("hyperseal", "chacha20-poly1305"),
                                       ("hyperseal", "sm4-gcm"), ("age", None)])
@pytest.mark.parametrize("armor", [False, True])
def test_options_round_trip_and_the_cli_opens_them(tmp_path, cli, fmt, suite, armor):
    me = hyperseal.generate_key("x25519")  # age files take classic and hybrid keys alike
    plain = os.urandom(200_000)
    sealed = hyperseal.encrypt(plain, me.public, format=fmt, suite=suite, armor=armor, threads=1)
    version = b"age-encryption.org/v1" if fmt == "age" else b"hyperseal/v1"
    if armor:
        assert sealed.startswith(b"-----BEGIN ")
    else:
        assert sealed.startswith(version)
    assert hyperseal.decrypt(sealed, me) == plain
    key = tmp_path / "k"
    key.write_text(me.secret + "\n")
    out = subprocess.run([cli, "decrypt", "-i", key], input=sealed, capture_output=True, check=True)
    assert out.stdout == plain


def test_bad_options_are_argument_errors(me):
    for kw in ({"format": "zip"}, {"suite": "rot13"}, {"format": "age", "suite": "aes-256-gcm"}):
        with pytest.raises(hyperseal.ArgumentError):
            hyperseal.encrypt(b"x", me.public, **kw)
    with pytest.raises(hyperseal.ArgumentError):
        hyperseal.encrypt(b"x", me.public, passphrase="pw")  # both
    with pytest.raises(hyperseal.ArgumentError):
        hyperseal.encrypt(b"x")  # neither
    with pytest.raises(hyperseal.ArgumentError):
        hyperseal.decrypt(b"x")
    with pytest.raises(hyperseal.ArgumentError):
        hyperseal.encrypt(b"x", passphrase="")
    # age cannot open ML-KEM-1024 stanzas: refused up front, not written.
    with pytest.raises(hyperseal.InvalidKeyError):
        hyperseal.encrypt(b"x", hyperseal.generate_key("mlkem1024"), format="age")


def test_passphrase_both_profiles_and_the_cli(tmp_path, cli):
    plain = b"passphrase protected " * 1000
    sealed = hyperseal.encrypt(plain, passphrase="correct horse", format="age")
    assert sealed.startswith(b"age-encryption.org/v1\n-> scrypt ")
    assert hyperseal.decrypt(sealed, passphrase=b"correct horse") == plain
    with pytest.raises(hyperseal.AuthenticationError):
        hyperseal.decrypt(sealed, passphrase="wrong horse")
    pw = tmp_path / "pw"
    pw.write_text("correct horse\n")
    made = subprocess.run([cli, "encrypt", "--passphrase-file", pw], input=plain, capture_output=True, check=True)
    assert hyperseal.decrypt(made.stdout, passphrase="correct horse") == plain  # Argon2id


@pytest.mark.parametrize("piece", [1, 1000, 65536, 65537, 300_000])
def test_sealer_and_opener_in_pieces(me, piece):
    plain = os.urandom(3 * 65536 + 123)
    s = hyperseal.Sealer(me.public)
    parts = [s.update(plain[i:i + piece]) for i in range(0, len(plain), piece)]
    sealed = b"".join(parts) + s.finalize()
    assert hyperseal.decrypt(sealed, me) == plain
    o = hyperseal.Opener(me)
    got = [o.update(sealed[i:i + piece]) for i in range(0, len(sealed), piece)]
    assert b"".join(got) + o.finalize() == plain
    with pytest.raises(hyperseal.AlreadyFinalized):
        o.update(b"x")
    with pytest.raises(hyperseal.AlreadyFinalized):
        s.finalize()


def test_opener_releases_nothing_unauthenticated_and_fails_for_good(me):
    plain = os.urandom(5 * 65536)
    sealed = bytearray(hyperseal.encrypt(plain, me))
    sealed[len(sealed) // 2] ^= 1  # inside the third chunk
    o = hyperseal.Opener(me)
    got = b""
    with pytest.raises(hyperseal.AuthenticationError):
        for i in range(0, len(sealed), 10_000):
            got += o.update(sealed[i:i + 10_000])
    assert plain.startswith(got) and len(got) <= 2 * 65536
    with pytest.raises(hyperseal.AlreadyFinalized):
        o.update(b"")
    cut = hyperseal.Opener(me)
    whole = hyperseal.encrypt(plain, me)
    cut.update(whole[:-20])
    with pytest.raises(hyperseal.AuthenticationError):
        cut.finalize()
    with pytest.raises(hyperseal.FormatError):
        hyperseal.Opener(me).update(b"-----BEGIN AGE ENCRYPTED FILE-----\n")


def test_stubs_cover_the_native_module_and_every_exception_class():
    import ast
    from pathlib import Path

    pkg = Path(hyperseal.__file__).parent

    def names(stub):
        tree = ast.parse((pkg / stub).read_text())
        return {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))} | {
            t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}

    native = {n for n in dir(hyperseal._hyperseal) if not n.startswith("_")} | {"__version__"}
    assert native <= names("_hyperseal.pyi")
    generated = {cls.__name__ for cls in hyperseal._errors.BY_CODE.values()}
    assert generated | {"Error", "AlreadyFinalized"} <= names("_errors.pyi")


def test_long_calls_release_the_gil(me, tmp_path):
    import io

    payload = os.urandom(96 << 20)
    sealed = hyperseal.encrypt(payload, me)
    assert ticks_during(lambda: hyperseal.encrypt(payload, me, threads=1)) >= 5
    assert ticks_during(lambda: hyperseal.decrypt(sealed, me, threads=1)) >= 5
    reader = hyperseal.open(io.BytesIO(sealed), "rb", identities=me, buffering=0)
    buf = bytearray(len(payload))
    assert ticks_during(lambda: reader.readinto(buf)) >= 5
    assert buf == payload
