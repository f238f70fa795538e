//! Wycheproof `chacha20_poly1305_test.json` and `xchacha20_poly1305_test.json`: every valid
//! vector seals to its ciphertext and tag and opens; every invalid one is refused, either by the
//! type (a nonce of another length cannot be passed) or by the tag check, leaving no plaintext.

use chacha20_simd128::{ChaCha20Poly1305, XChaCha20Poly1305};
use chacha20poly1305::aead::{AeadInOut, KeyInit};
use serde_json::Value;

use crate::unhex;

/// Counts from one file.
#[derive(Debug, Default)]
pub struct Counts {
    pub valid: usize,
    pub invalid: usize,
}

/// Runs the vectors of `json` (the file's text) through ChaCha20-Poly1305 (`nonce_len` 12) or
/// XChaCha20-Poly1305 (`nonce_len` 24).
pub fn run(json: &str, nonce_len: usize) -> Result<Counts, String> {
    let doc: Value = serde_json::from_str(json).map_err(|e| format!("wycheproof JSON: {e}"))?;
    let mut counts = Counts::default();
    let groups = doc["testGroups"].as_array().ok_or("wycheproof: no testGroups")?;
    for t in groups.iter().flat_map(|g| g["tests"].as_array().into_iter().flatten()) {
        let id = t["tcId"].as_u64().unwrap_or(0);
        let field = |k: &str| unhex(t[k].as_str().unwrap_or(""));
        let (key, nonce, aad, msg, ct, tag) =
            (field("key"), field("iv"), field("aad"), field("msg"), field("ct"), field("tag"));
        let valid = match t["result"].as_str() {
            Some("valid") => true,
            Some("invalid") => false,
            other => return Err(format!("tcId {id}: unexpected result {other:?}")),
        };
        let fail = |what: &str| Err(format!("wycheproof {nonce_len}-byte nonce tcId {id}: {what}"));
        let key: [u8; 32] = match key.try_into() {
            Ok(k) => k,
            Err(_) if !valid => {
                counts.invalid += 1;
                continue;
            }
            Err(_) => return fail("valid vector with a key that is not 32 bytes"),
        };
        if nonce.len() != nonce_len || tag.len() != 16 {
            if valid {
                return fail("valid vector with a nonce or tag of another length");
            }
            counts.invalid += 1;
            continue;
        }
        let tag: [u8; 16] = tag[..].try_into().expect("16");

        let mut sealed = msg.clone();
        let got_tag = aead(&key, &nonce, |k| k.seal(&aad, &mut sealed))?;
        let seals_right = sealed == ct && got_tag == tag;

        let mut opened = ct.clone();
        let opens = aead(&key, &nonce, |k| k.open(&aad, &mut opened, &tag))?;

        match (valid, seals_right, opens) {
            (true, true, true) if opened == msg => counts.valid += 1,
            (true, _, _) => return fail("valid vector did not seal to its ciphertext or open"),
            (false, _, false) => counts.invalid += 1,
            (false, _, true) => return fail("invalid vector opened"),
        }
    }
    Ok(counts)
}

/// The two AEADs behind one face, so each vector runs the same code.
enum Aead {
    Chacha(Box<ChaCha20Poly1305>, [u8; 12]),
    XChacha(Box<XChaCha20Poly1305>, [u8; 24]),
}

impl Aead {
    fn seal(&self, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        let tag = match self {
            Aead::Chacha(k, n) => k.encrypt_inout_detached(&(*n).into(), aad, buf.into()),
            Aead::XChacha(k, n) => k.encrypt_inout_detached(&(*n).into(), aad, buf.into()),
        };
        tag.expect("sealing under 256 GiB cannot fail").into()
    }

    fn open(&self, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
        match self {
            Aead::Chacha(k, n) => k.decrypt_inout_detached(&(*n).into(), aad, buf.into(), &(*tag).into()),
            Aead::XChacha(k, n) => k.decrypt_inout_detached(&(*n).into(), aad, buf.into(), &(*tag).into()),
        }
        .is_ok()
    }
}

fn aead<T>(key: &[u8; 32], nonce: &[u8], f: impl FnOnce(&Aead) -> T) -> Result<T, String> {
    let a = match nonce.len() {
        12 => Aead::Chacha(Box::new(ChaCha20Poly1305::new(key.into())), nonce.try_into().expect("12")),
        24 => Aead::XChacha(Box::new(XChaCha20Poly1305::new(key.into())), nonce.try_into().expect("24")),
        n => return Err(format!("no AEAD takes a {n}-byte nonce")),
    };
    Ok(f(&a))
}
