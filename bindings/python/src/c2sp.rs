//! `hyperseal.c2sp`: C2SP chunked encryption with pyca/cryptography's method names
//! (`update`, `update_into`, `finalize`, `generate_key`), over `hyperseal::c2sp`'s push-based
//! Encryptor/Decryptor. Every call that touches data releases the GIL; large pieces are sealed
//! and opened on every core. The pyca-named classes (`Cobblestone256Encryptor`, …) are thin
//! Python subclasses in `hyperseal/c2sp.py`.

use hyperseal::c2sp::{self, Key, Variant};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::{bytes_with, Input, Output};
use crate::errors::{already_finalized, to_py, ArgumentError, IntoPy};

fn key_of(key: &Bound<'_, PyAny>) -> PyResult<Key> {
    Key::from_bytes(Input::get(key, "key")?.as_slice()).py_err()
}

fn context_of<'py>(context: Option<&Bound<'py, PyAny>>) -> PyResult<Option<Input<'py>>> {
    context.map(|c| Input::get(c, "context")).transpose()
}

fn slice<'a>(i: &'a Option<Input<'_>>) -> &'a [u8] {
    i.as_ref().map_or(&[], Input::as_slice)
}

fn too_small(need: usize) -> PyErr {
    ArgumentError::new_err(format!("buffer must be at least {need} bytes"))
}

/// What the two push objects share: `update` turns input into output bytes (sealed chunks, or
/// plaintext of chunks that authenticated), `finish` ends the message.
trait Push: Send + Sized {
    fn new(key: &Key, context: &[u8]) -> Result<Self, hyperseal::Error>;
    fn threads(self, n: usize) -> Self;
    fn update_len(&self, n: usize) -> usize;
    fn update_into(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, hyperseal::Error>;
    fn finish_len(&self) -> usize;
    fn finish_into(self, out: &mut [u8]) -> Result<usize, hyperseal::Error>;
}

macro_rules! push_for {
    ($t:ty) => {
        impl Push for $t {
            fn new(key: &Key, context: &[u8]) -> Result<Self, hyperseal::Error> {
                <$t>::new(key, context)
            }
            fn threads(self, n: usize) -> Self {
                <$t>::threads(self, n)
            }
            fn update_len(&self, n: usize) -> usize {
                <$t>::update_len(self, n)
            }
            fn update_into(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, hyperseal::Error> {
                <$t>::update_into(self, data, out)
            }
            fn finish_len(&self) -> usize {
                <$t>::finish_len(self)
            }
            fn finish_into(self, out: &mut [u8]) -> Result<usize, hyperseal::Error> {
                <$t>::finish_into(self, out)
            }
        }
    };
}
push_for!(c2sp::Encryptor);
push_for!(c2sp::Decryptor);

/// `update()`: a new bytes object; after a failure the object is finalized.
fn update<'py, P: Push>(
    inner: &mut Option<P>,
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let p = inner.as_mut().ok_or_else(already_finalized)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    bytes_with(py, p.update_len(d.len()), |out| p.update_into(d, out))?.map_err(|e| {
        *inner = None;
        to_py(e)
    })
}

/// `update_into()`: into the caller's buffer, which must hold `update_len` bytes.
fn update_into<P: Push>(
    inner: &mut Option<P>,
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    buf: &Bound<'_, PyAny>,
) -> PyResult<usize> {
    let p = inner.as_mut().ok_or_else(already_finalized)?;
    let (input, mut out) = (Input::get(data, "data")?, Output::get(buf)?);
    // The output never sits at the input's offset (header and tags shift it): work from a
    // copy when they share memory, as pyca does.
    let copy = out.overlaps(input.as_slice()).then(|| input.as_slice().to_vec());
    let d = copy.as_deref().unwrap_or(input.as_slice());
    let o = out.as_mut_slice();
    let need = p.update_len(d.len());
    if o.len() < need {
        return Err(too_small(need));
    }
    py.detach(|| p.update_into(d, o)).map_err(|e| {
        *inner = None;
        to_py(e)
    })
}

/// `finalize()`: the end of the message; the object cannot be used again.
fn finalize<'py, P: Push>(inner: &mut Option<P>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
    let p = inner.take().ok_or_else(already_finalized)?;
    let n = p.finish_len();
    bytes_with(py, n, |out| p.finish_into(out))?.py_err()
}

