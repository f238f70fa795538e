"""Signatures and tokens: keys and signatures cross-checked with pyca/cryptography both ways,
Wycheproof verification vectors, tampering rejected with the right exception."""

import base64

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

import hyperseal
from hyperseal import sign, token
from wycheproof import cases, h

MSG = b"release 1.0, sha256 of the tarball: 9f86d081884c7d65"


def pem_private(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def pem_public(key):
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def pyca_verify(public_pem, sig, msg, kind):
    pub = serialization.load_pem_public_key(public_pem.encode())
    if kind == "ecdsa-p256":
        pub.verify(sig, msg, ec.ECDSA(hashes.SHA256()))
    elif kind.startswith("rsa"):
        pub.verify(sig, msg, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
    else:
        pub.verify(sig, msg)  # Ed25519, ML-DSA-65: the message itself


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa-p256", "ml-dsa-65", "rsa2048"])
def test_hyperseal_signatures_verify_with_pyca(kind):
    pair = sign.generate_key_pair(kind)
    assert "PRIVATE" not in repr(pair) and pair.private_key not in repr(pair)
    assert pair.public_key.startswith("-----BEGIN PUBLIC KEY-----")
    assert sign.public_key_of(pair.private_key) == pair.public_key
    sig = sign.sign(pair.private_key, MSG)
    pyca_verify(pair.public_key, sig, MSG, kind)  # raises InvalidSignature otherwise
    assert sign.verify(pair.public_key, MSG, sig)
    # The private key is a PKCS#8 PEM that pyca reads, and its public half is ours.
    theirs = serialization.load_pem_private_key(pair.private_key.encode(), None)
    assert pem_public(theirs.public_key()) == pair.public_key


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa-p256", "ml-dsa-65", "rsa2048"])
def test_pyca_signatures_verify_with_hyperseal(kind):
    if kind == "ed25519":
        key = ed25519.Ed25519PrivateKey.generate()
        sig = key.sign(MSG)
    elif kind == "ecdsa-p256":
        key = ec.generate_private_key(ec.SECP256R1())
        sig = key.sign(MSG, ec.ECDSA(hashes.SHA256()))
    elif kind == "rsa2048":
        key = rsa.generate_private_key(65537, 2048)
        sig = key.sign(MSG, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
        pkcs1 = key.sign(MSG, padding.PKCS1v15(), hashes.SHA256())
        assert sign.verify(pem_public(key.public_key()), MSG, pkcs1, padding="pkcs1")
        assert not sign.verify(pem_public(key.public_key()), MSG, pkcs1)  # PSS is the default
    else:
        from cryptography.hazmat.primitives.asymmetric import mldsa

        key = mldsa.MLDSA65PrivateKey.generate()
        sig = key.sign(MSG)
    public = pem_public(key.public_key())
    assert sign.verify(public, MSG, sig)
    assert sign.public_key_of(pem_private(key)) == public
    # and a key made by pyca signs here, verified there
    pyca_verify(public, sign.sign(pem_private(key), MSG), MSG, kind)


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa-p256", "ml-dsa-65"])
def test_tampering_is_rejected(kind):
    pair = sign.generate_key_pair(kind)
    sig = sign.sign(pair.private_key, MSG)
    assert not sign.verify(pair.public_key, MSG + b".", sig)
    assert not sign.verify(pair.public_key, MSG[:-1], sig)
    for i in (0, len(sig) // 2, len(sig) - 1):
        bad = bytearray(sig)
        bad[i] ^= 1
        assert not sign.verify(pair.public_key, MSG, bytes(bad))
    assert not sign.verify(pair.public_key, MSG, sig[:-1])
    other = sign.generate_key_pair(kind)
    assert not sign.verify(other.public_key, MSG, sig)


def test_signature_key_errors():
    with pytest.raises(hyperseal.InvalidKeyError) as e:
        sign.verify("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", MSG, b"x" * 64)
    assert e.value.code == "ERR_HYPERSEAL_KEY"
    with pytest.raises(hyperseal.InvalidKeyError):
        sign.sign("not a key", MSG)
    with pytest.raises(hyperseal.ArgumentError):
        sign.generate_key_pair("dsa")
    pair = sign.generate_key_pair()
    with pytest.raises(hyperseal.ArgumentError):
        sign.sign(pair.private_key, MSG, padding="oaep")


def spki_pem(der):
    b64 = base64.encodebytes(der).decode().replace("\n", "")
    lines = "\n".join(b64[i : i + 64] for i in range(0, len(b64), 64))
    return f"-----BEGIN PUBLIC KEY-----\n{lines}\n-----END PUBLIC KEY-----\n"


@pytest.mark.parametrize("name", ["ed25519_test", "ecdsa_secp256r1_sha256_test", "mldsa_65_verify_test"])
def test_signature_wycheproof(name):
    n = 0
    for g, t in cases(name):
        if t["result"] == "acceptable" or "publicKeyDer" not in g:
            continue
        pem = spki_pem(h(g["publicKeyDer"]))
        if "ctx" in t and t["ctx"]:
            continue  # a signing context is not part of this API
        try:
            ok = sign.verify(pem, h(t["msg"]), h(t["sig"]))
        except hyperseal.InvalidKeyError:
            ok = False  # a malformed key in an invalid group (a valid test's key must parse)
        assert ok == (t["result"] == "valid"), t["tcId"]
        n += 1
    assert n > 20


# ── tokens ──────────────────────────────────────────────────────────────────────────────


def test_token_round_trip_and_rotation(cli, tmp_path):
    key = token.generate_key()
    assert key.startswith("HYPERSEAL-TOKEN-KEY-1") and "\n" not in key
    t = token.seal(key, b"user=42", aad=b"session 7", ttl_seconds=900)
    assert set(t) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert token.open(key, t, aad="session 7") == b"user=42"
    assert token.open(key, token.seal(key, "grüße")) == "grüße".encode()
    new = token.generate_key()
    assert token.open([new, key], t, aad=b"session 7") == b"user=42"
    with pytest.raises(hyperseal.TokenUnknownKeyError) as e:
        token.open(new, t, aad=b"session 7")
    assert e.value.code == "ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY"
    # The CLI opens what Python sealed (same format).
    (tmp_path / "k").write_text(key + "\n")
    out = __import__("subprocess").run(
        [cli, "token", "open", "--key", tmp_path / "k"], input=token.seal(key, b"from python").encode(),
        capture_output=True, check=True,
    )
    assert out.stdout == b"from python"


def test_tampered_tokens_are_rejected():
    key = token.generate_key()
    t = token.seal(key, b"role=admin", aad=b"ctx")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for i in range(len(t)):
        c = alphabet[(alphabet.index(t[i]) + 1) % 64]
        bad = t[:i] + c + t[i + 1 :]
        with pytest.raises((hyperseal.AuthenticationError, hyperseal.FormatError)):
            token.open(key, bad, aad=b"ctx")
    with pytest.raises(hyperseal.AuthenticationError) as e:
        token.open(key, t, aad=b"other")
    assert type(e.value) is hyperseal.AuthenticationError
    with pytest.raises(hyperseal.FormatError):
        token.open(key, "not a token")
    with pytest.raises(hyperseal.InvalidKeyError):
        token.open("", t)


def test_expired_tokens_raise_their_own_error():
    key = token.generate_key()
    t = token.seal(key, b"x", ttl_seconds=1e-9)
    __import__("time").sleep(0.01)
    with pytest.raises(hyperseal.TokenExpiredError) as e:
        token.open(key, t)
    assert isinstance(e.value, hyperseal.AuthenticationError) and e.value.code == "ERR_HYPERSEAL_TOKEN_EXPIRED"
    with pytest.raises(hyperseal.ArgumentError):
        token.seal(key, b"x", ttl_seconds=-1)
