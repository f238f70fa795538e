//! Streaming: the push-based `Sealer`/`Opener` (pyca-style `update`/`finalize`), and the native
//! halves of `hyperseal.open()`: `Reader` over `Decryptor::into_reader` (random access when the
//! input seeks) and `Writer` over `Encryptor::wrap_output` (onto an `AtomicOutput` for a path,
//! committed only by `close()`). The `io.RawIOBase` classes are in `hyperseal/_io.py`. No
//! header, chunk or output logic here: only the library's objects and type conversion.

use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use hyperseal::output::OutputOptions;
use hyperseal::{Decryptor, Opener as LibOpener, Sealer as LibSealer, Source, StreamReader, StreamWriter};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::buffers::{Input, Output};
use crate::errors::{already_finalized, to_py, IntoPy};
use crate::files::{open_input, output_err};
use crate::keys::{identities_of, options_of, To};
use crate::pyio::{PyFile, Sink, Src};

/// Pushes plaintext in, gets the file's bytes out: `update()` returns the header and every
/// complete chunk, `finalize()` the rest.
#[pyclass(module = "hyperseal")]
pub struct Sealer {
    inner: Option<LibSealer>,
}

#[pymethods]
impl Sealer {
    #[new]
    #[pyo3(signature = (recipients = None, *, passphrase = None, format = "hyperseal", suite = None, threads = 0, allow_plugins = false))]
    fn new(
        py: Python<'_>,
        recipients: Option<&Bound<'_, PyAny>>,
        passphrase: Option<&Bound<'_, PyAny>>,
        format: &str,
        suite: Option<&str>,
        threads: usize,
        allow_plugins: bool,
    ) -> PyResult<Self> {
        let (to, opts) = (To::of(recipients, passphrase, allow_plugins)?, options_of(format, suite)?);
        let enc = py.detach(|| to.encryptor(opts)).py_err()?.threads(threads);
        Ok(Sealer { inner: Some(enc.sealer()) })
    }

    fn update<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let sealer = self.inner.as_mut().ok_or_else(already_finalized)?;
        let input = Input::get(data, "data")?;
        let d = input.as_slice();
        let out = py.detach(|| {
            let mut out = Vec::new();
            sealer.update(d, &mut out);
            out
        });
        Ok(PyBytes::new(py, &out))
    }

    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let sealer = self.inner.take().ok_or_else(already_finalized)?;
        let mut out = Vec::new();
        sealer.finish(&mut out);
        Ok(PyBytes::new(py, &out))
    }
}

/// Pushes a file's bytes in, gets only authenticated plaintext out; `finalize()` fails on a
/// file that was cut short. Binary files only (armored ones: `decrypt` or `open`).
#[pyclass(module = "hyperseal")]
pub struct Opener {
    inner: Option<LibOpener>,
}

#[pymethods]
impl Opener {
    #[new]
    #[pyo3(signature = (identities = None, *, passphrase = None, threads = 0, allow_plugins = false))]
    fn new(
        identities: Option<&Bound<'_, PyAny>>,
        passphrase: Option<&Bound<'_, PyAny>>,
        threads: usize,
        allow_plugins: bool,
    ) -> PyResult<Self> {
        let ids = identities_of(identities, passphrase, allow_plugins)?;
        Ok(Opener { inner: Some(LibOpener::new(ids).threads(threads)) })
    }

    fn update<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let opener = self.inner.as_mut().ok_or_else(already_finalized)?;
        let input = Input::get(data, "data")?;
        let d = input.as_slice();
        let r = py.detach(|| {
            let mut out = Zeroizing::new(Vec::new());
            opener.update(d, &mut out).map(|()| out)
        });
        match r {
            Ok(out) => Ok(PyBytes::new(py, &out)),
            Err(e) => {
                self.inner = None;
                Err(to_py(e))
            }
        }
    }

    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let opener = self.inner.take().ok_or_else(already_finalized)?;
        let mut out = Zeroizing::new(Vec::new());
        py.detach(|| opener.finish(&mut out)).py_err()?;
        Ok(PyBytes::new(py, &out))
    }
}

/// A path (str or os.PathLike) or else a file object.
fn path_of(target: &Bound<'_, PyAny>) -> Option<PathBuf> {
    target.extract::<PathBuf>().ok()
}

/// Native half of `open(…, "rb")`.
#[pyclass(module = "hyperseal._hyperseal")]
pub struct Reader {
    inner: Option<StreamReader<Source<Src>>>,
    /// The authenticated plaintext length, when the input seeks (read at open).
    size: Option<u64>,
    pos: u64,
}

#[pymethods]
impl Reader {
    #[new]
    #[pyo3(signature = (source, identities = None, *, passphrase = None, threads = 0, allow_plugins = false))]
    fn new(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        identities: Option<&Bound<'_, PyAny>>,
        passphrase: Option<&Bound<'_, PyAny>>,
        threads: usize,
        allow_plugins: bool,
    ) -> PyResult<Self> {
        let ids = identities_of(identities, passphrase, allow_plugins)?;
        let (src, seekable) = match path_of(source) {
            Some(p) => {
                let f = open_input(&p)?;
                // A FIFO or a device reads as a stream.
                let regular = f.metadata().is_ok_and(|m| m.is_file());
                (Src::File(f), regular)
            }
            None => (Src::Py(PyFile::new(source)), PyFile::seekable(source)),
        };
        py.detach(|| {
            let dec = Decryptor::new(src)?.threads(threads);
            let armored = dec.is_armored();
            let mut reader = dec.into_reader(&ids)?;
            // Seeking needs the plaintext length, which authenticates the final chunk: done
            // now, before anything is read, so a cut file fails at open.
            let size = if seekable && !armored { Some(reader.plaintext_len()?) } else { None };
            Ok(Reader { inner: Some(reader), size, pos: 0 })
        })
        .py_err()
    }

