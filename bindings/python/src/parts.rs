//! `hyperseal.parts.PartKey`: the library's `parts::PartKey` — one file sealed or
//! opened in chunk-aligned parts by several processes (what `hyperseal.dask.encrypt_large`
//! runs on). The geometry, nonces and framing stay in the library; this converts arguments and
//! releases the GIL around the cipher work.

use std::io::Read;
use std::sync::Mutex;

use hyperseal::parts::claim::{ClaimStore, MemoryClaims};
use hyperseal::parts::{Part, PartKey as LibPartKey};
use hyperseal::recipient::{passphrase_recipient, Recipient};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::buffers::{bytes_with, Input, Output};
use crate::errors::IntoPy;
use crate::keys::{identities_of, options_of, To};
use crate::pyio::PyFile;

/// The payload key of one file and its geometry. `repr()` never shows the key.
#[pyclass(frozen, module = "hyperseal.parts")]
pub struct PartKey {
    key: LibPartKey,
    /// The claims of `seal` and `seal_into`: every part this object seals, once per bytes.
    claims: MemoryClaims,
    /// The part size of this key's plan, once known (`plan`, or a part sealed).
    plan_size: Mutex<Option<u64>>,
}

impl PartKey {
    fn new(key: LibPartKey) -> Self {
        PartKey { key, claims: MemoryClaims::new(), plan_size: Mutex::new(None) }
    }

    fn planned(&self, size: u64) {
        if let Ok(mut p) = self.plan_size.lock() {
            *p = Some(size);
        }
    }

    /// The plan's part size for `seal`: the one given, else this key's plan, else the one the
    /// part itself shows — its length when it is whole chunks short of the end, all of a part
    /// that is the whole file. A last part of a plan nobody named is ambiguous: the caller
    /// names it. (Any other guess is checked by the library: the plan claim refuses a second
    /// part size under one key.)
    fn part_size_of(&self, given: Option<u64>, first_chunk: u64, len: usize) -> PyResult<u64> {
        let known = given.or_else(|| self.plan_size.lock().ok().and_then(|p| *p));
        if let Some(size) = known {
            return Ok(size);
        }
        let chunk = self.key.chunk_size() as u64;
        let end = first_chunk.checked_mul(chunk).and_then(|s| s.checked_add(len as u64));
        match end == Some(self.key.plaintext_len()) {
            false => Ok(len as u64),
            true if first_chunk == 0 => Ok((len as u64).div_ceil(chunk).max(1) * chunk),
            true => Err(crate::errors::ArgumentError::new_err(
                "pass part_size (the plan's part size) to seal the last part, or call plan() on this key first",
            )),
        }
    }
}

/// A part as Python sees it: (first_chunk, plaintext_start, plaintext_end, file_start, file_end).
type PartTuple = (u64, u64, u64, u64, u64);

fn tuple(p: Part) -> PartTuple {
    (p.first_chunk, p.plaintext.start, p.plaintext.end, p.file.start, p.file.end)
}

