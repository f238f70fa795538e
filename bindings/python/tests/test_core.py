"""hyperseal.encrypt/decrypt and keys: objects and CLI strings are interchangeable, every
failure is the right exception with the Node package's code, and secrets stay out of repr()."""

import os
import subprocess
from pathlib import Path

import pytest

import hyperseal

CLI = Path(__file__).resolve().parents[3] / "target" / "release" / "hyperseal"


@pytest.mark.parametrize("kind", ["hybrid", "x25519", "mlkem1024"])
def test_round_trip_with_objects_and_strings(kind):
    me = hyperseal.generate_key(kind)
    for n in (0, 1, 65535, 65536, 65537, 1 << 20):
        plain = os.urandom(n)
        for to in (me, me.public, [me.public], (me,)):
            sealed = hyperseal.encrypt(plain, to)
            for ident in (me, me.secret, [me], "# a comment\n" + me.secret + "\n"):
                assert hyperseal.decrypt(sealed, ident) == plain
    assert hyperseal.decrypt(memoryview(hyperseal.encrypt(bytearray(b"abc"), me)), me) == b"abc"


def test_default_key_is_post_quantum_and_repr_hides_the_secret():
    me = hyperseal.generate_key()
    assert me.public.startswith("age1pq1")
    assert me.secret.startswith("AGE-SECRET-KEY-PQ-")
    shown = repr(me)
    assert me.public in shown and me.secret not in shown and "redacted" in shown
    assert hyperseal.Identity(me.secret).public == me.public


def test_several_recipients_each_open_the_file():
    a, b = hyperseal.generate_key(), hyperseal.generate_key()
    sealed = hyperseal.encrypt(b"shared", f"{a.public}\n# comment\n{b.public}\n")
    assert hyperseal.decrypt(sealed, a) == b"shared"
    assert hyperseal.decrypt(sealed, [b.secret]) == b"shared"


def test_failures_raise_the_coded_exception():
    me, other = hyperseal.generate_key(), hyperseal.generate_key()
    sealed = hyperseal.encrypt(os.urandom(200_000), me)
    cases = [
        (lambda: hyperseal.decrypt(sealed, other), hyperseal.NoIdentityError, "ERR_HYPERSEAL_NO_IDENTITY"),
        (lambda: hyperseal.decrypt(b"not an encrypted file at all", me), hyperseal.FormatError, "ERR_HYPERSEAL_FORMAT"),
        (lambda: hyperseal.encrypt(b"x", "age1notarecipient"), hyperseal.InvalidKeyError, "ERR_HYPERSEAL_KEY"),
        (lambda: hyperseal.decrypt(sealed, "AGE-SECRET-KEY-1BOGUS"), hyperseal.InvalidKeyError, "ERR_HYPERSEAL_KEY"),
        (lambda: hyperseal.generate_key("dsa"), hyperseal.ArgumentError, "ERR_HYPERSEAL_ARGUMENT"),
        (lambda: hyperseal.encrypt(b"x", []), hyperseal.ArgumentError, "ERR_HYPERSEAL_ARGUMENT"),
    ]
    damaged = bytearray(sealed)
    damaged[-100] ^= 1
    cases.append((lambda: hyperseal.decrypt(bytes(damaged), me), hyperseal.AuthenticationError, "ERR_HYPERSEAL_AUTH"))
    cases.append((lambda: hyperseal.decrypt(sealed[:-1], me), hyperseal.AuthenticationError, "ERR_HYPERSEAL_AUTH"))
    for call, cls, code in cases:
        with pytest.raises(cls) as e:
            call()
        assert isinstance(e.value, hyperseal.Error) and e.value.code == code
    with pytest.raises(TypeError):
        hyperseal.encrypt("text is not bytes", me)
    with pytest.raises(TypeError):
        hyperseal.encrypt(b"x", 42)


@pytest.mark.skipif(not CLI.exists(), reason="needs target/release/hyperseal (cargo build --release)")
def test_cli_opens_what_python_sealed(tmp_path):
    me = hyperseal.generate_key()
    key = tmp_path / "me.key"
    key.write_text(me.secret + "\n")
    plain = os.urandom(300_000)
    (tmp_path / "f.hs").write_bytes(hyperseal.encrypt(plain, me.public))
    out = subprocess.run([CLI, "decrypt", "-i", key, tmp_path / "f.hs"], capture_output=True, check=True)
    assert out.stdout == plain
    sealed = subprocess.run([CLI, "encrypt", "-r", me.public], input=plain, capture_output=True, check=True)
    assert hyperseal.decrypt(sealed.stdout, me) == plain


def test_decrypt_sizes_from_the_header_in_both_formats():
    """decrypt() sizes its result from the header and the file length: exact for every
    format, armored or not, and a cut or grown file still fails."""
    me = hyperseal.generate_key("x25519")
    for n in (0, 1, 65535, 65536, 65537, 3 * 65536 + 5):
        plain = os.urandom(n)
        for fmt in ("hyperseal", "age"):
            for armor in (False, True):
                sealed = hyperseal.encrypt(plain, me, format=fmt, armor=armor)
                assert hyperseal.decrypt(sealed, me) == plain
            sealed = hyperseal.encrypt(plain, me, format=fmt)
            for bad in (sealed + b"\0", sealed[:-1], sealed + bytes(17)):
                with pytest.raises((hyperseal.AuthenticationError, hyperseal.FormatError)):
                    hyperseal.decrypt(bad, me)
