//! Wycheproof `sm4_gcm_test.json` and `sm4_ccm_test.json`: every group, every
//! test, every backend this CPU runs (the others are skipped with a printed
//! line naming them). Valid vectors must seal to the expected ciphertext/tag
//! and open; invalid ones must be rejected. Parameter sizes the generic mode
//! crates cannot express (GCM: empty IV; CCM: nonces outside 7..=13 bytes,
//! odd or < 4-byte tags) count as rejected, and every vector using them must
//! be marked invalid by Wycheproof — so a size we wrongly refuse fails.

use serde_json::Value;
use sm4_simd::aes_gcm::{AeadInOut, AesGcm};
use sm4_simd::ccm::{Ccm, NonceSize, TagSize};
use sm4_simd::cipher::array::{Array, ArraySize};
use sm4_simd::cipher::consts::*;
use sm4_simd::cipher::typenum::Unsigned;
use sm4_simd::{Backend, Sm4};

macro_rules! vectors {
    ($file:literal) => {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/wycheproof/", $file)
    };
}

struct Case {
    key: [u8; 16],
    iv: Vec<u8>,
    aad: Vec<u8>,
    msg: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

/// `(ciphertext, tag, opened)` from sealing `msg` and opening the vector's
/// `ct ‖ tag`; `None` if the parameters are refused.
type Outcome = Option<(Vec<u8>, Vec<u8>, bool)>;

/// Seals and opens with any AEAD built on `Sm4`.
fn seal_open<A: AeadInOut>(aead: &A, c: &Case) -> Outcome {
    let nonce = Array::<u8, A::NonceSize>::try_from(&c.iv[..]).ok()?;
    let mut buf = c.msg.clone();
    let tag = aead.encrypt_inout_detached(&nonce, &c.aad, (&mut buf[..]).into()).ok()?;
    // Opening uses the *vector's* ciphertext and tag.
    let mut opened = c.ct.clone();
    let tag_ok = match Array::<u8, A::TagSize>::try_from(&c.tag[..]) {
        Ok(t) => aead.decrypt_inout_detached(&nonce, &c.aad, (&mut opened[..]).into(), &t).is_ok(),
        Err(_) => false,
    };
    Some((buf, tag.to_vec(), tag_ok && opened == c.msg))
}

/// GCM: dispatches on the IV length to a typenum nonce size. A zero-length
/// IV is rejected (SP 800-38D requires len(IV) >= 1 bit).
fn gcm_any(cipher: &Sm4, c: &Case) -> Outcome {
    macro_rules! sizes {
        ($($n:ty),*) => {
            match c.iv.len() {
                $(l if l == <$n>::USIZE => seal_open(&AesGcm::<Sm4, $n>::from(cipher.clone()), c),)*
                _ => None,
            }
        };
    }
    sizes!(
        U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16, U20, U24, U32, U64, U128, U257
    )
}

fn ccm<M: ArraySize + TagSize, N: ArraySize + NonceSize>(cipher: &Sm4, c: &Case) -> Outcome {
    seal_open(&Ccm::<Sm4, M, N>::from(cipher.clone()), c)
}

/// CCM: dispatches on (tag bytes, nonce bytes) to every pair RFC 3610
/// allows — tags 4, 6, …, 16, nonces 7..=13 — and refuses the rest.
fn ccm_any(cipher: &Sm4, c: &Case, tag_len: usize) -> Outcome {
    macro_rules! nonces {
        ($m:ty; $($n:ty),*) => {
            match c.iv.len() {
                $(l if l == <$n>::USIZE => ccm::<$m, $n>(cipher, c),)*
                _ => None,
            }
        };
    }
    macro_rules! tags {
        ($($m:ty),*) => {
            match tag_len {
                $(l if l == <$m>::USIZE => nonces!($m; U7, U8, U9, U10, U11, U12, U13),)*
                _ => None,
            }
        };
    }
    tags!(U4, U6, U8, U10, U12, U14, U16)
}

/// The backends to run; prints one line per backend this CPU lacks.
fn backends() -> Vec<Backend> {
    Backend::ALL
        .into_iter()
        .filter(|b| {
            let ok = b.is_supported();
            if !ok {
                eprintln!("note: backend {b} not supported on this CPU, skipped");
            }
            ok
        })
        .collect()
}

fn hex(v: &Value, k: &str) -> Vec<u8> {
    hex::decode(v[k].as_str().unwrap()).unwrap()
}

/// Runs one file on every backend; `run(cipher, case, tag_bytes)`.
fn check(file: &str, path: &str, run: impl Fn(&Sm4, &Case, usize) -> Outcome) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let json: Value = serde_json::from_str(&text).unwrap();
    for backend in backends() {
        let (mut total, mut refused, mut groups_run) = (0, 0, 0);
        for group in json["testGroups"].as_array().unwrap() {
            let tag_len = group["tagSize"].as_u64().unwrap() as usize / 8;
            let mut group_ran = false;
            for t in group["tests"].as_array().unwrap() {
                total += 1;
                let id = &t["tcId"];
                let c = Case {
                    key: hex(t, "key").try_into().unwrap(),
                    iv: hex(t, "iv"),
                    aad: hex(t, "aad"),
                    msg: hex(t, "msg"),
                    ct: hex(t, "ct"),
                    tag: hex(t, "tag"),
                };
                let cipher = Sm4::with_backend(backend, &c.key).unwrap();
                let res = run(&cipher, &c, tag_len);
                group_ran |= res.is_some();
                refused += usize::from(res.is_none());
                match t["result"].as_str().unwrap() {
                    "valid" | "acceptable" => {
                        let (ct, tag, opened) = res.unwrap_or_else(|| panic!("{backend} tc {id}: rejected"));
                        assert_eq!(ct, c.ct, "{backend} tc {id}: ciphertext");
                        assert_eq!(tag, c.tag, "{backend} tc {id}: tag");
                        assert!(opened, "{backend} tc {id}: open failed");
                    }
                    _ => {
                        let accepted = res.is_some_and(|(_, _, opened)| opened);
                        assert!(!accepted, "{backend} tc {id}: invalid vector accepted");
                    }
                }
            }
            groups_run += usize::from(group_ran);
        }
        assert_eq!(total, json["numberOfTests"].as_u64().unwrap());
        println!("{file} {backend}: {total} tests, {groups_run} groups run, {refused} refused by size");
    }
}

#[test]
fn wycheproof_sm4_gcm() {
    check("sm4_gcm", vectors!("sm4_gcm_test.json"), |cipher, c, _| gcm_any(cipher, c));
}

#[test]
fn wycheproof_sm4_ccm() {
    check("sm4_ccm", vectors!("sm4_ccm_test.json"), ccm_any);
}
