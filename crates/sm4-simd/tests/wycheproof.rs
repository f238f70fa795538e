//! Wycheproof `sm4_gcm_test.json`: every group, every test, every backend.
//! Valid vectors must seal to the expected ciphertext/tag and open; invalid
//! ones must be rejected. (`sm4_ccm_test.json` is not run: no CCM here.)

use serde_json::Value;
use sm4_simd::aes_gcm::{AeadInOut, AesGcm};
use sm4_simd::cipher::array::ArraySize;
use sm4_simd::cipher::consts::*;
use sm4_simd::cipher::typenum::Unsigned;
use sm4_simd::{Backend, Sm4};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/wycheproof/sm4_gcm_test.json");

struct Case {
    key: [u8; 16],
    iv: Vec<u8>,
    aad: Vec<u8>,
    msg: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

/// Seals and opens with a nonce of `N` bytes; `None` = rejected somewhere.
fn run<N: ArraySize>(cipher: &Sm4, c: &Case) -> Option<(Vec<u8>, Vec<u8>, bool)> {
    let gcm = AesGcm::<Sm4, N>::from(cipher.clone());
    let nonce = sm4_simd::cipher::Array::<u8, N>::try_from(&c.iv[..]).ok()?;
    let mut buf = c.msg.clone();
    let tag = gcm.encrypt_inout_detached(&nonce, &c.aad, (&mut buf[..]).into()).ok()?;
    // Opening uses the *vector's* ciphertext and tag.
    let mut opened = c.ct.clone();
    let tag_ok = c.tag.len() == 16
        && gcm
            .decrypt_inout_detached(&nonce, &c.aad, (&mut opened[..]).into(), c.tag[..].try_into().ok()?)
            .is_ok()
        && opened == c.msg;
    Some((buf, tag.to_vec(), tag_ok))
}

/// Dispatches on the IV length to a typenum nonce size. A zero-length IV is
/// rejected (SP 800-38D requires len(IV) >= 1 bit).
fn run_any(cipher: &Sm4, c: &Case) -> Option<(Vec<u8>, Vec<u8>, bool)> {
    macro_rules! sizes {
        ($($n:ty),*) => {
            match c.iv.len() {
                $(l if l == <$n>::USIZE => run::<$n>(cipher, c),)*
                _ => None,
            }
        };
    }
    sizes!(
        U1, U2, U3, U4, U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16, U20, U24, U32, U64, U128, U257
    )
}

fn hex(v: &Value, k: &str) -> Vec<u8> {
    hex::decode(v[k].as_str().unwrap()).unwrap()
}

#[test]
fn wycheproof_sm4_gcm() {
    let text = std::fs::read_to_string(PATH).expect("vectors/wycheproof/sm4_gcm_test.json");
    let json: Value = serde_json::from_str(&text).unwrap();
    let mut total = 0;
    for backend in Backend::ALL.into_iter().filter(|b| b.is_supported()) {
        total = 0;
        for group in json["testGroups"].as_array().unwrap() {
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
                let res = run_any(&cipher, &c);
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
        }
    }
    assert_eq!(total, json["numberOfTests"].as_u64().unwrap());
}