#[pymethods]
impl PartKey {
    /// Begins a file of exactly `plaintext_len` bytes: returns `(head, key)`, the file's first
    /// bytes (header and salt) and the key that seals its parts.
    #[classmethod]
    #[pyo3(signature = (plaintext_len, recipients = None, *, passphrase = None, format = "hyperseal", suite = None, chunk_size = None, allow_plugins = false))]
    #[allow(clippy::too_many_arguments)]
    fn seal_new<'py>(
        _cls: &Bound<'py, PyType>,
        py: Python<'py>,
        plaintext_len: u64,
        recipients: Option<&Bound<'py, PyAny>>,
        passphrase: Option<&Bound<'py, PyAny>>,
        format: &str,
        suite: Option<&str>,
        chunk_size: Option<usize>,
        allow_plugins: bool,
    ) -> PyResult<(Bound<'py, PyBytes>, PartKey)> {
        let mut opts = options_of(format, suite)?;
        if let Some(c) = chunk_size {
            opts.chunk_size = c;
        }
        let to = To::of(recipients, passphrase, allow_plugins)?;
        // Wrapping the file key takes a KEM encapsulation, or Argon2id/scrypt for a passphrase.
        let (head, key) = py
            .detach(|| match to {
                To::Recipients(r) => LibPartKey::seal_new(&r, opts, plaintext_len),
                To::Passphrase(p) => {
                    let only: [Box<dyn Recipient>; 1] = [passphrase_recipient(opts.profile, p)];
                    LibPartKey::seal_new(&only, opts, plaintext_len)
                }
            })
            .py_err()?;
        Ok((PyBytes::new(py, &head), PartKey::new(key)))
    }

    /// Reads the header of an encrypted file of `file_len` bytes from the binary file object
    /// `file` (at its start), unwraps it with `identities` (or `passphrase`), and returns the
    /// key that opens its parts.
    #[classmethod]
    #[pyo3(signature = (file, file_len, identities = None, *, passphrase = None, allow_plugins = false))]
    fn open_file<'py>(
        _cls: &Bound<'py, PyType>,
        py: Python<'py>,
        file: &Bound<'py, PyAny>,
        file_len: u64,
        identities: Option<&Bound<'py, PyAny>>,
        passphrase: Option<&Bound<'py, PyAny>>,
        allow_plugins: bool,
    ) -> PyResult<PartKey> {
        let ids = identities_of(identities, passphrase, allow_plugins)?;
        let mut src = PyFile::new(file);
        let key = py.detach(|| LibPartKey::open_file(&mut src as &mut dyn Read, file_len, &ids)).py_err()?;
        Ok(PartKey::new(key))
    }

    /// The parts of `part_size` plaintext bytes (a multiple of `chunk_size`), in order, as
    /// tuples `(first_chunk, plaintext_start, plaintext_end, file_start, file_end)`.
    /// `seal` then claims parts of this plan unless told otherwise.
    fn plan(&self, part_size: u64) -> PyResult<Vec<PartTuple>> {
        let plan: Vec<PartTuple> = self.key.plan(part_size).py_err()?.into_iter().map(tuple).collect();
        self.planned(part_size);
        Ok(plan)
    }

    /// Seals the plaintext of the part starting at chunk `first_chunk` of the plan of
    /// `part_size`-byte parts; returns its bytes in the file. Claimed in this key's own
    /// in-memory store first (the library's `MemoryClaims`): the same bytes sealed again give
    /// the same output, other bytes for the same part raise `ArgumentError` ("would reuse a
    /// nonce"). `part_size` defaults to the last `plan()` of this key, else to what the part
    /// shows (see `part_size_of`). The store lives in this object: copies sent to other
    /// processes (pickle, `from_bytes`) start empty, so a job across processes passes one
    /// shared store to `seal_claimed`.
    #[pyo3(signature = (first_chunk, data, part_size = None))]
    fn seal<'py>(
        &self,
        py: Python<'py>,
        first_chunk: u64,
        data: &Bound<'py, PyAny>,
        part_size: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let input = Input::get(data, "data")?;
        let d = input.as_slice();
        let size = self.part_size_of(part_size, first_chunk, d.len())?;
        let len = self.key.sealed_len(first_chunk, d.len()).py_err()?;
        // Sealed straight into the result: no second copy of a part that may be many MiB.
        let sealed = bytes_with(py, len, |out| {
            self.key.seal_claimed_into(&self.claims, size, first_chunk, d, out).map(|()| len)
        })?
        .py_err()?;
        self.planned(size);
        Ok(sealed)
    }

    /// `seal` into the writable buffer `out` (exactly the sealed part's size: `file_end -
    /// file_start` of its plan row). Until it returns, `out` may hold bytes that must not be
    /// stored (they are wiped when the claim is refused): prefer memory only this process
    /// reads over a map of a file others read.
    #[pyo3(signature = (first_chunk, data, out, part_size = None))]
    fn seal_into(
        &self,
        py: Python<'_>,
        first_chunk: u64,
        data: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
        part_size: Option<u64>,
    ) -> PyResult<()> {
        let (input, mut output) = in_out(data, out)?;
        let (d, o) = (input.as_slice(), output.as_mut_slice());
        let size = self.part_size_of(part_size, first_chunk, d.len())?;
        py.detach(|| self.key.seal_claimed_into(&self.claims, size, first_chunk, d, o)).py_err()?;
        self.planned(size);
        Ok(())
    }

    /// `open` into the writable buffer `out` (at least the part's plaintext size); returns the
    /// plaintext length. On error `out` is wiped (it held unauthenticated bytes).
    fn open_into(
        &self,
        py: Python<'_>,
        first_chunk: u64,
        data: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let (input, mut output) = in_out(data, out)?;
        let (d, o) = (input.as_slice(), output.as_mut_slice());
        py.detach(|| self.key.open_into(first_chunk, d, o).inspect_err(|_| o.fill(0))).py_err()
    }

    /// Opens the part starting at chunk `first_chunk` (its bytes in the file); returns its
    /// plaintext, all of it authenticated.
    fn open<'py>(
        &self,
        py: Python<'py>,
        first_chunk: u64,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let input = Input::get(data, "data")?;
        let d = input.as_slice();
        // Opened straight into the result; unauthenticated bytes are wiped before it is freed.
        let len = self.key.opened_len(d.len());
        bytes_with(py, len, |out| self.key.open_into(first_chunk, d, out).inspect_err(|_| out.fill(0)))?
            .py_err()
    }

    /// Seals the part at chunk `first_chunk` of the plan of `part_size`-byte parts, claiming
    /// the plan and the part in `store` first (an object with `put_new(name, record)`: store
    /// `record` under `name` only if the name is new, atomically, and return None, else return
    /// the record already there — see `hyperseal._claims`). The same bytes sealed again pass
    /// (the same output); other bytes under the part's nonces raise `ArgumentError` ("would
    /// reuse a nonce") and nothing is returned.
    fn seal_claimed<'py>(
        &self,
        py: Python<'py>,
        store: Py<PyAny>,
        part_size: u64,
        first_chunk: u64,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let input = Input::get(data, "data")?;
        let d = input.as_slice();
        let len = self.key.sealed_len(first_chunk, d.len()).py_err()?;
        let claims = PyClaims::new(store);
        let sealed = bytes_with(py, len, |out| {
            self.key.seal_claimed_into(&claims, part_size, first_chunk, d, out).map(|()| len)
        })?;
        claims.result(sealed)
    }

    /// `seal_claimed` into the writable buffer `out` (exactly the sealed part's size). `out`
    /// must be memory only this process reads (a `bytearray`), never a map of a shared file:
    /// until this returns it may hold bytes that must not be stored (wiped on refusal).
    fn seal_claimed_into(
        &self,
        py: Python<'_>,
        store: Py<PyAny>,
        part_size: u64,
        first_chunk: u64,
        data: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (input, mut output) = in_out(data, out)?;
        let (d, o) = (input.as_slice(), output.as_mut_slice());
        let claims = PyClaims::new(store);
        let done = py.detach(|| self.key.seal_claimed_into(&claims, part_size, first_chunk, d, o));
        claims.result(done)
    }

    /// The claims of a part sealed elsewhere (a driver that runs the cipher itself), as
    /// `(name, record)` pairs: the plan's, then the part's. Store each with `put_new` before
    /// the sealed bytes leave memory you own, and pass what was already there to
    /// `check_claim`.
    fn claims_of(
        &self,
        part_size: u64,
        first_chunk: u64,
        sealed: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<(String, Vec<u8>)>> {
        let sealed = Input::get(sealed, "sealed")?;
        let plan = self.key.plan_claim(part_size).py_err()?;
        let part = self.key.part_claim(part_size, first_chunk, sealed.as_slice()).py_err()?;
        Ok([plan, part].into_iter().map(|c| (c.name().to_string(), c.record().to_vec())).collect())
    }

    #[getter]
    fn chunk_size(&self) -> usize {
        self.key.chunk_size()
    }

    #[getter]
    fn plaintext_len(&self) -> u64 {
        self.key.plaintext_len()
    }

    #[getter]
    fn file_len(&self) -> u64 {
        self.key.file_len()
    }

    /// The key as bytes, for a worker (the pickle form). Whoever holds them can read and forge
    /// this one file.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.key.to_bytes())
    }

    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<PartKey> {
        Ok(PartKey::new(LibPartKey::from_bytes(Input::get(data, "data")?.as_slice()).py_err()?))
    }

    fn __repr__(&self) -> String {
        format!("<hyperseal.parts.{:?}>", self.key)
    }

    /// Pickled as its bytes, so Dask can ship it to workers.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let from = slf.get_type().getattr("from_bytes")?;
        Ok((from, (slf.get().to_bytes(slf.py()),)))
    }
}

