//! The toolkit's hashes, HMAC, KDFs and one-shot AEADs (`hyperseal-toolkit`), under the names
//! and semantics of the Node package (`bindings/node/src/toolkit.rs`): `hash`, `hash_file`,
//! `hmac`, `hmac_verify`, `kdf_*` (exported as `hyperseal.kdf.*`) and `aead_*`
//! (`hyperseal.aead.*`). Data, keys and passwords may be bytes-like or `str` (UTF-8).
//!
//! The GIL is released for inputs of `DETACH_AT` bytes and more, and always for the password
//! KDFs and file hashing. Not below: a released GIL is re-taken only after the thread holding it
//! reaches its switch interval (5 ms by default), so releasing it around a microsecond of work
//! can cost a multithreaded program milliseconds.

use hyperseal_toolkit::{aead, hash as th, kdf as tk, mac as tm};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::{bytes_filled, or_empty, Data, Input};
use crate::errors::{toolkit_error, ArgumentError};

/// Inputs from this size on are processed with the GIL released.
pub const DETACH_AT: usize = 16 << 10;

/// Runs `f` with the GIL released if `len` is large enough to be worth it.
pub fn run<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= DETACH_AT {
        py.detach(f)
    } else {
        f()
    }
}

// ── hash and HMAC ────────────────────────────────────────────────────────────────────────

/// Digest of `data`; see `hyperseal.hash` in the stubs.
#[pyfunction]
#[pyo3(signature = (algo, data))]
pub fn hash<'py>(py: Python<'py>, algo: &str, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let alg = th::Algorithm::parse(algo).map_err(toolkit_error)?;
    let d = Data::get(data, "data")?;
    let d = d.as_slice()?;
    Ok(PyBytes::new(py, &run(py, d.len(), || th::hash(alg, d))))
}

/// Digest of a file (BLAKE3 on every core for large files).
#[pyfunction]
#[pyo3(signature = (algo, path))]
pub fn hash_file<'py>(
    py: Python<'py>,
    algo: &str,
    path: std::path::PathBuf,
) -> PyResult<Bound<'py, PyBytes>> {
    let alg = th::Algorithm::parse(algo).map_err(toolkit_error)?;
    let digest = py.detach(|| th::hash_file(alg, &path)).map_err(|e| match e {
        hyperseal_toolkit::Error::Io(io) => crate::errors::io_error(format!("{}: {io}", path.display())),
        e => toolkit_error(e),
    })?;
    Ok(PyBytes::new(py, &digest))
}

/// Accepts the toolkit's names (`hmac-sha256`, `legacy-hmac-sha1`) and the hash names
/// (`sha256`, `legacy-sha1`), as Node does.
fn mac_alg(algo: &str) -> PyResult<tm::Algorithm> {
    tm::Algorithm::parse_by_hash(algo).map_err(|e| ArgumentError::new_err(e.to_string()))
}

/// HMAC tag of `data` under `key`.
#[pyfunction]
#[pyo3(signature = (algo, key, data))]
pub fn hmac<'py>(
    py: Python<'py>,
    algo: &str,
    key: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let alg = mac_alg(algo)?;
    let (k, d) = (Data::get(key, "key")?, Data::get(data, "data")?);
    let (k, d) = (k.as_slice()?, d.as_slice()?);
    Ok(PyBytes::new(py, &run(py, d.len(), || tm::sign(alg, k, d))))
}

/// Whether `tag` is the HMAC of `data` under `key` (constant-time compare in Rust).
#[pyfunction]
#[pyo3(signature = (algo, key, data, tag))]
pub fn hmac_verify(
    py: Python<'_>,
    algo: &str,
    key: &Bound<'_, PyAny>,
    data: &Bound<'_, PyAny>,
    tag: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let alg = mac_alg(algo)?;
    let (k, d, t) = (Data::get(key, "key")?, Data::get(data, "data")?, Input::get(tag, "tag")?);
    let (k, d, t) = (k.as_slice()?, d.as_slice()?, t.as_slice());
    Ok(run(py, d.len(), || tm::verify(alg, k, d, t).is_ok()))
}

// ── KDFs ─────────────────────────────────────────────────────────────────────────────────

fn hash_fn(name: &str) -> PyResult<tk::HashFn> {
    match name.to_ascii_lowercase().as_str() {
        "sha256" | "sha-256" => Ok(tk::HashFn::Sha256),
        "sha512" | "sha-512" => Ok(tk::HashFn::Sha512),
        other => {
            Err(ArgumentError::new_err(format!("unknown KDF hash {other:?} (expected sha256 or sha512)")))
        }
    }
}

/// A password KDF, always with the GIL released (they take tens to hundreds of milliseconds).
fn derive<'py>(
    py: Python<'py>,
    kdf: tk::PasswordKdf,
    password: &Bound<'py, PyAny>,
    salt: &Bound<'py, PyAny>,
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let (p, s) = (Data::get(password, "password")?, Data::get(salt, "salt")?);
    let (p, s) = (p.as_slice()?, s.as_slice()?);
    let out = py.detach(|| kdf.derive(p, s, length)).map_err(toolkit_error)?;
    Ok(PyBytes::new(py, &out))
}

/// PBKDF2-HMAC; see `hyperseal.kdf.pbkdf2`.
#[pyfunction]
#[pyo3(signature = (password, salt, *, iterations = 600_000, hash = "sha256", length = 32))]
pub fn kdf_pbkdf2<'py>(
    py: Python<'py>,
    password: &Bound<'py, PyAny>,
    salt: &Bound<'py, PyAny>,
    iterations: u32,
    hash: &str,
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let p = tk::Pbkdf2Params { hash: hash_fn(hash)?, iterations };
    derive(py, tk::PasswordKdf::Pbkdf2(p), password, salt, length)
}

