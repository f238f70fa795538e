//! Bindings of the `hyperseal-toolkit` crate: hashes, HMAC and KDFs here; AEAD, hazmat and
//! batches in `toolkit/cipher.rs`; signatures, RSA-OAEP and tokens in `toolkit/keys.rs`.
//!
//! Conventions:
//! - errors go through `crate::errors::Fail` (`From<hyperseal_toolkit::Error>` in `errors.rs`
//!   is the one place where toolkit errors become JS `code`s);
//! - slow work (file hashing, password KDFs, batches) runs as an `AsyncTask` on the libuv pool;
//! - JS-side namespaces (`token.seal`) are assembled in `index.js` from these flat native
//!   exports (`tokenSeal`), so the generated `index.d.ts` stays flat and documented.

mod cipher;
mod keys;

use hyperseal_toolkit::{hash as th, kdf as tk, mac as tm};
use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, Either};
use napi::{Env, Task};
use napi_derive::napi;
use zeroize::Zeroizing;

use crate::buffers::{bytes, to_js};
use crate::errors::{Fail, JsErr};

/// Bytes or a UTF-8 string, as JS passes them to synchronous calls.
pub(crate) type Input<'a> = Either<&'a [u8], String>;

/// An owned, zeroized copy of a (usually small, often secret) input for async work.
pub(crate) fn owned(data: &Input) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(bytes(data).to_vec())
}

pub(crate) fn opt_bytes<'a>(data: &'a Option<Input>) -> &'a [u8] {
    data.as_ref().map(bytes).unwrap_or(&[])
}

/// Moves bytes out of their zeroizing wrapper without a copy: they are handed to JS anyway.
pub(crate) fn take(mut z: Zeroizing<Vec<u8>>) -> Vec<u8> {
    std::mem::take(&mut *z)
}

type Work = Box<dyn FnOnce() -> Result<Vec<u8>, Fail> + Send>;

/// A closure run on the libuv pool, resolving to a Buffer. A panic in it becomes a rejected
/// promise instead of taking the process down from a pool thread.
pub struct BytesTask(Option<Work>);

impl BytesTask {
    pub(crate) fn run(f: impl FnOnce() -> Result<Vec<u8>, Fail> + Send + 'static) -> AsyncTask<BytesTask> {
        AsyncTask::new(BytesTask(Some(Box::new(f))))
    }
}

pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, Fail>) -> Result<T, Fail> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(Fail::new(
            crate::errors::Code(hyperseal::ErrorCode::Argument),
            "internal error (panic) in hyperseal",
        ))
    })
}

impl Task for BytesTask {
    type Output = Result<Vec<u8>, Fail>;
    type JsValue = Buffer;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(match self.0.take() {
            Some(f) => guarded(f),
            None => Err(Fail::arg("task already ran")),
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Buffer> {
        output.map(Buffer::from).map_err(|f| f.into_rejection(&env))
    }
}

// ── hash ─────────────────────────────────────────────────────────────────────────────────

/// Digest of `data` (Buffer, Uint8Array or UTF-8 string). `algo`: 'sha256', 'sha384',
/// 'sha512', 'sha3-256', 'sha3-512', 'blake2b512', 'blake3', 'sm3', 'legacy-md5',
/// 'legacy-sha1' (the legacy ones are collision-broken; bare 'md5'/'sha1' are refused).
#[napi(ts_return_type = "Buffer")]
pub fn hash<'e>(env: &'e Env, algo: String, data: Either<&[u8], String>) -> Result<BufferSlice<'e>, JsErr> {
    let alg = th::Algorithm::parse(&algo).map_err(Fail::from)?;
    Ok(to_js(env, th::hash(alg, bytes(&data)))?)
}

/// Digest of a file, read on the libuv pool (BLAKE3 hashes large files on all cores).
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn hash_file(algo: String, path: String) -> AsyncTask<BytesTask> {
    BytesTask::run(move || {
        let alg = th::Algorithm::parse(&algo)?;
        Ok(th::hash_file(alg, &path)?)
    })
}

// ── HMAC ─────────────────────────────────────────────────────────────────────────────────

/// Accepts the toolkit's names ('hmac-sha256', 'legacy-hmac-sha1') and the hash names
/// ('sha256', 'legacy-sha1').
fn mac_alg(algo: &str) -> Result<tm::Algorithm, Fail> {
    tm::Algorithm::parse_by_hash(algo).map_err(|e| Fail::arg(e.to_string()))
}

/// HMAC tag of `data` under `key`. `algo`: 'sha256', 'sha384', 'sha512', 'sha3-256',
/// 'sha3-512', 'blake2b512', 'sm3', 'legacy-sha1', 'legacy-md5' (or 'hmac-sha256', …).
#[napi(ts_return_type = "Buffer")]
pub fn hmac<'e>(
    env: &'e Env,
    algo: String,
    key: Either<&[u8], String>,
    data: Either<&[u8], String>,
) -> Result<BufferSlice<'e>, JsErr> {
    let alg = mac_alg(&algo)?;
    Ok(to_js(env, tm::sign(alg, bytes(&key), bytes(&data)))?)
}

/// Whether `tag` is the HMAC of `data` under `key`, compared in constant time (in Rust).
/// A tag of the wrong length is simply `false`.
#[napi]
pub fn hmac_verify(
    algo: String,
    key: Either<&[u8], String>,
    data: Either<&[u8], String>,
    tag: &[u8],
) -> Result<bool, JsErr> {
    let alg = mac_alg(&algo)?;
    Ok(tm::verify(alg, bytes(&key), bytes(&data), tag).is_ok())
}

// ── KDFs ─────────────────────────────────────────────────────────────────────────────────

