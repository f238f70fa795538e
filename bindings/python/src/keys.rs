//! Keys and the one-shot `encrypt`/`decrypt` of hyperseal files, over the library's public
//! `hyperseal::{encrypt, decrypt}` and `hyperseal::recipient::{generate, parse_recipient,
//! parse_identities}`. Recipients and identities are given as the very strings the CLI prints
//! and reads (`age1…`, `age1pq1…`, `AGE-SECRET-KEY-…`, PEM), or as `Identity` objects.

use hyperseal::recipient::{self, Identity as LibIdentity, Kind, Recipient};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use zeroize::Zeroizing;

use crate::buffers::Input;
use crate::errors::{ArgumentError, IntoPy};

/// A key pair: `public` is the recipient string to encrypt to; `secret` the identity string
/// (an `AGE-SECRET-KEY-…` line or a PKCS#8 PEM). `repr()` never shows the secret.
#[pyclass(frozen, module = "hyperseal")]
pub struct Identity {
    secret: Zeroizing<String>,
    public: String,
}

#[pymethods]
impl Identity {
    /// Parses an identity string (as `hyperseal keygen` writes it).
    #[new]
    fn new(secret: &str) -> PyResult<Self> {
        let public = recipient::public_of(secret).py_err()?;
        Ok(Identity { secret: Zeroizing::new(secret.trim().to_string()), public })
    }

    #[getter]
    fn public(&self) -> &str {
        &self.public
    }

    #[getter]
    fn secret(&self) -> &str {
        &self.secret
    }

    fn __repr__(&self) -> String {
        format!("Identity(public={:?}, secret=<redacted>)", self.public)
    }
}

/// A new key pair. `kind`: "hybrid" (ML-KEM-768 + X25519, age v1.3's post-quantum keys; the
/// default), "x25519", "mlkem1024", "p256", "p256-mlkem768", "rsa3072" or "rsa4096".
#[pyfunction]
#[pyo3(signature = (kind = "hybrid"))]
pub fn generate_key(py: Python<'_>, kind: &str) -> PyResult<Identity> {
    let kind = Kind::from_name(kind).ok_or_else(|| {
        ArgumentError::new_err(format!(
            "unknown key kind {kind:?}: hybrid, x25519, mlkem1024, p256, p256-mlkem768, rsa3072 or rsa4096"
        ))
    })?;
    // RSA key generation takes a while: let other threads run.
    let k = py.detach(|| recipient::generate(kind)).py_err()?;
    Ok(Identity { secret: k.secret, public: k.public })
}

/// One item or a list/tuple of them.
fn items<'py>(obj: &Bound<'py, PyAny>) -> Vec<Bound<'py, PyAny>> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        obj.try_iter().map(|it| it.filter_map(Result::ok).collect()).unwrap_or_default()
    } else {
        vec![obj.clone()]
    }
}

fn recipients_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Box<dyn Recipient>>> {
    let mut out = Vec::new();
    for item in items(obj) {
        if let Ok(id) = item.cast::<Identity>() {
            out.push(recipient::parse_recipient(&id.get().public).py_err()?);
        } else if let Ok(s) = item.cast::<PyString>() {
            out.extend(recipient::parse_recipients_file(s.to_str()?).py_err()?);
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "recipients must be str, Identity, or a list of them",
            ));
        }
    }
    if out.is_empty() {
        return Err(ArgumentError::new_err("no recipients"));
    }
    Ok(out)
}

fn identities_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Box<dyn LibIdentity>>> {
    let mut out = Vec::new();
    for item in items(obj) {
        if let Ok(id) = item.cast::<Identity>() {
            out.extend(recipient::parse_identities(&id.get().secret).py_err()?);
        } else if let Ok(s) = item.cast::<PyString>() {
            let text = Zeroizing::new(s.to_str()?.to_string());
            out.extend(recipient::parse_identities(&text).py_err()?);
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "identities must be str, Identity, or a list of them",
            ));
        }
    }
    if out.is_empty() {
        return Err(ArgumentError::new_err("no identities"));
    }
    Ok(out)
}

/// Encrypts `data` to `recipients` (a string, an `Identity`, or a list of them; a string may
/// hold several recipients, one per line) as a hyperseal file, on every core.
#[pyfunction]
pub fn encrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    recipients: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let r = recipients_of(recipients)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    let sealed = py.detach(|| hyperseal::encrypt(&r, d)).py_err()?;
    Ok(PyBytes::new(py, &sealed))
}

/// Decrypts a hyperseal or age file (armored or not) with `identities` (a string such as an
/// identity file's contents, an `Identity`, or a list of them). Returns nothing unless the
/// whole file authenticates.
#[pyfunction]
pub fn decrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    identities: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let ids = identities_of(identities)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    let plain = Zeroizing::new(py.detach(|| hyperseal::decrypt(&ids, d)).py_err()?);
    Ok(PyBytes::new(py, &plain))
}