/// A push object for `key` and `context`, on `threads` cores when given.
fn open<P: Push>(
    key: &Bound<'_, PyAny>,
    context: Option<&Bound<'_, PyAny>>,
    threads: Option<usize>,
) -> PyResult<P> {
    let ctx = context_of(context)?;
    let p = P::new(&key_of(key)?, slice(&ctx)).py_err()?;
    Ok(match threads {
        Some(t) => p.threads(t),
        None => p,
    })
}

/// One-shot: the whole of `data` through a push object, into one bytes object of `len` bytes.
fn one_shot<'py, P: Push>(
    py: Python<'py>,
    mut p: P,
    len: usize,
    data: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_with(py, len, |out| {
        let n = p.update_into(data, out)?;
        Ok::<_, hyperseal::Error>(n + p.finish_into(&mut out[n..])?)
    })?
    .py_err()
}

/// The Python class over a push object: the constructor and the methods both share, and
/// `$extra`, the class's own. One `#[pymethods]` block per class is all PyO3 allows, so the
/// shared methods are generated into it.
macro_rules! push_class {
    ($class:ident, $push:ty, $($extra:tt)*) => {
        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (key, context = None, *, threads = None))]
            fn new(
                key: &Bound<'_, PyAny>,
                context: Option<&Bound<'_, PyAny>>,
                threads: Option<usize>,
            ) -> PyResult<Self> {
                Ok($class { inner: Some(open::<$push>(key, context, threads)?) })
            }

            fn update<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
                update(&mut self.inner, py, data)
            }

            fn update_into(
                &mut self,
                py: Python<'_>,
                data: &Bound<'_, PyAny>,
                buf: &Bound<'_, PyAny>,
            ) -> PyResult<usize> {
                update_into(&mut self.inner, py, data, buf)
            }

            fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                finalize(&mut self.inner, py)
            }

            $($extra)*
        }
    };
}

/// Encrypts one message pushed in pieces: `update()` returns the salt and commitment and then
/// every complete 16 KiB chunk, `finalize()` the short final chunk.
#[pyclass(name = "Encryptor", module = "hyperseal.c2sp", subclass)]
pub struct C2spEncryptor {
    inner: Option<c2sp::Encryptor>,
}

push_class!(
    C2spEncryptor,
    c2sp::Encryptor,
    /// A fresh random key: 16 bytes for bits=128 (Cobblestone-128), 32 for bits=256.
    #[staticmethod]
    #[pyo3(signature = (bits = 256))]
    fn generate_key(py: Python<'_>, bits: usize) -> PyResult<Bound<'_, PyBytes>> {
        let variant = match bits {
            128 => Variant::Cobblestone128,
            256 => Variant::Cobblestone256,
            _ => return Err(ArgumentError::new_err("bits must be 128 or 256")),
        };
        Ok(PyBytes::new(py, Key::generate(variant).expose()))
    }
);

/// Decrypts one message pushed in pieces: `update()` returns plaintext only from chunks that
/// authenticated, `finalize()` opens the final chunk and fails on a truncated message. After
/// any failure the object is finalized.
#[pyclass(name = "Decryptor", module = "hyperseal.c2sp", subclass)]
pub struct C2spDecryptor {
    inner: Option<c2sp::Decryptor>,
}

push_class!(C2spDecryptor, c2sp::Decryptor,);

/// One-shot: the whole message, sealed on every core.
#[pyfunction(name = "c2sp_encrypt")]
#[pyo3(signature = (key, data, context = None))]
pub fn encrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    context: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let enc = open::<c2sp::Encryptor>(key, context, None)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    one_shot(py, enc, c2sp::sealed_len(d.len() as u64) as usize, d)
}

/// One-shot: checks the commitment and length, then opens every chunk on every core; returns
/// nothing unless all of them authenticate.
#[pyfunction(name = "c2sp_decrypt")]
#[pyo3(signature = (key, data, context = None))]
pub fn decrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    context: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let dec = open::<c2sp::Decryptor>(key, context, None)?;
    let input = Input::get(data, "data")?;
    let d = input.as_slice();
    let (len, _) = c2sp::opened_len(d.len() as u64).py_err()?;
    one_shot(py, dec, len as usize, d)
}
