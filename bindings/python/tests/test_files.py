"""encrypt_file/decrypt_file keep the CLI's nothing-lost rules (the library's AtomicOutput): a
failed or interrupted run leaves nothing at the destination and never touches the input; an
existing file is replaced only with force=True; progress reports reach 100%."""

import os
import subprocess

import pytest

import hyperseal


def test_round_trip_with_progress_and_the_cli(tmp_path, me, cli):
    src, enc, dec = tmp_path / "plain", tmp_path / "plain.hs", tmp_path / "back"
    plain = os.urandom(3_000_000)
    src.write_bytes(plain)
    seen = []
    assert hyperseal.encrypt_file(src, enc, me.public, progress=lambda d, t: seen.append((d, t))) == len(plain)
    assert seen and seen[-1] == (len(plain), len(plain)) and all(t == len(plain) for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert os.stat(enc).st_mode & 0o777 == 0o600
    key = tmp_path / "k"
    key.write_text(me.secret)
    out = subprocess.run([cli, "decrypt", "-i", key, enc], capture_output=True, check=True)
    assert out.stdout == plain
    assert hyperseal.decrypt_file(str(enc), str(dec), me.secret) == len(plain)
    assert dec.read_bytes() == plain


def test_armored_age_file_from_python_opens_in_the_cli(tmp_path, cli):
    me = hyperseal.generate_key("x25519")
    src, enc = tmp_path / "p", tmp_path / "p.age"
    src.write_bytes(b"a" * 100_000)
    hyperseal.encrypt_file(src, enc, me, format="age", armor=True)
    assert enc.read_bytes().startswith(b"-----BEGIN AGE ENCRYPTED FILE-----")
    key = tmp_path / "k"
    key.write_text(me.secret)
    out = subprocess.run([cli, "decrypt", "-i", key, enc], capture_output=True, check=True)
    assert out.stdout == b"a" * 100_000
    assert hyperseal.decrypt_file(enc, tmp_path / "back", me) == 100_000


def test_a_failed_decrypt_leaves_nothing(tmp_path, me):
    src, enc = tmp_path / "p", tmp_path / "p.hs"
    src.write_bytes(os.urandom(1_000_000))
    hyperseal.encrypt_file(src, enc, me)
    sealed = bytearray(enc.read_bytes())
    sealed[-1000] ^= 1  # the final chunk: everything before it authenticates
    enc.write_bytes(sealed)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(hyperseal.AuthenticationError):
        hyperseal.decrypt_file(enc, tmp_path / "out", me)
    with pytest.raises(hyperseal.NoIdentityError):
        hyperseal.decrypt_file(enc, tmp_path / "out", hyperseal.generate_key())
    assert sorted(os.listdir(tmp_path)) == before and enc.read_bytes() == sealed


def test_existing_destination_needs_force_and_is_replaced_whole(tmp_path, me):
    src, dst = tmp_path / "p", tmp_path / "dst"
    src.write_bytes(b"new contents")
    dst.write_bytes(b"old contents")
    with pytest.raises(hyperseal.IoError, match="force=True"):
        hyperseal.encrypt_file(src, dst, me)
    assert dst.read_bytes() == b"old contents"
    hyperseal.encrypt_file(src, dst, me, force=True)
    assert hyperseal.decrypt(dst.read_bytes(), me) == b"new contents"
    with pytest.raises(hyperseal.ArgumentError):
        hyperseal.encrypt_file(src, src, me, force=True)  # the input itself
    assert src.read_bytes() == b"new contents"
    with pytest.raises(hyperseal.IoError):
        hyperseal.encrypt_file(tmp_path / "missing", tmp_path / "x", me)
    assert not (tmp_path / "x").exists()


def test_an_exception_from_progress_stops_the_run_and_leaves_nothing(tmp_path, me):
    src, dst = tmp_path / "p", tmp_path / "p.hs"
    src.write_bytes(os.urandom(4_000_000))

    def stop(done, total):
        raise KeyboardInterrupt  # what Ctrl-C inside the callback looks like

    with pytest.raises(KeyboardInterrupt):
        hyperseal.encrypt_file(src, dst, me, progress=stop)
    assert not dst.exists() and os.listdir(tmp_path) == ["p"]


def test_devices_are_written_through(tmp_path, me):
    src = tmp_path / "p"
    src.write_bytes(b"x" * 1000)
    assert hyperseal.encrypt_file(src, "/dev/null", me) == 1000
