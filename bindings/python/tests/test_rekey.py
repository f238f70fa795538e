"""Re-keying local files and bytes: the payload is untouched, the new recipients open the file,
a removed one does not, and the real age opens a re-keyed age file."""

import os
import subprocess
from pathlib import Path

import pytest

import hyperseal

AGE = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "age"


def test_rekey_bytes_keeps_every_payload_byte_and_changes_who_opens(me):
    other, gone = hyperseal.generate_key(), hyperseal.generate_key()
    data = os.urandom(3 << 20)
    sealed = hyperseal.encrypt(data, [me.public, gone.public])
    _, old_len, _ = hyperseal.rekey.rekey_head(sealed, me, recipients=[me.public, other.public])
    new = hyperseal.rekey_bytes(sealed, me, recipients=[me.public, other.public])
    new_len = hyperseal.rekey.rekey_head(new, other, add=[], remove=[], recipients=other.public,
                                         remove_own=True)[1]
    assert new[new_len:] == sealed[old_len:]
    assert hyperseal.decrypt(new, other) == data and hyperseal.decrypt(new, me) == data
    with pytest.raises(hyperseal.Error):
        hyperseal.decrypt(new, gone)


def test_rekey_file_in_place_add_then_set(tmp_path, me):
    other = hyperseal.generate_key()
    path = tmp_path / "f.hs"
    data = os.urandom(2 << 20)
    hyperseal.encrypt_file(_write(tmp_path / "f", data), path, me.public)
    before = path.read_bytes()
    _, old_len, _ = hyperseal.rekey.rekey_head(before, me, add=other.public)

    plan = hyperseal.rekey_file(path, me, add=other.public, dry_run=True)
    assert plan.dry_run and not plan.in_place and plan.added == 1 and path.read_bytes() == before

    got = hyperseal.rekey_file(path, me, add=other.public)
    assert got.added == 1 and got.removed == 0 and len(got.after) == 2 and got["before"] == got.before
    after = path.read_bytes()
    new_len = hyperseal.rekey.rekey_head(after, other, recipients=other.public, remove_own=True)[1]
    assert after[new_len:] == before[old_len:]
    assert hyperseal.decrypt(after, other) == data

    got = hyperseal.rekey_file(path, other, recipients=other.public)
    assert got.in_place and got.removed == 2 and got.added == 1
    assert hyperseal.decrypt(path.read_bytes(), other) == data
    with pytest.raises(hyperseal.Error):
        hyperseal.decrypt(path.read_bytes(), me)


def test_removing_every_own_key_is_refused_unless_asked(tmp_path, me):
    other = hyperseal.generate_key()
    path = tmp_path / "f.hs"
    path.write_bytes(hyperseal.encrypt(b"x" * 1000, me.public))
    before = path.read_bytes()
    with pytest.raises(hyperseal.ArgumentError, match="could not open it again"):
        hyperseal.rekey_file(path, me, recipients=other.public)
    assert path.read_bytes() == before
    with pytest.raises(hyperseal.Error):
        hyperseal.rekey_file(path, other, add=me.public)  # not a key of this file
    assert path.read_bytes() == before


def test_output_and_force(tmp_path, me):
    other = hyperseal.generate_key()
    path, out = tmp_path / "f.hs", tmp_path / "g.hs"
    path.write_bytes(hyperseal.encrypt(b"hello" * 999, me.public))
    out.write_bytes(b"taken")
    with pytest.raises(hyperseal.IoError, match="force"):
        hyperseal.rekey_file(path, me, recipients=other.public, remove_own=True, output=out)
    got = hyperseal.rekey_file(path, me, recipients=other.public, remove_own=True, output=out, force=True)
    assert got.written == "rewritten" and got.bytes == out.stat().st_size
    assert hyperseal.decrypt(out.read_bytes(), other) == b"hello" * 999
    assert hyperseal.decrypt(path.read_bytes(), me) == b"hello" * 999  # the input untouched


