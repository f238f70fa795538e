"""Detached headers (hyperseal.header): a header opened alone gives the file key that age's
DecryptHeader gives, every decrypt function takes that key as an identity (the header MAC is
still checked), the key never shows in a repr, and the CLI's `header` command agrees."""

import os
import subprocess

import pytest

import hyperseal
from hyperseal import header


def test_a_detached_header_opens_its_file_everywhere(tmp_path, me):
    plain = os.urandom(300_000)
    sealed = hyperseal.encrypt(plain, me.public)
    head = header.extract(sealed)
    assert sealed.startswith(head) and head.endswith(b"\n")
    src = tmp_path / "f.hs"
    src.write_bytes(sealed)
    assert header.extract(src) == head  # a path: only the header is read
    key = header.decrypt(head, me)
    assert len(key) == 32 and repr(key) == "FileKey(256 bits, redacted)"
    assert key.expose() not in repr(key).encode()
    assert header.decrypt_with_file_key(sealed, key) == plain
    # Carried as bytes to another machine, the key opens the file there through every door.
    there = header.FileKey(key.expose())
    assert hyperseal.decrypt(sealed, there) == plain
    assert hyperseal.decrypt_file(src, tmp_path / "out", there) == len(plain)
    assert (tmp_path / "out").read_bytes() == plain
    with hyperseal.open(src, "rb", identities=there) as f:
        f.seek(-10, 2)
        assert f.read() == plain[-10:]


def test_age_files_and_passphrases_give_age_sized_keys(me):
    x = hyperseal.generate_key("x25519")
    sealed = hyperseal.encrypt(b"age", x.public, format="age")
    assert len(header.decrypt(header.extract(sealed), x)) == 16
    sealed = hyperseal.encrypt(b"pass", passphrase="correct horse", format="age")
    key = header.decrypt(header.extract(sealed), passphrase="correct horse")
    assert hyperseal.decrypt(sealed, key) == b"pass"


def test_refusals(me):
    other = hyperseal.generate_key()
    sealed = hyperseal.encrypt(b"x", me.public)
    wrong = header.decrypt(header.extract(hyperseal.encrypt(b"y", me.public)), me)
    with pytest.raises(hyperseal.Error):
        hyperseal.decrypt(sealed, wrong)  # a key of another file fails the header MAC
    with pytest.raises(hyperseal.NoIdentityError):
        header.decrypt(header.extract(sealed), other)
    with pytest.raises(hyperseal.FormatError, match="ExtractHeader"):
        header.extract(hyperseal.encrypt(b"x", me.public, armor=True))
    with pytest.raises(hyperseal.ArgumentError):
        header.FileKey(b"short")


def test_the_cli_takes_the_key_python_gave(tmp_path, me, cli):
    src = tmp_path / "f.hs"
    src.write_bytes(hyperseal.encrypt(b"from python", me.public))
    out = subprocess.run([cli, "header", "extract", src], capture_output=True, check=True)
    assert out.stdout == header.extract(src)
    keyfile = tmp_path / "key.bin"
    keyfile.write_bytes(header.decrypt(out.stdout, me).expose())
    with open(keyfile, "rb") as k:
        got = subprocess.run(
            [cli, "decrypt", "--file-key-fd", str(k.fileno()), src],
            capture_output=True, check=True, pass_fds=(k.fileno(),),
        )
    assert got.stdout == b"from python"
