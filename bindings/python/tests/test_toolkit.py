"""The toolkit's hashes, HMAC, KDFs and AEADs against the standard library, pyca/cryptography
(in this process), published vectors and Wycheproof."""

import hashlib
import hmac as std_hmac
import os
import subprocess
import threading
import time

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESGCMSIV, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

import hyperseal
from hyperseal import aead, kdf
from wycheproof import cases, h

SIZES = [0, 1, 63, 64, 65, 1000, 16 << 10, (1 << 20) + 3]

# ── hashes ──────────────────────────────────────────────────────────────────────────────

HASHLIB = {
    "sha256": "sha256",
    "sha384": "sha384",
    "sha512": "sha512",
    "sha3-256": "sha3_256",
    "sha3-512": "sha3_512",
    "blake2b512": "blake2b",
    "legacy-md5": "md5",
    "legacy-sha1": "sha1",
}


@pytest.mark.parametrize("algo", sorted(HASHLIB))
@pytest.mark.parametrize("size", SIZES)
def test_hash_equals_hashlib(algo, size):
    data = os.urandom(size)
    assert hyperseal.hash(algo, data) == hashlib.new(HASHLIB[algo], data).digest()


def test_hash_takes_str_bytearray_memoryview():
    want = hashlib.sha256("grüße".encode()).digest()
    assert hyperseal.hash("sha256", "grüße") == want
    assert hyperseal.hash("SHA256", bytearray("grüße".encode())) == want
    assert hyperseal.hash("sha256", memoryview(b"xx" + "grüße".encode())[2:]) == want


def test_blake3_and_sm3_published_vectors():
    # BLAKE3's reference test vectors: input byte i is i % 251.
    assert hyperseal.hash("blake3", b"").hex() == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    one = bytes(i % 251 for i in range(1))
    assert hyperseal.hash("blake3", one).hex() == "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"
    k = bytes(i % 251 for i in range(1024))
    assert hyperseal.hash("blake3", k).hex() == "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"
    # GB/T 32905 example 1.
    assert hyperseal.hash("sm3", b"abc").hex() == "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"


def test_hash_file_matches_in_memory_and_the_cli(tmp_path, cli):
    data = os.urandom((3 << 20) + 5)  # large enough for the multithreaded, memory-mapped BLAKE3
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    for algo in ("blake3", "sha256", "sm3"):
        digest = hyperseal.hash_file(algo, path)
        assert digest == hyperseal.hash(algo, data)
        out = subprocess.run([cli, "hash", "--algo", algo, path], check=True, capture_output=True, text=True)
        assert out.stdout.split()[0] == digest.hex()


def test_hash_errors(tmp_path):
    with pytest.raises(hyperseal.ArgumentError) as e:
        hyperseal.hash("md5", b"x")  # the broken ones only under their legacy- names
    assert e.value.code == "ERR_HYPERSEAL_ARGUMENT"
    with pytest.raises(hyperseal.IoError):
        hyperseal.hash_file("sha256", tmp_path / "missing")
    with pytest.raises(TypeError):
        hyperseal.hash("sha256", 42)


# ── HMAC ────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("algo", ["sha256", "sha384", "sha512", "sha3-256", "sha3-512", "legacy-sha1", "legacy-md5"])
@pytest.mark.parametrize("size", [0, 100, 70_000])
def test_hmac_equals_stdlib(algo, size):
    key, data = os.urandom(size % 97 + 1), os.urandom(size)
    want = std_hmac.new(key, data, HASHLIB[algo]).digest()
    assert hyperseal.hmac(algo, key, data) == want
    long_name = algo.replace("legacy-", "legacy-hmac-") if algo.startswith("legacy-") else "hmac-" + algo
    assert hyperseal.hmac(long_name, key, data) == want  # the toolkit's (and the CLI's) names
    assert hyperseal.hmac_verify(algo, key, data, want)
    bad = bytearray(want)
    bad[-1] ^= 1
    assert not hyperseal.hmac_verify(algo, key, data, bad)
    assert not hyperseal.hmac_verify(algo, key, data, want[:-1])


