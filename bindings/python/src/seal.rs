//! The one-shot `encrypt`/`decrypt` of a hyperseal or age file held in memory, over the
//! library's `Encryptor::encrypt_into` (straight into the result, every core), `hyperseal::armored`
//! and `Decryptor::from_slice(..).decrypt_into`. Only argument conversion happens here.

use hyperseal::Decryptor;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::buffers::{bytes_with, Input};
use crate::errors::IntoPy;
use crate::keys::{identities_of, options_of, To};

/// Encrypts `data` as one file; see `hyperseal.encrypt` in the stubs for the arguments.
#[pyfunction]
#[pyo3(signature = (data, recipients = None, *, passphrase = None, format = "hyperseal", suite = None, armor = false, threads = 0))]
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
) -> PyResult<Bound<'py, PyBytes>> {
    let opts = options_of(format, suite)?;
    let profile = opts.profile;
    let to = To::of(recipients, passphrase)?;
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
#[pyo3(signature = (data, identities = None, *, passphrase = None, threads = 0))]
pub fn decrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    identities: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    threads: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let ids = identities_of(identities, passphrase)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    let plain = py
        .detach(|| {
            // `file.len()` bytes always hold the plaintext; unauthenticated bytes are zeroized.
            let mut out = Zeroizing::new(hyperseal::output_buffer(d.len()));
            let n = Decryptor::from_slice(d)?.threads(threads).decrypt_into(&ids, &mut out)?;
            out.truncate(n);
            Ok::<_, hyperseal::Error>(out)
        })
        .py_err()?;
    Ok(PyBytes::new(py, &plain))
}
