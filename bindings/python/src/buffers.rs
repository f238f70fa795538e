//! Python buffers in and out: any bytes-like input (`bytes`, `bytearray`, `memoryview`, numpy
//! arrays of bytes), writable buffers for the `update_into` methods, and `bytes` results filled
//! with the GIL released.

#![allow(unsafe_code)]

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

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
    let mut outcome: Option<Result<usize, E>> = None;
    let b = PyBytes::new_with(py, len, |buf| {
        outcome = Some(py.detach(|| fill(buf)));
        Ok(())
    })?;
    Ok(match outcome.expect("new_with ran the closure") {
        Ok(n) if n == len => Ok(b),
        Ok(n) => Ok(PyBytes::new(py, &b.as_bytes()[..n])),
        Err(e) => Err(e),
    })
}