@pytest.mark.parametrize(
    "name,algo", [("hmac_sha256_test", "sha256"), ("hmac_sha512_test", "sha512"), ("hmac_sha3_256_test", "sha3-256")]
)
def test_hmac_wycheproof(name, algo):
    n = 0
    for g, t in cases(name):
        if g["tagSize"] != len(hyperseal.hmac(algo, b"k", b"")) * 8:
            continue  # truncated tags: the API compares whole tags only
        ok = hyperseal.hmac_verify(algo, h(t["key"]), h(t["msg"]), h(t["tag"]))
        assert ok == (t["result"] == "valid"), t["tcId"]
        if t["result"] == "valid":
            assert hyperseal.hmac(algo, h(t["key"]), h(t["msg"])) == h(t["tag"])
        n += 1
    assert n > 50


# ── KDFs ────────────────────────────────────────────────────────────────────────────────


def test_pbkdf2_and_hkdf_equal_pyca():
    salt = os.urandom(16)
    for hash_name, algo in (("sha256", hashes.SHA256()), ("sha512", hashes.SHA512())):
        want = PBKDF2HMAC(algo, 48, salt, 1000).derive(b"pw")
        assert kdf.pbkdf2("pw", salt, iterations=1000, hash=hash_name, length=48) == want
        want = HKDF(algo, 80, b"salt", b"info").derive(b"ikm")
        assert kdf.hkdf(b"ikm", b"salt", b"info", 80, hash=hash_name) == want


def test_scrypt_equals_hashlib():
    salt = os.urandom(16)
    want = hashlib.scrypt(b"pw", salt=salt, n=1 << 10, r=8, p=2, dklen=40)
    assert kdf.scrypt(b"pw", salt, cost=1 << 10, block_size=8, parallelization=2, length=40) == want
    with pytest.raises(hyperseal.ArgumentError):
        kdf.scrypt(b"pw", salt, cost=1000)


def test_argon2id_rfc9106_shape_and_errors():
    a = kdf.argon2id("pw", b"saltsalt", memory_kib=64, time_cost=1)
    assert len(a) == 32 and a == kdf.argon2id(b"pw", "saltsalt", memory_kib=64, time_cost=1)
    assert a != kdf.argon2id("pw", b"saltsalT", memory_kib=64, time_cost=1)
    with pytest.raises(hyperseal.ArgumentError):
        kdf.argon2id("pw", b"short", memory_kib=64)  # salts of at least 8 bytes
    with pytest.raises(hyperseal.ArgumentError):
        kdf.pbkdf2("pw", b"saltsalt", iterations=1, length=0)


def test_kdf_wycheproof():
    n = 0
    for _, t in cases("hkdf_sha256_test"):
        if t["result"] == "valid":
            got = kdf.hkdf(h(t["ikm"]), h(t["salt"]), h(t["info"]), int(t["size"]))
            assert got == h(t["okm"]), t["tcId"]
            n += 1
    for _, t in cases("pbkdf2_hmacsha256_test"):
        if t["result"] == "valid" and len(h(t["salt"])) >= 8 and t["iterationCount"] <= 10_000 and t["dkLen"] <= 1024:
            got = kdf.pbkdf2(h(t["password"]), h(t["salt"]), iterations=t["iterationCount"], length=t["dkLen"])
            assert got == h(t["dk"]), t["tcId"]
            n += 1
    assert n > 40


def test_long_calls_release_the_gil():
    """The main thread keeps running Python while a KDF runs on another thread."""
    span, ticks = [], []

    def work():
        span.append(time.perf_counter())
        kdf.scrypt(b"pw", b"saltsalt", cost=1 << 16)  # 64 MiB, a few hundred ms
        span.append(time.perf_counter())

    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    assert any(span[0] < x < span[1] for x in ticks[1:])


# ── AEAD ────────────────────────────────────────────────────────────────────────────────

PYCA = {"aes-128-gcm": AESGCM, "aes-256-gcm": AESGCM, "chacha20-poly1305": ChaCha20Poly1305, "aes-256-gcm-siv": AESGCMSIV}


