//! A Python file object (anything with `read`/`write`/`seek`: `open()`, `io.BytesIO`, an fsspec
//! file on S3 or in memory) as a Rust `Read`/`Write`/`Seek`, so the library's `Decryptor` and
//! `StreamWriter` can run on it with the GIL released: each call takes the GIL back only for
//! the Python method. An exception the object raises travels through `io::Error` and comes back
//! to Python as itself (`errors::to_py`), not as an `IoError`.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

use hyperseal::output::AtomicOutput;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::Input;

pub struct PyFile(Py<PyAny>);

impl PyFile {
    pub fn new(obj: &Bound<'_, PyAny>) -> Self {
        PyFile(obj.clone().unbind())
    }

    /// Whether the object says it can seek (objects without `seekable()` cannot).
    pub fn seekable(obj: &Bound<'_, PyAny>) -> bool {
        obj.call_method0("seekable").and_then(|r| r.is_truthy()).unwrap_or(false)
    }
}

fn to_io(e: PyErr) -> io::Error {
    io::Error::other(e)
}

impl Read for PyFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let got = self.0.bind(py).call_method1("read", (buf.len(),))?;
            if got.is_none() {
                // A non-blocking object with nothing to give yet.
                return Ok(Err(io::ErrorKind::WouldBlock.into()));
            }
            let input = Input::get(&got, "read() result")?;
            let b = input.as_slice();
            if b.len() > buf.len() {
                return Ok(Err(io::Error::other("read() returned more bytes than asked for")));
            }
            buf[..b.len()].copy_from_slice(b);
            Ok(Ok(b.len()))
        })
        .map_err(to_io)?
    }
}

impl Write for PyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let n = self.0.bind(py).call_method1("write", (PyBytes::new(py, buf),))?;
            // Buffered and fsspec files return the length, raw ones may write less, some None.
            Ok(if n.is_none() { buf.len() } else { n.extract::<usize>()?.min(buf.len()) })
        })
        .map_err(to_io)
    }

    fn flush(&mut self) -> io::Result<()> {
        Python::attach(|py| self.0.bind(py).call_method0("flush").map(drop)).map_err(to_io)
    }
}

impl Seek for PyFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let (off, whence) = match pos {
            SeekFrom::Start(n) => (n as i64, 0),
            SeekFrom::Current(n) => (n, 1),
            SeekFrom::End(n) => (n, 2),
        };
        Python::attach(|py| self.0.bind(py).call_method1("seek", (off, whence))?.extract::<u64>())
            .map_err(to_io)
    }
}

/// Where a reader's file bytes come from: a file we opened, or the caller's file object.
pub enum Src {
    File(File),
    Py(PyFile),
}

impl Read for Src {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Src::File(f) => f.read(buf),
            Src::Py(p) => p.read(buf),
        }
    }
}

impl Seek for Src {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Src::File(f) => f.seek(pos),
            Src::Py(p) => p.seek(pos),
        }
    }
}

/// Where a writer's file bytes go: a path through the library's nothing-lost `AtomicOutput`,
/// or the caller's file object (which then owns what happens to a half-written file).
pub enum Sink {
    File(BufWriter<AtomicOutput>),
    Py(PyFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Py(p) => p.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            Sink::Py(p) => p.flush(),
        }
    }
}
