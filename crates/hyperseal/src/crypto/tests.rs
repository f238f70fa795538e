//! The two backends give the same bytes: random inputs through both (each opens what the other
//! sealed), and the Wycheproof vectors through each. Natively both are built whatever the
//! `portable` feature says, so these run in every native test build. (The payload AEADs have
//! their own cross tests in `suite/`.)

use zeroize::Zeroizing;

use super::{native as n, portable as p, MlkemLevel};
use crate::rng;

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    rng::fill(&mut b).unwrap();
    b
}

fn random_vec(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng::fill(&mut v).unwrap();
    v
}

#[test]
fn hkdf_and_hmac_agree() {
    for len in [0usize, 1, 31, 32, 33, 64, 65, 200, 1000] {
        let (salt, ikm, info) = (random_vec(len), random_vec(len + 7), random_vec(len / 2));
        assert_eq!(*n::hkdf32(&salt, &ikm, &info), *p::hkdf32(&salt, &ikm, &info), "len {len}");
        let prk = random::<32>();
        let (mut a, mut b) = (vec![0u8; len + 1], vec![0u8; len + 1]);
        n::hkdf_expand(&prk, &[&info, b"x", &salt], &mut a);
        p::hkdf_expand(&prk, &[&info, b"x", &salt], &mut b);
        assert_eq!(a, b, "len {len}");
        let tag = n::hmac_sha256(&salt, &[&ikm, &info]);
        assert_eq!(tag, p::hmac_sha256(&salt, &[&ikm, &info]));
        let msg = [&ikm[..], &info].concat();
        assert!(n::hmac_sha256_verify(&salt, &msg, &tag) && p::hmac_sha256_verify(&salt, &msg, &tag));
        let mut bad = tag;
        bad[len % 32] ^= 1;
        assert!(!n::hmac_sha256_verify(&salt, &msg, &bad) && !p::hmac_sha256_verify(&salt, &msg, &bad));
        assert!(!p::hmac_sha256_verify(&salt, &msg, &tag[..31]), "a short tag never verifies");
    }
}

#[test]
fn file_key_wrap_agrees() {
    for len in [0usize, 16, 32, 100] {
        let (key, nonce, pt) = (random::<32>(), random::<12>(), random_vec(len));
        let (mut a, mut b) = (pt.clone(), pt.clone());
        n::chacha_seal(&key, nonce, &mut a);
        p::chacha_seal(&key, nonce, &mut b);
        assert_eq!(a, b);
        assert_eq!(a.len(), len + 16);
        for open in [n::chacha_open, p::chacha_open] {
            let mut c = a.clone();
            assert_eq!(open(&key, nonce, &mut c), Some(len));
            assert_eq!(c[..len], pt[..]);
            let mut bad = a.clone();
            bad[len] ^= 0x40;
            assert_eq!(open(&key, nonce, &mut bad), None);
            assert_eq!(open(&key, nonce, &mut [0u8; 15]), None, "shorter than a tag");
        }
    }
}

#[test]
fn x25519_agrees() {
    for _ in 0..32 {
        let (a, b) = (random::<32>(), random::<32>());
        let (na, pa) = (n::X25519Secret::new(&a).unwrap(), p::X25519Secret::new(&a).unwrap());
        let pub_a = na.public().unwrap();
        assert_eq!(pub_a, pa.public().unwrap());
        let pub_b = p::X25519Secret::new(&b).unwrap().public().unwrap();
        let shared = na.agree(&pub_b).unwrap();
        assert_eq!(*shared, *pa.agree(&pub_b).unwrap());
        assert_eq!(*shared, *n::X25519Secret::new(&b).unwrap().agree(&pub_a).unwrap());
    }
    // Low-order points (the zero point and the order-8 point from the age spec's test vectors)
    // and wrong lengths are refused by both.
    let order8 = hex::decode("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800").unwrap();
    let k = random::<32>();
    for peer in [&[0u8; 32][..], &order8, &[9u8; 31], &[9u8; 33]] {
        assert!(n::X25519Secret::new(&k).unwrap().agree(peer).is_none());
        assert!(p::X25519Secret::new(&k).unwrap().agree(peer).is_none());
    }
}

