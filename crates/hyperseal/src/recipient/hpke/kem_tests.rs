//! The P-256 KEMs and the HPKE key schedule against published vectors (`vectors/hpke/`): RFC
//! 9180 A.5.1 for DHKEM(P-256) with our exact suite, and draft-ietf-hpke-pq's MLKEM768-P256.

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, CHACHA20_POLY1305};
use zeroize::Zeroizing;

use super::*;
use crate::recipient::hpke::base::{key_schedule, key_schedule_into, suite_id, KEM_MLKEM768_P256, KEM_P256};

fn vector(file: &str) -> serde_json::Value {
    let path = format!("{}/../../vectors/hpke/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(path).unwrap()).unwrap()["vector"]
        .clone()
}

fn h(v: &serde_json::Value, k: &str) -> Vec<u8> {
    hex::decode(v[k].as_str().unwrap()).unwrap()
}

fn seal_first(
    alg: &'static aws_lc_rs::aead::Algorithm,
    key: &[u8],
    nonce: [u8; 12],
    e: &serde_json::Value,
) -> Vec<u8> {
    let key = LessSafeKey::new(UnboundKey::new(alg, key).unwrap());
    let mut buf = h(e, "pt");
    key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(h(e, "aad")), &mut buf)
        .unwrap();
    buf
}

/// RFC 9180 A.5.1: DeriveKeyPair for both keys, Encap with the derived ephemeral key, Decap,
/// the key schedule, and the first encryption.
#[test]
fn rfc9180_a5_1_p256_chacha() {
    let v = vector("rfc9180_a5_1.json");
    let sk_r = P256Key::derive(&h(&v, "ikmR")).unwrap();
    assert_eq!(&sk_r.public()[..], &h(&v, "pkRm")[..]);
    let sk_r2 = P256Key::from_scalar(&h(&v, "skRm").try_into().unwrap()).unwrap();
    assert_eq!(sk_r2.public(), sk_r.public(), "derived scalar = skRm");
    let eph = P256Key::derive(&h(&v, "ikmE")).unwrap();
    assert_eq!(&eph.public()[..], &h(&v, "pkEm")[..]);
    let (enc, shared) = p256_encap_with(sk_r.public(), &eph).unwrap();
    assert_eq!((&enc[..], &shared[..]), (&h(&v, "enc")[..], &h(&v, "shared_secret")[..]));
    assert_eq!(&p256_decap(&sk_r, &enc).unwrap()[..], &h(&v, "shared_secret")[..]);
    let (key, nonce) = key_schedule(KEM_P256, &shared, &h(&v, "info"));
    assert_eq!((&key[..], &nonce[..]), (&h(&v, "key")[..], &h(&v, "base_nonce")[..]));
    let e = &v["encryptions"][0];
    assert_eq!(seal_first(&CHACHA20_POLY1305, &key[..], nonce, e), h(e, "ct"));
    // The compressed form survives a round trip and a fresh encapsulation decapsulates.
    assert_eq!(decompress(&sk_r.public_compressed()).unwrap(), *sk_r.public());
    let (enc2, ss2) = p256_encap(sk_r.public()).unwrap();
    assert_ne!(enc2, enc);
    assert_eq!(*p256_decap(&sk_r, &enc2).unwrap(), *ss2);
    assert!(p256_decap(&sk_r, &sk_r.public_compressed()).is_err(), "compressed enc refused");
}

/// draft-ietf-hpke-pq MLKEM768-P256: DeriveKeyPair gives skRm (the seed) and pkRm, Decap gives
/// the shared secret, and the key schedule (with that vector's AES-128-GCM) its key and nonce.
#[test]
fn hpke_pq_mlkem768_p256() {
    let v = vector("mlkem768_p256.json");
    let k = HybridKey::derive(&h(&v, "ikmR")).unwrap();
    assert_eq!(&k.seed()[..], &h(&v, "skRm")[..]);
    assert_eq!(k.public().bytes(), h(&v, "pkRm"));
    let shared = k.decap(&h(&v, "enc")).unwrap();
    assert_eq!(&shared[..], &h(&v, "shared_secret")[..]);
    let suite = suite_id(KEM_MLKEM768_P256, 1, 1);
    assert_eq!(&suite[..], &h(&v, "suite_id")[..]);
    let mut key = [0u8; 16];
    let nonce = key_schedule_into(&suite, &shared[..], &h(&v, "info"), &mut key);
    assert_eq!((&key[..], &nonce[..]), (&h(&v, "key")[..], &h(&v, "base_nonce")[..]));
    let e = &v["encryptions"][0];
    assert_eq!(seal_first(&AES_128_GCM, &key, nonce, e), h(e, "ct"));
    // Round trip with fresh randomness, and the public key parses back to itself.
    let p = HybridPublic::parse(&k.public().bytes()).unwrap();
    let (enc, ss) = p.encap().unwrap();
    assert_eq!(enc.len(), HYBRID_ENC_LEN);
    assert_eq!(*k.decap(&enc).unwrap(), *ss);
    let from_seed = HybridKey::from_seed(Zeroizing::new(*k.seed())).unwrap();
    assert!(from_seed.public() == k.public());
}

#[test]
fn hybrid_public_rejections() {
    let k = HybridKey::generate().unwrap();
    let good = k.public().bytes();
    assert!(HybridPublic::parse(&good[1..]).is_err());
    let mut off_curve = good.clone();
    off_curve[HYBRID_PUBLIC_LEN - 1] ^= 1;
    assert!(HybridPublic::parse(&off_curve).is_err());
    let mut over_q = good.clone();
    over_q[0] = 0xff;
    over_q[1] |= 0x0f;
    assert!(HybridPublic::parse(&over_q).is_err());
    let mut enc = k.public().encap().unwrap().0;
    enc[HYBRID_ENC_LEN - 1] ^= 1;
    assert!(matches!(k.decap(&enc), Err(Error::InvalidStanza(_))));
}
