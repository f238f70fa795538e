//! The toolkit under the Node package's names: `hash`, `hmac`/`hmacVerify`, the KDFs, one-shot
//! AEAD and tokens (`js/core.js` groups them into the `kdf`, `aead` and `token` namespaces and
//! makes the password KDFs return promises, as in Node). Only type conversion: everything is
//! `hyperseal_toolkit`'s public API, which on wasm32 runs on RustCrypto (its `src/backend/`).
//! Signatures are not here: the toolkit's are on aws-lc keys, native only.
//!
//! Secret outputs (derived keys, opened plaintext, AEAD keys) are copied into a JS array from a
//! zeroizing buffer, so no copy stays behind in WebAssembly memory.

use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hyperseal::KeyCache;
use hyperseal_toolkit::kdf::{self as tk, PasswordKdf};
use hyperseal_toolkit::token::{self as tt, KeyRing};
use hyperseal_toolkit::{aead, hash as th, mac as tm};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use zeroize::Zeroizing;

use crate::args::{self, bytes, opt_bytes};
use crate::errors::{arg, error, fail_kit, fail_token};

/// A zeroizing buffer as a JS array (the buffer is wiped when dropped).
fn secret(z: Zeroizing<Vec<u8>>) -> js_sys::Uint8Array {
    js_sys::Uint8Array::from(&z[..])
}

/// Digest of `data`. `algo`: 'sha256', 'sha384', 'sha512', 'sha3-256', 'sha3-512',
/// 'blake2b512', 'blake3', 'sm3', 'legacy-md5', 'legacy-sha1'.
#[wasm_bindgen]
pub fn hash(algo: String, data: JsValue) -> Result<Vec<u8>, JsValue> {
    let alg = th::Algorithm::parse(&algo).map_err(fail_kit)?;
    Ok(th::hash(alg, &bytes(&data, "data")?))
}

/// Accepts the toolkit's names ('hmac-sha256') and the hash names ('sha256', 'legacy-sha1'),
/// as the Node package does.
fn mac_alg(algo: &str) -> Result<tm::Algorithm, JsValue> {
    tm::Algorithm::parse_by_hash(algo).map_err(|e| arg(e.to_string()))
}

/// HMAC tag of `data` under `key`.
#[wasm_bindgen]
pub fn hmac(algo: String, key: JsValue, data: JsValue) -> Result<Vec<u8>, JsValue> {
    let key = Zeroizing::new(bytes(&key, "key")?);
    Ok(tm::sign(mac_alg(&algo)?, &key, &bytes(&data, "data")?))
}

/// Whether `tag` is the HMAC of `data` under `key`, compared in constant time. A tag of the
/// wrong length is `false`.
#[wasm_bindgen(js_name = hmacVerify)]
pub fn hmac_verify(algo: String, key: JsValue, data: JsValue, tag: &[u8]) -> Result<bool, JsValue> {
    let key = Zeroizing::new(bytes(&key, "key")?);
    Ok(tm::verify(mac_alg(&algo)?, &key, &bytes(&data, "data")?, tag).is_ok())
}

fn hash_fn(name: Option<&str>) -> Result<tk::HashFn, JsValue> {
    match name.map(str::to_ascii_lowercase).as_deref() {
        None | Some("sha256") | Some("sha-256") => Ok(tk::HashFn::Sha256),
        Some("sha512") | Some("sha-512") => Ok(tk::HashFn::Sha512),
        Some(other) => Err(arg(format!("unknown KDF hash {other:?} (expected sha256 or sha512)"))),
    }
}

fn derive(
    kdf: PasswordKdf,
    password: JsValue,
    salt: JsValue,
    options: &JsValue,
) -> Result<js_sys::Uint8Array, JsValue> {
    let password = Zeroizing::new(bytes(&password, "password")?);
    let len = args::u32_field(options, "length")?.unwrap_or(32) as usize;
    Ok(secret(kdf.derive(&password, &bytes(&salt, "salt")?, len).map_err(fail_kit)?))
}

