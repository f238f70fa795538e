//! The one-shot `encrypt`/`decrypt` of a hyperseal or age file held in memory, over the
//! library's `Encryptor::encrypt_into` (straight into the result, every core), `hyperseal::armored`
//! and `Decryptor::from_slice(..).decrypt_into`. Only argument conversion happens here.

use hyperseal::Decryptor;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::{bytes_with, Input};
use crate::errors::IntoPy;
use crate::keys::{identities_of, options_of, To};

/// Encrypts `data` as one file; see `hyperseal.encrypt` in the stubs for the arguments.
#[pyfunction]
#[pyo3(signature = (data, recipients = None, *, passphrase = None, format = "hyperseal", suite = None, armor = false, threads = 0, allow_plugins = false))]
#[allow(clippy::too_many_arguments)]
pub fn encrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    recipients: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    format: &str,
    suite: Option<&str>,
    armor: bool,
    threads: usize,
    allow_plugins: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let opts = options_of(format, suite)?;
    let profile = opts.profile;
    let to = To::of(recipients, passphrase, allow_plugins)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    // Wrapping the file key takes a KEM encapsulation, or Argon2id/scrypt for a passphrase.
    let enc = py.detach(|| to.encryptor(opts)).py_err()?.threads(threads);
    if armor {
        let file = py
            .detach(|| {
                let mut w = hyperseal::armored(Vec::new(), profile);
                enc.encrypt_slice(d, &mut w, None)?;
                Ok::<_, hyperseal::Error>(w.finish()?)
            })
            .py_err()?;
        return Ok(PyBytes::new(py, &file));
    }
    let len = enc.encrypted_len(d.len());
    bytes_with(py, len, |out| enc.encrypt_into(d, out).map(|()| len))?.py_err()
}

/// Decrypts a whole file (binary or armored); nothing is returned unless every chunk
/// authenticated. See `hyperseal.decrypt` in the stubs.
#[pyfunction]
#[pyo3(signature = (data, identities = None, *, passphrase = None, threads = 0, allow_plugins = false))]
pub fn decrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    identities: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    threads: usize,
    allow_plugins: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let ids = identities_of(identities, passphrase, allow_plugins)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    let dec = Decryptor::from_slice(d).py_err()?.threads(threads);
    // The plaintext length from the header and the file length (unauthenticated, so only a
    // size: decryption proves it), so the result is decrypted straight into its `bytes`, with
    // no second copy and no zeroizing pass over a scratch buffer. Armored or malformed input
    // gets `file.len()` bytes, which always hold the plaintext, and a truncating copy.
    let exact = (!dec.is_armored())
        .then(|| d.len().checked_sub(dec.header().encode_len() + PAYLOAD_NONCE))
        .flatten()
        .and_then(|payload| dec.header().payload_shape(payload as u64))
        .map(|(_, plain)| plain as usize);
    // Unauthenticated bytes never reach Python: a failed fill is zeroized (`bytes_with`).
    bytes_with(py, exact.unwrap_or(d.len()), |out| dec.decrypt_into(&ids, out))?.py_err()
}

/// The salt (hyperseal) or nonce (age) between the header and the first chunk.
const PAYLOAD_NONCE: usize = 16;
