//! Signatures (PEM keys) and tokens from the toolkit, under the Node package's names and
//! semantics (`bindings/node/src/toolkit/keys.rs`): `sign_*` (exported as `hyperseal.sign.*`)
//! and `token_*` (`hyperseal.token.*`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyperseal_toolkit::sign::{self as ts, KeyKind, RsaPadding, SigningKey, VerifyingKey};
use hyperseal_toolkit::token::{self as tt, KeyRing};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::buffers::{or_empty, Data, Input};
use crate::errors::{coded, token as token_err, toolkit_error, ArgumentError};
use crate::toolkit::run;

// ── signatures ───────────────────────────────────────────────────────────────────────────

fn padding(p: Option<&str>) -> PyResult<RsaPadding> {
    Ok(p.map(RsaPadding::parse).transpose().map_err(toolkit_error)?.unwrap_or_default())
}

/// A new signing key pair as `(private PKCS#8 PEM, public SPKI PEM)`; `hyperseal.sign` wraps
/// it in a `KeyPair` whose repr hides the private key. RSA generation (seconds) and ML-DSA run
/// with the GIL released.
#[pyfunction]
#[pyo3(signature = (kind = "ed25519"))]
pub fn sign_generate_key_pair(py: Python<'_>, kind: &str) -> PyResult<(String, String)> {
    let kind = KeyKind::parse(kind).map_err(toolkit_error)?;
    py.detach(|| {
        let sk = SigningKey::generate(kind)?;
        Ok::<_, hyperseal_toolkit::Error>((sk.to_pkcs8_pem()?.to_string(), sk.verifying_key()?.to_pem()))
    })
    .map_err(toolkit_error)
}

/// Signs `data` with a PEM private key (PKCS#8, or OpenSSL's SEC1/PKCS#1 forms).
#[pyfunction]
#[pyo3(signature = (private_key, data, *, padding = None))]
pub fn sign_message<'py>(
    py: Python<'py>,
    private_key: &str,
    data: &Bound<'py, PyAny>,
    padding: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let pad = self::padding(padding)?;
    let d = Data::get(data, "data")?;
    let d = d.as_slice()?;
    // Parsing validates the key (RSA: hundreds of µs) and RSA/ML-DSA signing takes ~1 ms:
    // always without the GIL.
    let sig = py.detach(|| SigningKey::from_pem(private_key)?.sign_with(d, pad)).map_err(toolkit_error)?;
    Ok(PyBytes::new(py, &sig))
}

/// Whether `signature` is valid for `data` under the SPKI PEM public key. An unusable key
/// raises `InvalidKeyError`; a wrong signature is `False`.
#[pyfunction]
#[pyo3(signature = (public_key, data, signature, *, padding = None))]
pub fn sign_verify(
    py: Python<'_>,
    public_key: &str,
    data: &Bound<'_, PyAny>,
    signature: &Bound<'_, PyAny>,
    padding: Option<&str>,
) -> PyResult<bool> {
    let pad = self::padding(padding)?;
    let (d, s) = (Data::get(data, "data")?, Input::get(signature, "signature")?);
    let (d, s) = (d.as_slice()?, s.as_slice());
    let vk = VerifyingKey::from_pem(public_key).map_err(toolkit_error)?;
    Ok(run(py, d.len(), || vk.verify_with(d, s, pad).is_ok()))
}

/// The SPKI PEM public key of a PEM private signing key.
#[pyfunction]
pub fn sign_public_key_of(private_key: &str) -> PyResult<String> {
    ts::public_pem_from_private(private_key).map_err(toolkit_error)
}

// ── tokens ───────────────────────────────────────────────────────────────────────────────

/// Distinct key strings remembered, as in Node: parsing a key line derives three keys with
/// BLAKE3 and expands two AEAD key schedules, more than the AEAD itself on a 1 KB token.
const RING_SLOTS: usize = 16;

static RINGS: Mutex<Vec<(Zeroizing<String>, Arc<KeyRing>)>> = Mutex::new(Vec::new());

/// The parsed ring of a key line or key file, cached by its exact text (least recently used
/// evicted first).
fn ring(text: &str) -> PyResult<Arc<KeyRing>> {
    let lock = || RINGS.lock().unwrap_or_else(|p| p.into_inner());
    {
        let mut entries = lock();
        if let Some(i) = entries.iter().position(|(k, _)| k.as_str() == text) {
            let e = entries.remove(i);
            let hit = e.1.clone();
            entries.push(e);
            return Ok(hit);
        }
    }
    if text.trim().is_empty() {
        return Err(coded(hyperseal::ErrorCode::Key, "invalid token key: empty".into()));
    }
    let parsed = Arc::new(KeyRing::from_key_file(text).map_err(toolkit_error)?);
    let mut entries = lock();
    if entries.len() >= RING_SLOTS {
        entries.remove(0);
    }
    entries.push((Zeroizing::new(text.to_owned()), parsed.clone()));
    Ok(parsed)
}

/// A new random token key line, `HYPERSEAL-TOKEN-KEY-1…` (what `hyperseal token keygen` writes).
#[pyfunction]
pub fn token_generate_key() -> String {
    tt::TokenKey::generate().to_key_file().trim_end().to_owned()
}

/// Seals `plaintext` into a compact base64url token; see `hyperseal.token.seal`.
#[pyfunction]
#[pyo3(signature = (key, plaintext, *, aad = None, ttl_seconds = None))]
pub fn token_seal(
    py: Python<'_>,
    key: &str,
    plaintext: &Bound<'_, PyAny>,
    aad: Option<&Bound<'_, PyAny>>,
    ttl_seconds: Option<f64>,
) -> PyResult<String> {
    let ttl = match ttl_seconds {
        None => None,
        Some(s) if s > 0.0 && s.is_finite() => Some(
            Duration::try_from_secs_f64(s)
                .map_err(|_| ArgumentError::new_err("ttl_seconds is out of range"))?,
        ),
        Some(_) => return Err(ArgumentError::new_err("ttl_seconds must be a positive number")),
    };
    let ring = ring(key)?;
    let primary = ring.primary().ok_or_else(|| coded(hyperseal::ErrorCode::Key, "no token key".into()))?;
    let (p, a) = (Data::get(plaintext, "plaintext")?, Data::opt(aad, "aad")?);
    let (p, a) = (p.as_slice()?, or_empty(&a)?);
    Ok(run(py, p.len(), || tt::seal(primary, p, a, ttl)))
}

/// Opens a token with any of the given keys; see `hyperseal.token.open`.
#[pyfunction]
#[pyo3(signature = (keys, token, *, aad = None))]
pub fn token_open<'py>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    token: &str,
    aad: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let ring = match keys.extract::<String>() {
        Ok(k) => ring(&Zeroizing::new(k))?,
        Err(_) => {
            let list: Vec<String> = keys
                .extract()
                .map_err(|_| ArgumentError::new_err("keys must be a key line (str) or a list of them"))?;
            if list.is_empty() {
                return Err(coded(hyperseal::ErrorCode::Key, "give at least one token key".into()));
            }
            ring(&Zeroizing::new(list.join("\n")))?
        }
    };
    let a = Data::opt(aad, "aad")?;
    let a = or_empty(&a)?;
    let out = run(py, token.len(), || tt::open(&ring, token, a)).map_err(token_err)?;
    Ok(PyBytes::new(py, &out))
}