/// The input and the caller's output buffer of the `*_into` methods, which must not overlap.
fn in_out<'py>(data: &Bound<'py, PyAny>, out: &Bound<'py, PyAny>) -> PyResult<(Input<'py>, Output)> {
    let (input, output) = (Input::get(data, "data")?, Output::get(out)?);
    if output.overlaps(input.as_slice()) {
        return Err(crate::errors::ArgumentError::new_err("out must not overlap data"));
    }
    Ok((input, output))
}

/// A Python claim store as the library's: `put_new` is called with the GIL taken back; an
/// exception it raises is kept and re-raised as itself.
struct PyClaims {
    store: Py<PyAny>,
    failed: Mutex<Option<PyErr>>,
}

impl PyClaims {
    fn new(store: Py<PyAny>) -> Self {
        PyClaims { store, failed: Mutex::new(None) }
    }

    /// The outcome: the store's own exception first, else the library's result.
    fn result<T>(self, r: Result<T, hyperseal::Error>) -> PyResult<T> {
        if let Some(e) = self.failed.into_inner().ok().flatten() {
            return Err(e);
        }
        r.py_err()
    }
}

impl ClaimStore for PyClaims {
    fn put_new(&self, name: &str, record: &[u8]) -> Result<Option<Vec<u8>>, hyperseal::Error> {
        Python::attach(|py| {
            let got = self.store.call_method1(py, "put_new", (name, PyBytes::new(py, record)))?;
            if got.is_none(py) {
                return Ok(None);
            }
            let got = got.bind(py);
            Ok(Some(Input::get(got, "record")?.as_slice().to_vec()))
        })
        .map_err(|e: PyErr| {
            if let Ok(mut slot) = self.failed.lock() {
                slot.get_or_insert(e);
            }
            hyperseal::Error::Io(std::io::Error::other("the claim store failed"))
        })
    }
}