#[test]
fn mlkem_agrees() {
    for level in [MlkemLevel::L768, MlkemLevel::L1024] {
        for _ in 0..8 {
            let seed = random::<64>();
            let (nd, nek) = n::MlkemDecaps::from_seed(level, &seed).unwrap();
            let (pd, pek) = p::MlkemDecaps::from_seed(level, &seed).unwrap();
            assert_eq!(nek, pek);
            assert_eq!(nek.len(), level.ek_len());
            let m = Zeroizing::new(random::<32>());
            let (nc, nk) = n::mlkem_encapsulate_derand(level, &nek, &m).unwrap();
            let (pc, pk) = p::mlkem_encapsulate_derand(level, &pek, &m).unwrap();
            assert_eq!((&nc, *nk), (&pc, *pk));
            // each decapsulates the other's, and a foreign ciphertext gives the same implicit
            // rejection secret on both
            let (c2, k2) = n::mlkem_encapsulate_derand(level, &nek, &random::<32>()).unwrap();
            assert_eq!(*pd.decapsulate(&c2).unwrap(), *k2);
            assert_eq!(*nd.decapsulate(&pc).unwrap(), *pk);
            let junk = random_vec(level.ct_len());
            let reject = nd.decapsulate(&junk).unwrap();
            assert_eq!(*reject, *pd.decapsulate(&junk).unwrap());
            assert_ne!(*reject, *k2);
        }
    }
}