/// PBKDF2-HMAC. `options`: `iterations` (default 600000), `hash` ('sha256' or 'sha512'),
/// `length` (default 32). The salt must be at least 8 bytes.
#[wasm_bindgen(js_name = kdfPbkdf2Sync)]
pub fn kdf_pbkdf2(password: JsValue, salt: JsValue, options: JsValue) -> Result<js_sys::Uint8Array, JsValue> {
    let d = tk::Pbkdf2Params::default();
    let p = tk::Pbkdf2Params {
        hash: hash_fn(args::string_field(&options, "hash")?.as_deref())?,
        iterations: args::u32_field(&options, "iterations")?.unwrap_or(d.iterations),
    };
    derive(PasswordKdf::Pbkdf2(p), password, salt, &options)
}

/// Argon2id v1.3. `options`: `memoryKib` (default 19456), `timeCost` (2), `parallelism` (1),
/// `length` (32). The salt must be at least 8 bytes.
#[wasm_bindgen(js_name = kdfArgon2idSync)]
pub fn kdf_argon2id(
    password: JsValue,
    salt: JsValue,
    options: JsValue,
) -> Result<js_sys::Uint8Array, JsValue> {
    let d = tk::Argon2Params::default();
    let p = tk::Argon2Params {
        m_cost_kib: args::u32_field(&options, "memoryKib")?.unwrap_or(d.m_cost_kib),
        t_cost: args::u32_field(&options, "timeCost")?.unwrap_or(d.t_cost),
        p_cost: args::u32_field(&options, "parallelism")?.unwrap_or(d.p_cost),
    };
    derive(PasswordKdf::Argon2id(p), password, salt, &options)
}

/// scrypt. `options`: `cost` (N, a power of two; default 2^17), `blockSize` (8),
/// `parallelization` (1), `length` (32). The salt must be at least 8 bytes.
#[wasm_bindgen(js_name = kdfScryptSync)]
pub fn kdf_scrypt(password: JsValue, salt: JsValue, options: JsValue) -> Result<js_sys::Uint8Array, JsValue> {
    let d = tk::ScryptParams::default();
    let log_n = match args::number_field(&options, "cost")? {
        None => d.log_n,
        Some(n) if (2.0..=2f64.powi(62)).contains(&n) && n.fract() == 0.0 && (n as u64).is_power_of_two() => {
            (n as u64).trailing_zeros() as u8
        }
        Some(n) => return Err(arg(format!("scrypt cost N must be a power of two > 1, got {n}"))),
    };
    let p = tk::ScryptParams {
        log_n,
        r: args::u32_field(&options, "blockSize")?.unwrap_or(d.r),
        p: args::u32_field(&options, "parallelization")?.unwrap_or(d.p),
    };
    derive(PasswordKdf::Scrypt(p), password, salt, &options)
}

/// HKDF (RFC 5869): `length` bytes (1..=255 × hash length). `hash`: 'sha256' (default) or 'sha512'.
#[wasm_bindgen(js_name = kdfHkdf)]
pub fn kdf_hkdf(
    ikm: JsValue,
    salt: JsValue,
    info: JsValue,
    length: u32,
    hash: Option<String>,
) -> Result<js_sys::Uint8Array, JsValue> {
    let ikm = Zeroizing::new(bytes(&ikm, "ikm")?);
    let out = tk::hkdf(
        hash_fn(hash.as_deref())?,
        &ikm,
        &bytes(&salt, "salt")?,
        &bytes(&info, "info")?,
        length as usize,
    );
    Ok(secret(out.map_err(fail_kit)?))
}