    /// Fills a writable buffer (short only at the end); returns the count, 0 at the end. One
    /// call for many chunks: the library returns at most to a chunk boundary per `read`.
    fn readinto(&mut self, py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<usize> {
        let reader = self.inner.as_mut().ok_or_else(closed)?;
        let mut out = Output::get(buf)?;
        let o = out.as_mut_slice();
        let n = py
            .detach(|| {
                let mut n = 0;
                while n < o.len() {
                    match reader.read(&mut o[n..]) {
                        Ok(0) => break,
                        Ok(k) => n += k,
                        // A read that reaches a failure raises, even with bytes before it in
                        // hand: a short count would look like the end of the file to callers
                        // that read once (pyarrow), and a cut file must never look whole.
                        Err(e) => return Err(e),
                    }
                }
                Ok::<_, std::io::Error>(n)
            })
            .map_err(|e| to_py(e.into()))?;
        self.pos += n as u64;
        Ok(n)
    }

    /// Moves to `offset` from `whence` (0 start, 1 current, 2 end); returns the position.
    #[pyo3(signature = (offset, whence = 0))]
    fn seek(&mut self, py: Python<'_>, offset: i64, whence: i32) -> PyResult<u64> {
        let reader = self.inner.as_mut().ok_or_else(closed)?;
        if self.size.is_none() {
            return Err(unsupported("this input cannot seek (a stream, or an armored file)"));
        }
        let to = match whence {
            0 => SeekFrom::Start(u64::try_from(offset).map_err(|_| neg())?),
            1 => SeekFrom::Current(offset),
            2 => SeekFrom::End(offset),
            _ => return Err(pyo3::exceptions::PyValueError::new_err("whence must be 0, 1 or 2")),
        };
        self.pos = py.detach(|| reader.seek(to)).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => neg(),
            _ => to_py(e.into()),
        })?;
        Ok(self.pos)
    }

    fn tell(&self) -> u64 {
        self.pos
    }

    fn seekable(&self) -> bool {
        self.size.is_some()
    }

    /// The plaintext length (authenticated), or None when the input cannot seek.
    #[getter]
    fn size(&self) -> Option<u64> {
        self.size
    }

    fn close(&mut self) {
        self.inner = None;
    }
}

fn closed() -> PyErr {
    pyo3::exceptions::PyValueError::new_err("I/O operation on closed file")
}

fn neg() -> PyErr {
    pyo3::exceptions::PyValueError::new_err("negative seek position")
}

fn unsupported(msg: &str) -> PyErr {
    Python::attach(|py| match py.import("io").and_then(|io| io.getattr("UnsupportedOperation")) {
        Ok(cls) => PyErr::from_type(cls.cast_into().expect("a class"), msg.to_string()),
        Err(e) => e,
    })
}

/// Native half of `open(…, "wb")`.
#[pyclass(module = "hyperseal._hyperseal")]
pub struct Writer {
    inner: Option<StreamWriter<Sink>>,
}

#[pymethods]
impl Writer {
    #[new]
    #[pyo3(signature = (target, recipients = None, *, passphrase = None, format = "hyperseal", suite = None, force = false, threads = 0, allow_plugins = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        target: &Bound<'_, PyAny>,
        recipients: Option<&Bound<'_, PyAny>>,
        passphrase: Option<&Bound<'_, PyAny>>,
        format: &str,
        suite: Option<&str>,
        force: bool,
        threads: usize,
        allow_plugins: bool,
    ) -> PyResult<Self> {
        let (to, opts) = (To::of(recipients, passphrase, allow_plugins)?, options_of(format, suite)?);
        let sink = match path_of(target) {
            Some(p) => {
                let out = OutputOptions::new().force(force).create(&p).map_err(output_err)?;
                Sink::File(BufWriter::with_capacity(1 << 20, out))
            }
            None => Sink::Py(PyFile::new(target)),
        };
        let w = py.detach(|| to.encryptor(opts)?.threads(threads).wrap_output(sink)).py_err()?;
        Ok(Writer { inner: Some(w) })
    }

    /// Encrypts `data` (chunks go out as they fill); returns its length.
    fn write(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let w = self.inner.as_mut().ok_or_else(closed)?;
        let input = Input::get(data, "data")?;
        let d = input.as_slice();
        py.detach(|| w.write_all(d)).map_err(|e| to_py(e.into()))?;
        Ok(d.len())
    }

    /// Seals the final chunk and, for a path, gives the file its name (atomically).
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(w) = self.inner.take() else { return Ok(()) };
        let sink = py.detach(|| w.finish()).py_err()?;
        match sink {
            Sink::File(out) => {
                let out = out.into_inner().map_err(|e| to_py(e.into_error().into()))?;
                py.detach(|| out.commit()).map_err(output_err)
            }
            Sink::Py(_) => Ok(()),
        }
    }

    /// Drops everything: a path's file never appears; a file object keeps what was written.
    fn abort(&mut self) {
        self.inner = None;
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_none()
    }
}
