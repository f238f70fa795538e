"""Key strings that name an age plugin run a program (``age-plugin-NAME`` on PATH), so every
call that takes keys refuses them unless it is given ``allow_plugins=True``; with it, a plugin
that is not installed gives the library's usual "not found" error, which proves the flag went
through. A key parsed for a call that allowed plugins is never reused for one that did not."""

import io

import pytest

import hyperseal
from hyperseal.parts import PartKey

# A plugin named so that no such program exists anywhere.
RECIPIENT = "age1hsnotinstalled1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0sfphyrn"
IDENTITY = "AGE-PLUGIN-HSNOTINSTALLED-1QQQSYQCYQ5RQWZQFPG9SCRGWPUGPZYSNZS23V9CCRYDPK8QARC0SVDU8G6"

DISABLED = "plugins are disabled, so age-plugin-hsnotinstalled was not started; pass allowPlugins: true"
NOT_FOUND = "age-plugin-hsnotinstalled not found on PATH"


@pytest.fixture(scope="module")
def sealed():
    key = hyperseal.generate_key("x25519")
    return key, hyperseal.encrypt(b"hello", key.public)


def calls(tmp_path, sealed_file, **kw):
    """Every entry point that takes a key, as (name, call)."""
    plain = tmp_path / "plain"
    plain.write_bytes(b"hello")
    enc = tmp_path / "sealed"
    enc.write_bytes(sealed_file)
    out = tmp_path / "out"
    return [
        ("encrypt", lambda: hyperseal.encrypt(b"x", RECIPIENT, **kw)),
        ("encrypt list", lambda: hyperseal.encrypt(b"x", [RECIPIENT, RECIPIENT], **kw)),
        ("decrypt", lambda: hyperseal.decrypt(sealed_file, IDENTITY, **kw)),
        ("decrypt file text", lambda: hyperseal.decrypt(sealed_file, f"# id\n{IDENTITY}\n", **kw)),
        ("decrypt list", lambda: hyperseal.decrypt(sealed_file, [IDENTITY, IDENTITY], **kw)),
        ("encrypt_file", lambda: hyperseal.encrypt_file(plain, out, RECIPIENT, **kw)),
        ("decrypt_file", lambda: hyperseal.decrypt_file(enc, out, IDENTITY, **kw)),
        ("Sealer", lambda: hyperseal.Sealer(RECIPIENT, **kw).update(b"x")),
        ("Opener", lambda: hyperseal.Opener(IDENTITY, **kw).update(sealed_file)),
        ("open rb", lambda: hyperseal.open(io.BytesIO(sealed_file), "rb", identities=IDENTITY, **kw).read()),
        ("open wb", lambda: hyperseal.open(io.BytesIO(), "wb", recipients=RECIPIENT, **kw).close()),
        ("PartKey.seal_new", lambda: PartKey.seal_new(5, RECIPIENT, **kw)),
        ("PartKey.open_file", lambda: PartKey.open_file(io.BytesIO(sealed_file), len(sealed_file), IDENTITY, **kw)),
    ]


@pytest.mark.parametrize("kw", [{}, {"allow_plugins": False}])
def test_plugin_keys_are_refused_unless_allowed(tmp_path, sealed, kw):
    for name, call in calls(tmp_path, sealed[1], **kw):
        with pytest.raises(hyperseal.InvalidKeyError, match=DISABLED) as e:
            call()
        assert e.value.code == "ERR_HYPERSEAL_KEY", name
    assert not (tmp_path / "out").exists()


def test_allow_plugins_passes_through(tmp_path, sealed):
    for name, call in calls(tmp_path, sealed[1], allow_plugins=True):
        with pytest.raises(hyperseal.InvalidKeyError, match=NOT_FOUND):
            call()
    assert not (tmp_path / "out").exists()


def test_a_key_parsed_with_plugins_allowed_is_not_reused_without(sealed):
    key, sealed_file = sealed
    with pytest.raises(hyperseal.InvalidKeyError, match=NOT_FOUND):
        hyperseal.encrypt(b"x", RECIPIENT, allow_plugins=True)
    with pytest.raises(hyperseal.InvalidKeyError, match=DISABLED):
        hyperseal.encrypt(b"x", RECIPIENT)
    with pytest.raises(hyperseal.InvalidKeyError, match=NOT_FOUND):
        hyperseal.decrypt(sealed_file, IDENTITY, allow_plugins=True)
    with pytest.raises(hyperseal.InvalidKeyError, match=DISABLED):
        hyperseal.decrypt(sealed_file, IDENTITY)
    # Ordinary keys do not care about the flag.
    assert hyperseal.decrypt(sealed_file, key, allow_plugins=True) == b"hello"
    assert hyperseal.decrypt(sealed_file, key.secret) == b"hello"