const DEFAULT_KDF_LEN: u32 = 32;

fn hash_fn(name: Option<&str>) -> Result<tk::HashFn, Fail> {
    match name.map(str::to_ascii_lowercase).as_deref() {
        None | Some("sha256") | Some("sha-256") => Ok(tk::HashFn::Sha256),
        Some("sha512") | Some("sha-512") => Ok(tk::HashFn::Sha512),
        Some(other) => Err(Fail::arg(format!("unknown KDF hash {other:?} (expected sha256 or sha512)"))),
    }
}

fn derive(kdf: tk::PasswordKdf, password: &Input, salt: &Input, len: Option<u32>) -> AsyncTask<BytesTask> {
    let (password, salt) = (owned(password), owned(salt));
    let len = len.unwrap_or(DEFAULT_KDF_LEN) as usize;
    BytesTask::run(move || {
        let out = kdf.derive(&password, &salt, len)?;
        Ok(take(out))
    })
}

/// Options of {@link kdfPbkdf2}.
#[napi(object)]
#[derive(Default)]
pub struct Pbkdf2Options {
    /// Iterations (default 600000, at most 10000000).
    pub iterations: Option<u32>,
    /// 'sha256' (default) or 'sha512'.
    pub hash: Option<String>,
    /// Output bytes, 1–1024 (default 32).
    pub length: Option<u32>,
}

/// PBKDF2-HMAC on the libuv pool. The salt must be at least 8 bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn kdf_pbkdf2(
    password: Either<&[u8], String>,
    salt: Either<&[u8], String>,
    options: Option<Pbkdf2Options>,
) -> Result<AsyncTask<BytesTask>, JsErr> {
    let o = options.unwrap_or_default();
    let d = tk::Pbkdf2Params::default();
    let p = tk::Pbkdf2Params {
        hash: hash_fn(o.hash.as_deref())?,
        iterations: o.iterations.unwrap_or(d.iterations),
    };
    Ok(derive(tk::PasswordKdf::Pbkdf2(p), &password, &salt, o.length))
}

/// Options of {@link kdfArgon2id}.
#[napi(object)]
#[derive(Default)]
pub struct Argon2Options {
    /// Memory in KiB (default 19456, i.e. 19 MiB).
    pub memory_kib: Option<u32>,
    /// Passes (default 2).
    pub time_cost: Option<u32>,
    /// Lanes (default 1).
    pub parallelism: Option<u32>,
    /// Output bytes, 1–1024 (default 32).
    pub length: Option<u32>,
}

/// Argon2id (v1.3) on the libuv pool. The salt must be at least 8 bytes.
#[napi(js_name = "kdfArgon2id", ts_return_type = "Promise<Buffer>")]
pub fn kdf_argon2id(
    password: Either<&[u8], String>,
    salt: Either<&[u8], String>,
    options: Option<Argon2Options>,
) -> AsyncTask<BytesTask> {
    let o = options.unwrap_or_default();
    let d = tk::Argon2Params::default();
    let p = tk::Argon2Params {
        m_cost_kib: o.memory_kib.unwrap_or(d.m_cost_kib),
        t_cost: o.time_cost.unwrap_or(d.t_cost),
        p_cost: o.parallelism.unwrap_or(d.p_cost),
    };
    derive(tk::PasswordKdf::Argon2id(p), &password, &salt, o.length)
}

/// Options of {@link kdfScrypt} (`kdf.scrypt` also accepts Node's `N` / `cost`).
#[napi(object)]
#[derive(Default)]
pub struct ScryptOptions {
    /// CPU/memory cost N, a power of two (default 131072 = 2^17). Same as Node's `N`.
    pub cost: Option<f64>,
    /// Block size r (default 8).
    pub block_size: Option<u32>,
    /// Parallelism p (default 1).
    pub parallelization: Option<u32>,
    /// Output bytes, 1–1024 (default 32).
    pub length: Option<u32>,
}

/// scrypt on the libuv pool. The salt must be at least 8 bytes; memory is capped at 4 GiB.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn kdf_scrypt(
    password: Either<&[u8], String>,
    salt: Either<&[u8], String>,
    options: Option<ScryptOptions>,
) -> Result<AsyncTask<BytesTask>, JsErr> {
    let o = options.unwrap_or_default();
    let d = tk::ScryptParams::default();
    let log_n = match o.cost {
        None => d.log_n,
        Some(n) if n >= 2.0 && n <= 2f64.powi(62) && n.fract() == 0.0 && (n as u64).is_power_of_two() => {
            (n as u64).trailing_zeros() as u8
        }
        Some(n) => return Err(Fail::arg(format!("scrypt cost N must be a power of two > 1, got {n}")).into()),
    };
    let p = tk::ScryptParams { log_n, r: o.block_size.unwrap_or(d.r), p: o.parallelization.unwrap_or(d.p) };
    Ok(derive(tk::PasswordKdf::Scrypt(p), &password, &salt, o.length))
}

/// HKDF (RFC 5869) extract-and-expand: `length` bytes (1..=255×hash length) from input key
/// material. `hash`: 'sha256' (default) or 'sha512'. Fast: synchronous.
#[napi(ts_return_type = "Buffer")]
pub fn kdf_hkdf<'e>(
    env: &'e Env,
    ikm: Either<&[u8], String>,
    salt: Either<&[u8], String>,
    info: Either<&[u8], String>,
    length: u32,
    hash: Option<String>,
) -> Result<BufferSlice<'e>, JsErr> {
    let h = hash_fn(hash.as_deref())?;
    let out = tk::hkdf(h, bytes(&ikm), bytes(&salt), bytes(&info), length as usize).map_err(Fail::from)?;
    Ok(to_js(env, take(out))?)
}
