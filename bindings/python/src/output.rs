//! `hyperseal._hyperseal.AtomicOutput`: the library's nothing-lost output (`output::AtomicOutput`)
//! for a file that several processes write at offsets — the parts of `hyperseal.dask`'s
//! `encrypt_large`/`decrypt_large`. It is always the library's *named* temporary
//! (`.hyperseal-*.partial` beside the destination), since workers in other processes open it by
//! name; every rule is the library's: mode 0600, an existing destination refused without
//! `force`, the name given at `commit` by `link(2)` (a file that appeared meanwhile is kept) or,
//! with `force`, an atomic rename; discarded (and on SIGINT/SIGTERM/SIGHUP of this process,
//! removed) unless committed.

use std::sync::Mutex;

use hyperseal::output::{AtomicOutput as LibOutput, OutputOptions};
use pyo3::prelude::*;

use crate::errors::ArgumentError;
use crate::files::output_err;

#[pyclass(frozen, module = "hyperseal._hyperseal")]
pub struct AtomicOutput {
    out: Mutex<Option<LibOutput>>,
    temporary: String,
}

#[pymethods]
impl AtomicOutput {
    /// Opens the output for `path`: nothing appears there until `commit()`.
    #[new]
    #[pyo3(signature = (path, *, force = false))]
    fn new(path: std::path::PathBuf, force: bool) -> PyResult<Self> {
        let out =
            OutputOptions::new().force(force).named_temporary(true).create(&path).map_err(output_err)?;
        let Some(tmp) = out.temporary_path().and_then(|p| p.to_str()).map(str::to_owned) else {
            return Err(ArgumentError::new_err(format!(
                "{} is not a regular file: parts cannot be written into it at offsets",
                path.display()
            )));
        };
        Ok(AtomicOutput { out: Mutex::new(Some(out)), temporary: tmp })
    }

    /// Where the writers write until `commit()` (hidden, mode 0600, in the destination's
    /// directory).
    #[getter]
    fn temporary_path(&self) -> &str {
        &self.temporary
    }

    /// Flushes the file to stable storage and gives it its name; without `force` refuses (and
    /// discards it) if a file appeared at the destination meanwhile, keeping that file.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let out = self.out.lock().ok().and_then(|mut o| o.take());
        let Some(out) = out else {
            return Err(ArgumentError::new_err("this output was already committed or discarded"));
        };
        py.detach(|| out.commit()).map_err(output_err)
    }

    /// Removes the temporary; nothing appears at the destination. Safe to call twice.
    fn discard(&self) {
        drop(self.out.lock().ok().and_then(|mut o| o.take()));
    }
}
