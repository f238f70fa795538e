//! The portable signature backend (RustCrypto: what the browser package runs) against aws-lc, in
//! both directions: keys made by one are read by the other (PKCS#8 and SPKI DER, byte for byte
//! the same public key), signatures made by one verify with the other, and a changed message or
//! signature is rejected by both. Runs only with `--features portable`:
//!
//! `cargo test --release -p hyperseal-toolkit --features portable --test suite sign_portable::`
#![cfg(all(feature = "portable", not(target_arch = "wasm32")))]

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    self as sig, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, PqdsaKeyPair, UnparsedPublicKey,
};
use hyperseal_toolkit::sign::{KeyKind, SigningKey, VerifyingKey};

const KINDS: [KeyKind; 3] = [KeyKind::Ed25519, KeyKind::EcdsaP256, KeyKind::MlDsa65];

fn verify_alg(kind: KeyKind) -> &'static dyn sig::VerificationAlgorithm {
    match kind {
        KeyKind::Ed25519 => &sig::ED25519,
        KeyKind::EcdsaP256 => &sig::ECDSA_P256_SHA256_ASN1,
        KeyKind::MlDsa65 => &sig::ML_DSA_65,
        _ => unreachable!(),
    }
}

/// An aws-lc key of `kind`: (PKCS#8 v1 DER, SPKI DER, a signature over `msg`).
fn aws_lc_key(kind: KeyKind, msg: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    match kind {
        KeyKind::Ed25519 => {
            let k = Ed25519KeyPair::generate().unwrap();
            let s = k.sign(msg).as_ref().to_vec();
            (k.to_pkcs8v1().unwrap().as_ref().to_vec(), k.public_key().as_der().unwrap().as_ref().to_vec(), s)
        }
        KeyKind::EcdsaP256 => {
            let k = EcdsaKeyPair::generate(&sig::ECDSA_P256_SHA256_ASN1_SIGNING).unwrap();
            let s = k.sign(&SystemRandom::new(), msg).unwrap().as_ref().to_vec();
            (k.to_pkcs8v1().unwrap().as_ref().to_vec(), k.public_key().as_der().unwrap().as_ref().to_vec(), s)
        }
        KeyKind::MlDsa65 => {
            let k = PqdsaKeyPair::generate(&sig::ML_DSA_65_SIGNING).unwrap();
            let mut s = vec![0u8; k.algorithm().signature_len()];
            let n = k.sign(msg, &mut s).unwrap();
            s.truncate(n);
            (k.to_pkcs8v1().unwrap().as_ref().to_vec(), k.public_key().as_der().unwrap().as_ref().to_vec(), s)
        }
        _ => unreachable!(),
    }
}

fn flip(mut v: Vec<u8>, at: usize) -> Vec<u8> {
    let i = at % v.len();
    v[i] ^= 0x01;
    v
}

#[test]
fn portable_keys_and_signatures_verify_with_aws_lc() {
    let msg = b"signed in a browser";
    for kind in KINDS {
        let sk = SigningKey::generate(kind).unwrap();
        let spki = sk.verifying_key().unwrap().to_spki_der().to_vec();
        let s = sk.sign(msg).unwrap();
        let aws = UnparsedPublicKey::new(verify_alg(kind), &spki);
        aws.verify(msg, &s).unwrap_or_else(|_| panic!("{kind}: aws-lc rejects a portable signature"));
        assert!(aws.verify(b"signed in a browseR", &s).is_err(), "{kind}");
        assert!(aws.verify(msg, &flip(s.clone(), s.len() / 2)).is_err(), "{kind}");

        // The private key as PEM reads back into aws-lc with the same public key.
        let der = sk.to_pkcs8_der().unwrap();
        let aws_spki = match kind {
            KeyKind::Ed25519 => {
                Ed25519KeyPair::from_pkcs8(&der).map(|k| k.public_key().as_der().unwrap().as_ref().to_vec())
            }
            KeyKind::EcdsaP256 => EcdsaKeyPair::from_pkcs8(&sig::ECDSA_P256_SHA256_ASN1_SIGNING, &der)
                .map(|k| k.public_key().as_der().unwrap().as_ref().to_vec()),
            _ => PqdsaKeyPair::from_pkcs8(&sig::ML_DSA_65_SIGNING, &der)
                .map(|k| k.public_key().as_der().unwrap().as_ref().to_vec()),
        }
        .unwrap_or_else(|_| panic!("{kind}: aws-lc cannot read the portable PKCS#8 key"));
        assert_eq!(aws_spki, spki, "{kind}");
    }
}

#[test]
fn aws_lc_keys_and_signatures_work_on_the_portable_backend() {
    let msg = b"signed by the CLI";
    for kind in KINDS {
        let (pkcs8, spki, s) = aws_lc_key(kind, msg);
        let vk = VerifyingKey::from_spki_der(&spki).unwrap();
        assert_eq!(vk.kind(), kind);
        vk.verify(msg, &s).unwrap_or_else(|_| panic!("{kind}: portable rejects an aws-lc signature"));
        assert!(vk.verify(b"signed by the CLi", &s).is_err(), "{kind}");
        assert!(vk.verify(msg, &flip(s.clone(), 7)).is_err(), "{kind}");
        assert!(vk.verify(msg, &s[..s.len() - 1]).is_err(), "{kind}");

        let sk = SigningKey::from_pkcs8_der(&pkcs8)
            .unwrap_or_else(|e| panic!("{kind}: portable cannot read aws-lc PKCS#8: {e}"));
        assert_eq!(sk.kind(), kind);
        assert_eq!(sk.verifying_key().unwrap().to_spki_der(), &spki[..], "{kind}");
        let mine = sk.sign(msg).unwrap();
        UnparsedPublicKey::new(verify_alg(kind), &spki).verify(msg, &mine).unwrap();
    }
}

#[test]
fn rsa_is_refused_with_a_key_error() {
    assert!(matches!(SigningKey::generate(KeyKind::Rsa2048), Err(hyperseal_toolkit::Error::InvalidKey(_))));
    let rsa = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
    let spki = rsa.public_key().as_der().unwrap();
    assert!(VerifyingKey::from_spki_der(spki.as_ref()).is_err());
}