@pytest.mark.skipif(not AGE.exists(), reason="needs the real age (make tools)")
def test_the_real_age_opens_a_rekeyed_age_file(tmp_path):
    first, second = hyperseal.generate_key("x25519"), hyperseal.generate_key("x25519")
    data = os.urandom(1 << 20)
    path = tmp_path / "f.age"
    path.write_bytes(hyperseal.encrypt(data, first.public, format="age"))
    hyperseal.rekey_file(path, first, recipients=second.public, remove_own=True)
    key = tmp_path / "key"
    key.write_text(second.secret + "\n")
    out = subprocess.run([AGE, "-d", "-i", key, path], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == data
    key.write_text(first.secret + "\n")
    assert subprocess.run([AGE, "-d", "-i", key, path], capture_output=True, timeout=60).returncode != 0


def test_armored_bytes_are_refused(me):
    sealed = hyperseal.encrypt(b"x", me.public, armor=True)
    with pytest.raises(hyperseal.ArgumentError, match="armored"):
        hyperseal.rekey_bytes(sealed, me, add=hyperseal.generate_key().public)


def test_an_fsspec_url_that_is_not_s3(me):
    fsspec = pytest.importorskip("fsspec")
    other = hyperseal.generate_key()
    fs = fsspec.filesystem("memory")
    data = os.urandom(300_000)
    fs.pipe_file("/rk/f.hs", hyperseal.encrypt(data, me.public))
    got = hyperseal.rekey_file("memory://rk/f.hs", me, recipients=other.public, remove_own=True)
    assert got.written == "rewritten" and got.removed == 1
    assert hyperseal.decrypt(fs.cat_file("/rk/f.hs"), other) == data
    assert fs.ls("/rk", detail=False) == ["/rk/f.hs"]


def test_a_header_longer_than_the_first_read_is_read_whole(me):
    """Past the 64 KiB first read of an fsspec file: the rest of the header is read, then
    parsed once more."""
    fsspec = pytest.importorskip("fsspec")
    many = [hyperseal.generate_key().public for _ in range(60)]
    data = os.urandom(100_000)
    sealed = hyperseal.encrypt(data, [me.public, *many])
    fs = fsspec.filesystem("memory")
    fs.pipe_file("/rk/big-header.hs", sealed)
    other = hyperseal.generate_key()
    got = hyperseal.rekey_file("memory://rk/big-header.hs", me, recipients=[me.public, other.public])
    assert got.removed == 61 and got.added == 2
    after = fs.cat_file("/rk/big-header.hs")
    assert hyperseal.decrypt(after, other) == data
    assert len(sealed) - len(data) > 64 << 10  # the case this test is for


def _write(path, data):
    path.write_bytes(data)
    return path


def test_rekey_tree_rekeys_what_it_can_open_and_resumes(tmp_path, me):
    new, other = hyperseal.generate_key(), hyperseal.generate_key()
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    data = os.urandom(5000)
    for name in ("a.hs", "sub/b.hs"):
        (tree / name).write_bytes(hyperseal.encrypt(data, me.public))
    (tree / "theirs.hs").write_bytes(hyperseal.encrypt(data, other.public))
    (tree / "notes.txt").write_text("plain")
    seen = []
    files, summary = hyperseal.rekey_tree(tree, me, add=new.public, progress=lambda d, t: seen.append((d, t)))
    outcome = {os.path.relpath(f["path"], tree): f for f in files}
    assert summary == {"in_place": 0, "rewritten": 2, "already_done": 0, "skipped": 2, "failed": 0}
    assert outcome["theirs.hs"]["reason"] == "none of the identities opens it"
    assert outcome["notes.txt"]["outcome"] == "skipped" and (tree / "notes.txt").read_text() == "plain"
    assert hyperseal.decrypt((tree / "sub" / "b.hs").read_bytes(), new) == data
    assert seen[-1] == (4, 4)
    # The same call again: every file verified as done, nothing added twice.
    _, again = hyperseal.rekey_tree(tree, me, add=new.public)
    assert again["already_done"] == 2 and again["rewritten"] == 0
    assert len(hyperseal.rekey_file(tree / "a.hs", me, add=other.public, dry_run=True).before) == 2