/// Argon2id (v1.3); see `hyperseal.kdf.argon2id`.
#[pyfunction]
#[pyo3(signature = (password, salt, *, memory_kib = 19_456, time_cost = 2, parallelism = 1, length = 32))]
pub fn kdf_argon2id<'py>(
    py: Python<'py>,
    password: &Bound<'py, PyAny>,
    salt: &Bound<'py, PyAny>,
    memory_kib: u32,
    time_cost: u32,
    parallelism: u32,
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let p = tk::Argon2Params { m_cost_kib: memory_kib, t_cost: time_cost, p_cost: parallelism };
    derive(py, tk::PasswordKdf::Argon2id(p), password, salt, length)
}

/// scrypt; see `hyperseal.kdf.scrypt`.
#[pyfunction]
#[pyo3(signature = (password, salt, *, cost = 131_072, block_size = 8, parallelization = 1, length = 32))]
pub fn kdf_scrypt<'py>(
    py: Python<'py>,
    password: &Bound<'py, PyAny>,
    salt: &Bound<'py, PyAny>,
    cost: u64,
    block_size: u32,
    parallelization: u32,
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    if cost < 2 || !cost.is_power_of_two() {
        return Err(ArgumentError::new_err(format!("scrypt cost N must be a power of two > 1, got {cost}")));
    }
    let p = tk::ScryptParams { log_n: cost.trailing_zeros() as u8, r: block_size, p: parallelization };
    derive(py, tk::PasswordKdf::Scrypt(p), password, salt, length)
}

/// HKDF (RFC 5869) extract-and-expand; see `hyperseal.kdf.hkdf`.
#[pyfunction]
#[pyo3(signature = (ikm, salt, info, length, *, hash = "sha256"))]
pub fn kdf_hkdf<'py>(
    py: Python<'py>,
    ikm: &Bound<'py, PyAny>,
    salt: &Bound<'py, PyAny>,
    info: &Bound<'py, PyAny>,
    length: usize,
    hash: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let h = hash_fn(hash)?;
    let (i, s, n) = (Data::get(ikm, "ikm")?, Data::get(salt, "salt")?, Data::get(info, "info")?);
    let out = tk::hkdf(h, i.as_slice()?, s.as_slice()?, n.as_slice()?, length).map_err(toolkit_error)?;
    Ok(PyBytes::new(py, &out))
}

// ── AEAD one-shots ───────────────────────────────────────────────────────────────────────

fn aead_key(algo: &str, key: &Bound<'_, PyAny>) -> PyResult<aead::Key> {
    let alg = aead::Algorithm::parse(algo).map_err(toolkit_error)?;
    aead::Key::new(alg, Input::get(key, "key")?.as_slice()).map_err(toolkit_error)
}

/// `nonce ‖ ciphertext ‖ tag` with a fresh random nonce, sealed in place inside the result.
#[pyfunction]
#[pyo3(signature = (algo, key, plaintext, *, aad = None))]
pub fn aead_seal<'py>(
    py: Python<'py>,
    algo: &str,
    key: &Bound<'py, PyAny>,
    plaintext: &Bound<'py, PyAny>,
    aad: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let key = aead_key(algo, key)?;
    let (p, a) = (Data::get(plaintext, "plaintext")?, Data::opt(aad, "aad")?);
    let (p, a) = (p.as_slice()?, or_empty(&a)?);
    // The toolkit draws the nonce and frames nonce ‖ ciphertext ‖ tag (`seal_into`), sealing
    // straight from the input into the result: no copy of the plaintext first.
    let len = key.algorithm().nonce_len() + p.len() + aead::TAG_LEN;
    let sealed = bytes_filled(py, len, p.len() >= DETACH_AT, |buf| {
        key.seal_into(p, a, buf)?;
        Ok::<_, hyperseal_toolkit::Error>(buf.len())
    })?;
    sealed.map_err(toolkit_error)
}

/// Opens what `aead_seal` made into a new `bytes`; on a failure the result is zeroized and
/// `AuthenticationError` raised.
#[pyfunction]
#[pyo3(signature = (algo, key, sealed, *, aad = None))]
pub fn aead_open<'py>(
    py: Python<'py>,
    algo: &str,
    key: &Bound<'py, PyAny>,
    sealed: &Bound<'py, PyAny>,
    aad: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let key = aead_key(algo, key)?;
    let (s, a) = (Input::get(sealed, "sealed")?, Data::opt(aad, "aad")?);
    let (s, a) = (s.as_slice(), or_empty(&a)?);
    let (_, body, _) = key.split_sealed(s).map_err(toolkit_error)?;
    // Opened straight from the input into the result (`open_into`), which the toolkit wipes on
    // failure.
    let plain = bytes_filled(py, body.len(), body.len() >= DETACH_AT, |buf| {
        key.open_into(s, a, buf)?;
        Ok::<_, hyperseal_toolkit::Error>(buf.len())
    })?;
    plain.map_err(toolkit_error)
}

/// A fresh random key of the right length for `algo`.
#[pyfunction]
pub fn aead_generate_key<'py>(py: Python<'py>, algo: &str) -> PyResult<Bound<'py, PyBytes>> {
    let alg = aead::Algorithm::parse(algo).map_err(toolkit_error)?;
    Ok(PyBytes::new(py, &aead::generate_key(alg)))
}