fn wycheproof(file: &str) -> serde_json::Value {
    let path = format!("{}/../../vectors/wycheproof/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn h(t: &serde_json::Value, k: &str) -> Vec<u8> {
    hex::decode(t[k].as_str().unwrap()).unwrap()
}

type Expand = fn(&[u8], &[&[u8]], &mut [u8]);
type Hmac = fn(&[u8], &[&[u8]]) -> [u8; 32];
type Verify = fn(&[u8], &[u8], &[u8]) -> bool;

/// Wycheproof HKDF-SHA-256 as extract (HMAC) then expand, and HMAC-SHA-256 (full-length tags:
/// the only ones the format uses), through one backend.
fn wycheproof_kdf_mac(hkdf_expand: Expand, hmac: Hmac, verify: Verify) {
    let json = wycheproof("hkdf_sha256_test.json");
    let (mut valid, mut too_long) = (0, 0);
    for t in json["testGroups"].as_array().unwrap().iter().flat_map(|g| g["tests"].as_array().unwrap()) {
        let size = t["size"].as_u64().unwrap() as usize;
        if t["result"] == "invalid" {
            assert!(size > 255 * 32, "tcId {}: the only invalid case is an output too long", t["tcId"]);
            too_long += 1;
            continue;
        }
        let salt = h(t, "salt");
        // RFC 5869: an absent salt is HashLen zeros, which HMAC pads the same as an empty key.
        let prk = hmac(&salt, &[&h(t, "ikm")]);
        let mut okm = vec![0u8; size];
        hkdf_expand(&prk, &[&h(t, "info")], &mut okm);
        assert_eq!(okm, h(t, "okm"), "tcId {}", t["tcId"]);
        valid += 1;
    }
    assert!(valid > 50 && too_long > 0);
    let json = wycheproof("hmac_sha256_test.json");
    let mut checked = 0;
    for g in json["testGroups"].as_array().unwrap().iter().filter(|g| g["tagSize"] == 256) {
        for t in g["tests"].as_array().unwrap() {
            let (key, msg, tag) = (h(t, "key"), h(t, "msg"), h(t, "tag"));
            let ok = t["result"] == "valid";
            assert_eq!(hmac(&key, &[&msg])[..] == tag[..], ok, "tcId {}", t["tcId"]);
            assert_eq!(verify(&key, &msg, &tag), ok, "tcId {}", t["tcId"]);
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn wycheproof_hkdf_hmac_native() {
    wycheproof_kdf_mac(n::hkdf_expand, n::hmac_sha256, n::hmac_sha256_verify);
}

#[test]
fn wycheproof_hkdf_hmac_portable() {
    wycheproof_kdf_mac(p::hkdf_expand, p::hmac_sha256, p::hmac_sha256_verify);
}

type Seal = fn(&[u8; 32], [u8; 12], &mut Vec<u8>);
type Open = fn(&[u8; 32], [u8; 12], &mut [u8]) -> Option<usize>;

/// Wycheproof ChaCha20-Poly1305, the cases the file-key wrap can express (96-bit nonce, no
/// associated data), through one backend.
fn wycheproof_chacha(seal: Seal, open: Open) {
    let json = wycheproof("chacha20_poly1305_test.json");
    let mut checked = 0;
    for t in json["testGroups"].as_array().unwrap().iter().flat_map(|g| g["tests"].as_array().unwrap()) {
        let (Ok(key), Ok(nonce)) = (<[u8; 32]>::try_from(h(t, "key")), <[u8; 12]>::try_from(h(t, "iv")))
        else {
            continue;
        };
        if !h(t, "aad").is_empty() {
            continue;
        }
        let mut sealed = h(t, "ct");
        sealed.extend(h(t, "tag"));
        let valid = t["result"] == "valid";
        let mut buf = sealed.clone();
        assert_eq!(open(&key, nonce, &mut buf).is_some(), valid, "tcId {}", t["tcId"]);
        if valid {
            let mut msg = h(t, "msg");
            assert_eq!(buf[..msg.len()], msg[..]);
            seal(&key, nonce, &mut msg);
            assert_eq!(msg, sealed, "tcId {}", t["tcId"]);
        }
        checked += 1;
    }
    assert!(checked > 30, "{checked}");
}

#[test]
fn wycheproof_chacha_native() {
    wycheproof_chacha(n::chacha_seal, n::chacha_open);
}

#[test]
fn wycheproof_chacha_portable() {
    wycheproof_chacha(p::chacha_seal, p::chacha_open);
}

/// P-256 (native only; the portable build refuses it with one clear message): scalars outside
/// [1, n) are refused, points survive compression both ways, ECDH is symmetric, and points off
/// the curve or in other encodings are refused.
#[test]
fn p256_native_rules_and_portable_refusal() {
    // n, the group order of P-256 (SEC 2 §2.4.2).
    let n = hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").unwrap();
    let n: [u8; 32] = n.try_into().unwrap();
    let mut n_minus_1 = n;
    n_minus_1[31] -= 1;
    assert!(n::P256Secret::new(&n_minus_1).is_ok());
    for bad in [[0u8; 32], n, [0xff; 32]] {
        assert!(n::P256Secret::new(&bad).is_err());
    }
    for _ in 0..16 {
        let (a, b) = (n::P256Secret::new(&random()).unwrap(), n::P256Secret::new(&random()).unwrap());
        let (pa, pb) = (a.public().unwrap(), b.public().unwrap());
        let ca = n::p256_compress(&pa).unwrap();
        assert_eq!(ca[0], 2 | (pa[64] & 1));
        assert_eq!(n::p256_decompress(&ca).unwrap(), pa);
        assert_eq!(*a.agree(&pb).unwrap(), *b.agree(&pa).unwrap());
        assert!(a.agree(&ca).is_none(), "compressed peers are refused");
        let mut off = pb;
        off[64] ^= 1;
        assert!(a.agree(&off).is_none() && n::p256_compress(&off).is_none());
        let mut wrong_parity = ca;
        wrong_parity[0] ^= 1;
        assert_ne!(n::p256_decompress(&wrong_parity), Some(pa));
    }
    assert!(n::p256_decompress(&[2; 32]).is_none() && n::p256_decompress(&[4; 33]).is_none());
    let e = p::P256Secret::new(&n_minus_1).err().unwrap();
    assert!(e.to_string().contains("not available in this build"), "{e}");
    assert!(p::p256_decompress(
        &n::p256_compress(&n::P256Secret::new(&n_minus_1).unwrap().public().unwrap()).unwrap()
    )
    .is_none());
}

/// The ciphers of OpenSSH key files: AES-256-CTR gives the same bytes on both backends, for
/// lengths across block boundaries and counters that carry past 64 bits; AES-256-GCM opens on
/// each what the other accepts and refuses a flipped bit on both.
#[test]
fn openssh_key_ciphers_agree() {
    for len in [0usize, 1, 16, 17, 64, 1000] {
        let (key, mut iv, data) = (random::<32>(), random::<16>(), random_vec(len));
        iv[8..].fill(0xff);
        let (mut a, mut b) = (data.clone(), data.clone());
        n::aes256_ctr(&key, iv, &mut a).unwrap();
        p::aes256_ctr(&key, iv, &mut b).unwrap();
        assert_eq!(a, b, "len {len}");
        p::aes256_ctr(&key, iv, &mut b).unwrap();
        assert_eq!(b, data, "len {len}: CTR is its own inverse");
    }
    use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM};
    for len in [0usize, 1, 37, 500] {
        let (key, nonce, data) = (random::<32>(), random::<12>(), random_vec(len));
        let mut sealed = data.clone();
        let k = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &key).unwrap());
        let tag =
            k.seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut sealed);
        let tag: [u8; 16] = tag.unwrap().as_ref().try_into().unwrap();
        for open in [n::aes256_gcm_open, p::aes256_gcm_open] {
            let mut buf = sealed.clone();
            assert!(open(&key, nonce, &mut buf, &tag), "len {len}");
            assert_eq!(buf, data, "len {len}");
            let mut bad = tag;
            bad[len % 16] ^= 1;
            assert!(!open(&key, nonce, &mut sealed.clone(), &bad), "len {len}");
        }
    }
}

