//! Detached headers (`hyperseal.header`), over the library's `detached` module: `header_extract`
//! (age's `ExtractHeader`) and `header_decrypt` (age's `DecryptHeader`), which gives a `FileKey`:
//! an identity every decrypt function takes (age's `NewInjectedFileKeyIdentity`), so it lives
//! with the other identities in `keys.rs`. Only argument conversion happens here.

use std::path::PathBuf;

use hyperseal::detached;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::Input;
use crate::errors::IntoPy;
use crate::keys::{identities_of, FileKey};

/// The header of a file (bytes-like: the file or its start; or a path: only the header is
/// read), byte for byte as age's `ExtractHeader` gives it. Armored files are refused, as age
/// refuses them.
#[pyfunction]
pub fn header_extract<'py>(py: Python<'py>, file: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let header = if let Ok(path) = file.extract::<PathBuf>() {
        let f = crate::files::open_input(&path)?;
        py.detach(|| detached::extract_header(f)).py_err()?
    } else {
        let input = Input::get(file, "file")?;
        let d = input.as_slice();
        py.detach(|| detached::extract_header(d)).py_err()?
    };
    Ok(PyBytes::new(py, &header))
}

/// The file key of a detached `header` (bytes after it are ignored), opened with
/// `identities` and/or `passphrase` as `hyperseal.decrypt` takes them.
#[pyfunction]
#[pyo3(signature = (header, identities = None, *, passphrase = None, allow_plugins = false))]
pub fn header_decrypt(
    py: Python<'_>,
    header: &Bound<'_, PyAny>,
    identities: Option<&Bound<'_, PyAny>>,
    passphrase: Option<&Bound<'_, PyAny>>,
    allow_plugins: bool,
) -> PyResult<FileKey> {
    let ids = identities_of(identities, passphrase, allow_plugins)?;
    let input = Input::get(header, "header")?;
    let h = input.as_slice();
    // Unwrapping runs a KEM decapsulation, scrypt or Argon2id: other threads run meanwhile.
    let key = py.detach(|| detached::decrypt_header(h, &ids)).py_err()?;
    Ok(FileKey::from_key(key))
}