/// AEAD with a fresh random nonce: `nonce ‖ ciphertext ‖ tag`. `algo`: 'aes-128-gcm',
/// 'aes-256-gcm', 'chacha20-poly1305', 'xchacha20-poly1305', 'aes-256-gcm-siv', 'sm4-ccm'.
#[wasm_bindgen(js_name = aeadSeal)]
pub fn aead_seal(algo: String, key: &[u8], plaintext: JsValue, aad: JsValue) -> Result<Vec<u8>, JsValue> {
    let alg = aead::Algorithm::parse(&algo).map_err(fail_kit)?;
    let key = aead::Key::new(alg, key).map_err(fail_kit)?;
    let aad = opt_bytes(&aad, "aad")?;
    // A Uint8Array is copied once, straight into its place in the output (not into a Vec that
    // `seal` would copy again): a third fewer passes over a large message.
    let (n, body) = match plaintext.dyn_ref::<js_sys::Uint8Array>() {
        Some(a) => (alg.nonce_len(), a.length() as usize),
        None => {
            let p = Zeroizing::new(bytes(&plaintext, "plaintext")?);
            return key.seal(&p, &aad).map_err(fail_kit);
        }
    };
    let mut out = vec![0u8; n + body + aead::TAG_LEN];
    plaintext.unchecked_ref::<js_sys::Uint8Array>().copy_to(&mut out[n..n + body]);
    key.seal_in_place(&mut out, &aad).map_err(fail_kit)?;
    Ok(out)
}

/// `aeadSeal` written into `out`, an array the caller owns and may reuse (at least nonce +
/// plaintext + 16 bytes); returns how many bytes were written. What it saves is fresh memory:
/// a new 16 MB result array's pages cost about a third of `aeadSeal`'s time in Chromium
/// (first-touch faults), and the message is sealed in a WebAssembly buffer kept between calls
/// (up to `SCRATCH_MAX`) instead of a new zeroed one. The buffer holds the plaintext only while
/// it is sealed in place; a failed seal wipes it.
#[wasm_bindgen(js_name = aeadSealInto)]
pub fn aead_seal_into(
    algo: String,
    key: &[u8],
    plaintext: JsValue,
    out: &js_sys::Uint8Array,
    aad: JsValue,
) -> Result<f64, JsValue> {
    let Some(data) = plaintext.dyn_ref::<js_sys::Uint8Array>() else {
        let sealed = aead_seal(algo, key, plaintext, aad)?;
        return place(&sealed, out);
    };
    let alg = aead::Algorithm::parse(&algo).map_err(fail_kit)?;
    let key = aead::Key::new(alg, key).map_err(fail_kit)?;
    let aad = opt_bytes(&aad, "aad")?;
    let (n, body) = (alg.nonce_len(), data.length() as usize);
    let total = n + body + aead::TAG_LEN;
    if (out.length() as usize) < total {
        return Err(too_short(out, total));
    }
    SCRATCH.with_borrow_mut(|buf| {
        if buf.len() < total {
            *buf = vec![0; total];
        }
        let sealing = &mut buf[..total];
        data.copy_to(&mut sealing[n..n + body]);
        let sealed = key.seal_in_place(sealing, &aad).map_err(fail_kit);
        match sealed {
            Ok(()) => out.subarray(0, total as u32).copy_from(sealing),
            Err(_) => hyperseal::wipe(sealing),
        }
        if buf.len() > SCRATCH_MAX {
            *buf = Vec::new();
        }
        sealed.map(|()| total as f64)
    })
}

/// The largest buffer `aeadSealInto` keeps between calls (WebAssembly memory never shrinks, so
/// a larger one is dropped for the allocator to reuse rather than held by this function).
const SCRATCH_MAX: usize = 64 << 20;

