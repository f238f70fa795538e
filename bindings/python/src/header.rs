//! Detached headers (`hyperseal.header`), over the library's `detached` module: `header_extract`
//! (age's `ExtractHeader`), `header_decrypt` (age's `DecryptHeader`) and `FileKey`, which every
//! decrypt function takes as an identity (age's `NewInjectedFileKeyIdentity`; see
//! `keys::identities_of`). Only argument conversion happens here.

use std::path::PathBuf;

use hyperseal::detached::{self, FileKeyIdentity};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::Input;
use crate::errors::{ArgumentError, IntoPy};
use crate::keys::identities_of;

/// A file key: it opens one file as well as any of its identities does. Zeroized when it is
/// freed; `repr()` never shows it. `expose()` copies it into a `bytes` (which Python cannot
/// zeroize): only to send it to where the payload is opened.
#[pyclass(frozen, module = "hyperseal.header")]
pub struct FileKey {
    key: hyperseal::FileKey,
}

impl FileKey {
    /// The identity of this key, for the decrypt functions.
    pub fn identity(&self) -> Box<dyn hyperseal::Identity> {
        Box::new(FileKeyIdentity::new(self.key.clone()))
    }
}

#[pymethods]
impl FileKey {
    /// A file key from its 16 (age) or 32 (hyperseal) bytes, as `expose()` gave them.
    #[new]
    fn new(key: &Bound<'_, PyAny>) -> PyResult<Self> {
        let input = Input::get(key, "key")?;
        let key = hyperseal::FileKey::from_slice(input.as_slice())
            .ok_or_else(|| ArgumentError::new_err("a file key is 16 or 32 bytes"))?;
        Ok(FileKey { key })
    }

    /// The key bytes.
    fn expose<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.key.expose())
    }

    fn __len__(&self) -> usize {
        self.key.expose().len()
    }

    fn __repr__(&self) -> String {
        format!("FileKey({} bits, redacted)", self.key.expose().len() * 8)
    }
}

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
    Ok(FileKey { key })
}
