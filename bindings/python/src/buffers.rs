//! Python buffers in and out: any bytes-like input (`bytes`, `bytearray`, `memoryview`, numpy
//! arrays of bytes), writable buffers for the `update_into` methods, and `bytes` results filled
//! with the GIL released.

#![allow(unsafe_code)]

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
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

/// Below this a result is allocated and zeroed the plain way; above it, page faults cost more
/// than the AEAD (see `bytes_with`).
const LARGE: usize = 8 << 20;

/// A new `bytes` of `len` bytes filled by `fill` with the GIL released; `fill` returns how many
/// bytes it wrote, and a shorter result is truncated to that.
///
/// Large results are where the time goes: a fresh 256 MiB `bytes` zeroed on one thread with 4 KiB
/// pages cost more CPU than sealing it (getrusage on the development machine: ~0.19 s to zero
/// versus ~0.09 s of AES-GCM). So a large buffer is asked for transparent huge pages (most
/// distributions enable them only on request) and zeroed by every core, each touching its own
/// range first, before `fill` sees it.
pub fn bytes_with<'py, E: Send>(
    py: Python<'py>,
    len: usize,
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
    let outcome = py.detach(move || {
        zero(at, len);
        // SAFETY: `zero` initialised all `len` bytes at `at` (see above for validity).
        let buf = unsafe { std::slice::from_raw_parts_mut(at as *mut u8, len) };
        fill(buf)
    });
    Ok(match outcome {
        Ok(n) if n == len => Ok(obj),
        Ok(n) => Ok(PyBytes::new(py, &obj.as_bytes()[..n])),
        Err(e) => Err(e),
    })
}

/// Initialises `len` bytes at address `at` to zero: huge-page hinted and split over the cores
/// when large.
fn zero(at: usize, len: usize) {
    if len < LARGE {
        // SAFETY: `at..at + len` is the writable buffer of a bytes object we own (bytes_with).
        unsafe { std::ptr::write_bytes(at as *mut u8, 0, len) };
        return;
    }
    advise_huge(at, len);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(len / LARGE).max(1);
    let per = len.div_ceil(threads).next_multiple_of(4096);
    std::thread::scope(|s| {
        for start in (0..len).step_by(per) {
            let n = per.min(len - start);
            // SAFETY: disjoint ranges of the buffer above, one per thread.
            s.spawn(move || unsafe { std::ptr::write_bytes((at + start) as *mut u8, 0, n) });
        }
    });
}

#[cfg(target_os = "linux")]
fn advise_huge(at: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let (start, end) = (at.next_multiple_of(HUGE), (at + len) / HUGE * HUGE);
    if end > start {
        // SAFETY: [start, end) lies inside the buffer and is page-aligned; MADV_HUGEPAGE changes
        // only how the kernel backs the range, never its contents; failure is harmless.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_: usize, _: usize) {}