thread_local! {
    /// `aeadSealInto`'s sealing buffer: ciphertext between calls, never plaintext.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `sealed` copied into the start of `out`, if it fits; its length.
fn place(sealed: &[u8], out: &js_sys::Uint8Array) -> Result<f64, JsValue> {
    if (out.length() as usize) < sealed.len() {
        return Err(too_short(out, sealed.len()));
    }
    out.subarray(0, sealed.len() as u32).copy_from(sealed);
    Ok(sealed.len() as f64)
}

fn too_short(out: &js_sys::Uint8Array, need: usize) -> JsValue {
    arg(format!("the output array holds {} bytes, the sealed message needs {need}", out.length()))
}

/// Opens what `aeadSeal` made; a wrong key, AAD or any changed byte fails with `ERR_HYPERSEAL_AUTH`.
#[wasm_bindgen(js_name = aeadOpen)]
pub fn aead_open(
    algo: String,
    key: &[u8],
    sealed: &[u8],
    aad: JsValue,
) -> Result<js_sys::Uint8Array, JsValue> {
    let alg = aead::Algorithm::parse(&algo).map_err(fail_kit)?;
    Ok(secret(aead::open(alg, key, sealed, &opt_bytes(&aad, "aad")?).map_err(fail_kit)?))
}

/// A random key of the right length for `algo`.
#[wasm_bindgen(js_name = aeadGenerateKey)]
pub fn aead_generate_key(algo: String) -> Result<js_sys::Uint8Array, JsValue> {
    Ok(secret(aead::generate_key(aead::Algorithm::parse(&algo).map_err(fail_kit)?)))
}

// ── tokens ────────────────────────────────────────────────────────────────────────────────

thread_local! {
    /// Parsed key rings (the library's `KeyCache`: no key text kept, constant-time lookups):
    /// parsing a key line derives keys and expands two AEAD key schedules, more than sealing a
    /// 1 KB token takes.
    static RINGS: KeyCache<Rc<KeyRing>> = const { KeyCache::new() };
}

fn ring(text: &str) -> Result<Rc<KeyRing>, JsValue> {
    if text.trim().is_empty() {
        return Err(error(hyperseal::ErrorCode::Key, "invalid token key: empty"));
    }
    RINGS.with(|rings| {
        rings.get_or_parse(text, || Ok(Rc::new(KeyRing::from_key_file(text).map_err(fail_kit)?)))
    })
}

/// The page's clock (`std::time::SystemTime::now` does not exist on wasm32-unknown-unknown).
fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(js_sys::Date::now() as u64)
}

/// A new token key line `HYPERSEAL-TOKEN-KEY-1…` (as `hyperseal token` reads). Keep it secret.
#[wasm_bindgen(js_name = tokenGenerateKey)]
pub fn token_generate_key() -> String {
    tt::TokenKey::generate().to_key_file().trim_end().to_owned()
}

/// Seals into a base64url token; `aad` is bound to it, `ttlSeconds` adds an expiry. `key` is
/// a key line, or a key file whose first key seals.
#[wasm_bindgen(js_name = tokenSeal)]
pub fn token_seal(
    key: String,
    plaintext: JsValue,
    aad: JsValue,
    ttl_seconds: Option<f64>,
) -> Result<String, JsValue> {
    let key = Zeroizing::new(key);
    let ttl = match ttl_seconds {
        None => None,
        Some(s) if s > 0.0 && s.is_finite() => {
            Some(Duration::try_from_secs_f64(s).map_err(|_| arg("ttlSeconds is out of range"))?)
        }
        Some(_) => return Err(arg("ttlSeconds must be a positive number")),
    };
    let ring = ring(&key)?;
    let primary = ring.primary().ok_or_else(|| error(hyperseal::ErrorCode::Key, "no token key"))?;
    let plaintext = Zeroizing::new(bytes(&plaintext, "plaintext")?);
    Ok(tt::seal_at(primary, &plaintext, &opt_bytes(&aad, "aad")?, ttl, now()))
}

/// Opens a token with any of the keys (a key line, a list, or a key file).
#[wasm_bindgen(js_name = tokenOpen)]
pub fn token_open(keys: JsValue, token: String, aad: JsValue) -> Result<js_sys::Uint8Array, JsValue> {
    let list = Zeroizing::new(args::strings(&keys, "keys")?);
    if list.is_empty() {
        return Err(error(hyperseal::ErrorCode::Key, "give at least one token key"));
    }
    let ring = ring(&Zeroizing::new(list.join("\n")))?;
    Ok(secret(tt::open_at(&ring, &token, &opt_bytes(&aad, "aad")?, now()).map_err(fail_token)?))
}