@pytest.mark.parametrize("algo", sorted(PYCA))
@pytest.mark.parametrize("size", SIZES)
def test_aead_opened_by_pyca_and_the_reverse(algo, size):
    key = aead.generate_key(algo)
    assert len(key) == (16 if algo == "aes-128-gcm" else 32)
    peer = PYCA[algo](key)
    data, ad = os.urandom(size), os.urandom(size % 40)
    sealed = aead.seal(algo, key, data, aad=ad)
    assert len(sealed) == 12 + size + 16
    assert peer.decrypt(sealed[:12], sealed[12:], ad) == data
    nonce = os.urandom(12)
    theirs = nonce + peer.encrypt(nonce, data, ad)
    assert aead.open(algo, key, theirs, aad=ad) == data
    assert aead.open(algo, bytearray(key), memoryview(theirs), aad=bytearray(ad)) == data


@pytest.mark.parametrize("algo", aead.ALGORITHMS)
def test_aead_rejects_every_change(algo):
    key = aead.generate_key(algo)
    sealed = aead.seal(algo, key, b"attack at dawn", aad="hdr")
    assert sealed != aead.seal(algo, key, b"attack at dawn", aad="hdr")  # fresh nonces
    assert aead.open(algo, key, sealed, aad=b"hdr") == b"attack at dawn"
    for i in range(len(sealed)):
        bad = bytearray(sealed)
        bad[i] ^= 0x80
        with pytest.raises(hyperseal.AuthenticationError) as e:
            aead.open(algo, key, bytes(bad), aad=b"hdr")
        assert e.value.code == "ERR_HYPERSEAL_AUTH"
    for wrong in (dict(aad=b"hdR"), dict()):
        with pytest.raises(hyperseal.AuthenticationError):
            aead.open(algo, key, sealed, **wrong)
    with pytest.raises(hyperseal.AuthenticationError):
        aead.open(algo, aead.generate_key(algo), sealed, aad=b"hdr")
    with pytest.raises(hyperseal.AuthenticationError):
        aead.open(algo, key, sealed[:20], aad=b"hdr")
    with pytest.raises(hyperseal.InvalidKeyError) as e:
        aead.seal(algo, key[:-1], b"x")
    assert e.value.code == "ERR_HYPERSEAL_KEY"
    with pytest.raises(hyperseal.ArgumentError):
        aead.seal("aes-192-gcm", key, b"x")


def test_aead_large_message_round_trip():
    key = aead.generate_key("aes-256-gcm")
    data = os.urandom((9 << 20) + 7)  # past the size where results are built by every core
    sealed = aead.seal("aes-256-gcm", key, data)
    assert AESGCM(key).decrypt(sealed[:12], sealed[12:], None) == data
    assert aead.open("aes-256-gcm", key, sealed) == data


@pytest.mark.parametrize(
    "name,algos,nonce",
    [
        ("aes_gcm_test", {16: "aes-128-gcm", 32: "aes-256-gcm"}, 96),
        ("chacha20_poly1305_test", {32: "chacha20-poly1305"}, 96),
        ("xchacha20_poly1305_test", {32: "xchacha20-poly1305"}, 192),
        ("aes_gcm_siv_test", {32: "aes-256-gcm-siv"}, 96),
        ("sm4_ccm_test", {16: "sm4-ccm"}, 96),
    ],
)
def test_aead_wycheproof(name, algos, nonce):
    n = 0
    for g, t in cases(name):
        algo = algos.get(g["keySize"] // 8)
        if algo is None or g["ivSize"] != nonce or g["tagSize"] != 128 or t["result"] == "acceptable":
            continue
        sealed = h(t["iv"]) + h(t["ct"]) + h(t["tag"])
        if t["result"] == "valid":
            assert aead.open(algo, h(t["key"]), sealed, aad=h(t["aad"])) == h(t["msg"]), t["tcId"]
        else:
            with pytest.raises(hyperseal.AuthenticationError):
                aead.open(algo, h(t["key"]), sealed, aad=h(t["aad"]))
        n += 1
    assert n > 20
