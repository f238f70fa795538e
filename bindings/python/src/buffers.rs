//! Python buffers in and out: any bytes-like input (`bytes`, `bytearray`, `memoryview`, numpy
//! arrays of bytes), writable buffers for the `update_into` methods, and `bytes` results filled
//! with the GIL released.

#![allow(unsafe_code)]

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// A read-only view of a bytes-like argument, held for the length of one call.
pub enum Input<'py> {
    Bytes(Bound<'py, PyBytes>),
    Buffer(PyBuffer<u8>),
}

impl<'py> Input<'py> {
    /// Borrows `obj`'s bytes; `what` names the argument in the `TypeError`.
    pub fn get(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Input<'py>> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Input::Bytes(b.clone()));
        }
        let buf = PyBuffer::<u8>::get(obj)
            .map_err(|_| PyTypeError::new_err(format!("{what} must be a bytes-like object")))?;
        if !buf.is_c_contiguous() {
            return Err(PyTypeError::new_err(format!("{what} must be a contiguous buffer")));
        }
        Ok(Input::Buffer(buf))
    }

    pub fn as_slice(&self) -> &[u8] {
        match self {
            Input::Bytes(b) => b.as_bytes(),
            Input::Buffer(b) => {
                if b.len_bytes() == 0 {
                    return &[];
                }
                // SAFETY: the buffer export stays alive as long as `self` (PyBuffer releases it
                // on drop), is C-contiguous (checked in `get`) and holds `len_bytes()` bytes of
                // `u8`. Another thread may write into a mutable exporter while we read with the
                // GIL released; that changes the bytes we see, never memory safety of the
                // allocation (which cannot be resized while exported). pyca/cryptography
                // reads buffers the same way.
                unsafe { std::slice::from_raw_parts(b.buf_ptr() as *const u8, b.len_bytes()) }
            }
        }
    }
}

/// A bytes-like or `str` argument (a `str` is its UTF-8 bytes), as the toolkit calls take data,
/// keys and passwords (the Node package accepts strings there too).
pub enum Data<'py> {
    Bytes(Input<'py>),
    Str(Bound<'py, PyString>),
}

impl<'py> Data<'py> {
    pub fn get(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Data<'py>> {
        match obj.cast::<PyString>() {
            Ok(s) => Ok(Data::Str(s.clone())),
            Err(_) => Input::get(obj, what)
                .map(Data::Bytes)
                .map_err(|_| PyTypeError::new_err(format!("{what} must be bytes-like or str"))),
        }
    }

    /// `None` stays `None` (an absent optional argument such as `aad`).
    pub fn opt(obj: Option<&Bound<'py, PyAny>>, what: &str) -> PyResult<Option<Data<'py>>> {
        obj.filter(|o| !o.is_none()).map(|o| Data::get(o, what)).transpose()
    }

    pub fn as_slice(&self) -> PyResult<&[u8]> {
        match self {
            Data::Bytes(b) => Ok(b.as_slice()),
            Data::Str(s) => Ok(s.to_str()?.as_bytes()),
        }
    }
}

/// The bytes of an optional argument, empty when absent.
pub fn or_empty<'a>(d: &'a Option<Data<'_>>) -> PyResult<&'a [u8]> {
    d.as_ref().map_or(Ok(&[][..]), Data::as_slice)
}

/// A writable buffer argument (`bytearray`, writable `memoryview`).
pub struct Output(PyBuffer<u8>);

impl Output {
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Output> {
        let buf = PyBuffer::<u8>::get(obj)
            .map_err(|_| PyTypeError::new_err("buf must be a writable bytes-like object"))?;
        if buf.readonly() || !buf.is_c_contiguous() {
            return Err(PyTypeError::new_err("buf must be a writable, contiguous bytes-like object"));
        }
        Ok(Output(buf))
    }

    /// Whether `input` shares memory with this buffer (then it must be copied before writing).
    pub fn overlaps(&self, input: &[u8]) -> bool {
        let (a, n) = (self.0.buf_ptr() as usize, self.0.len_bytes());
        let (b, m) = (input.as_ptr() as usize, input.len());
        n > 0 && m > 0 && a < b + m && b < a + n
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        if self.0.len_bytes() == 0 {
            return &mut [];
        }
        // SAFETY: as in `Input::as_slice`, plus: the exporter is writable (checked in `get`),
        // and callers never hold an input slice that overlaps it (see `overlaps`).
        unsafe { std::slice::from_raw_parts_mut(self.0.buf_ptr() as *mut u8, self.0.len_bytes()) }
    }
}

/// A new `bytes` of `len` bytes filled by `fill` with the GIL released; `fill` returns how many
/// bytes it wrote, and a shorter result is truncated to that.
pub fn bytes_with<'py, E: Send>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, E> + Send,
) -> PyResult<Result<Bound<'py, PyBytes>, E>> {
    bytes_filled(py, len, true, fill)
}

/// A new `bytes` of `len` bytes, zeroed (by the library's [`hyperseal::zeroed_output`], which
/// spreads a large buffer's first touch over the cores) and then filled by `fill`: how results
/// are sealed and opened in place without a second copy. If `fill` fails the buffer is zeroized
/// before it is dropped (it may hold unauthenticated plaintext). `detach: false` keeps the GIL
/// (for small inputs, where releasing it costs more than it frees; see `toolkit.rs`).
pub fn bytes_filled<'py, E: Send>(
    py: Python<'py>,
    len: usize,
    detach: bool,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, E> + Send,
) -> PyResult<Result<Bound<'py, PyBytes>, E>> {
    // SAFETY: PyBytes_FromStringAndSize(NULL, n) returns a new reference (or NULL with an
    // exception set, which from_owned_ptr_or_err turns into Err) to a bytes object whose n bytes
    // are not yet initialised; it is a bytes object, so the cast cannot fail.
    let obj = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyBytes_FromStringAndSize(std::ptr::null(), len as ffi::Py_ssize_t),
        )?
        .cast_into_unchecked::<PyBytes>()
    };
    // SAFETY: PyBytes_AsString on a bytes object returns its buffer (never NULL), valid for
    // `len` bytes for as long as `obj` lives, which outlives every use below. Nothing else
    // holds a reference to the new object, so nobody reads it before it is filled.
    let at = unsafe { ffi::PyBytes_AsString(obj.as_ptr()) } as usize;
    let work = move || {
        // SAFETY: as above; viewed as uninitialised bytes until `zeroed_output` has written them.
        let raw = unsafe { std::slice::from_raw_parts_mut(at as *mut std::mem::MaybeUninit<u8>, len) };
        let buf = hyperseal::zeroed_output(raw, hyperseal::Pages::Huge);
        let r = fill(buf);
        if r.is_err() {
            hyperseal::wipe(buf);
        }
        r
    };
    let outcome = if detach { py.detach(work) } else { work() };
    Ok(match outcome {
        Ok(n) if n == len => Ok(obj),
        Ok(n) => Ok(PyBytes::new(py, &obj.as_bytes()[..n])),
        Err(e) => Err(e),
    })
}