/// RSA-OAEP-SHA-256 with a label: what the portable backend (RustCrypto `rsa`) encrypts, aws-lc
/// decrypts, under that label only; both refuse a modulus outside 2048–8192 bits.
#[test]
fn rsa_oaep_encryption_agrees() {
    use aws_lc_rs::encoding::AsDer;
    use aws_lc_rs::rsa::{
        KeyPair, KeySize, OaepPrivateDecryptingKey, PrivateDecryptingKey, PublicKeyComponents,
        OAEP_SHA256_MGF1SHA256,
    };
    use aws_lc_rs::signature::KeyPair as _;
    for size in [KeySize::Rsa2048, KeySize::Rsa3072] {
        let pair = KeyPair::generate(size).unwrap();
        let PublicKeyComponents { n: modulus, e } = PublicKeyComponents::<Vec<u8>>::from(pair.public_key());
        let der = pair.as_der().unwrap();
        let private =
            OaepPrivateDecryptingKey::new(PrivateDecryptingKey::from_pkcs8(der.as_ref()).unwrap()).unwrap();
        let label = b"age-encryption.org/v1/ssh-rsa";
        for (name, ct) in [
            ("portable", p::RsaOaepPublic::new(&modulus, &e).unwrap().encrypt(&[7; 16], label).unwrap()),
            ("native", n::RsaOaepPublic::new(&modulus, &e).unwrap().encrypt(&[7; 16], label).unwrap()),
        ] {
            assert_eq!(ct.len(), modulus.len(), "{name}");
            let mut out = vec![0u8; private.min_output_size()];
            let pt = private.decrypt(&OAEP_SHA256_MGF1SHA256, &ct, &mut out, Some(label)).unwrap();
            assert_eq!(pt, [7; 16], "{name}");
            let mut out = vec![0u8; private.min_output_size()];
            assert!(private.decrypt(&OAEP_SHA256_MGF1SHA256, &ct, &mut out, Some(b"")).is_err(), "{name}");
        }
        let short = &modulus[..modulus.len() / 2];
        assert!(p::RsaOaepPublic::new(short, &e).is_none() && n::RsaOaepPublic::new(short, &e).is_none());
    }
}
