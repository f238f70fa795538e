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
    bytes_around(py, &[], &[], len, true, fill)
}

/// A new `bytes` laid out as `head ‖ body ‖ tail` zero bytes, then `fill` on all of it, with
/// the GIL released: how the AEAD one-shots seal and open in place without a zeroing pass or a
/// second copy. A large `body` is copied by every core into huge pages, as `bytes_with` zeroes.
/// If `fill` fails the buffer is zeroized before it is dropped (it may hold unauthenticated
/// plaintext). `detach: false` keeps the GIL (for small inputs; see `toolkit.rs`).
pub fn bytes_around<'py, E: Send>(
    py: Python<'py>,
    head: &[u8],
    body: &[u8],
    tail: usize,
    detach: bool,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, E> + Send,
) -> PyResult<Result<Bound<'py, PyBytes>, E>> {
    let len = head.len() + body.len() + tail;
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
        if len >= LARGE {
            advise_huge(at, len);
        }
        // SAFETY: the three ranges are disjoint and inside the buffer (see above); `head` and
        // `body` are caller memory, never this new object.
        unsafe {
            std::ptr::copy_nonoverlapping(head.as_ptr(), at as *mut u8, head.len());
            copy(at + head.len(), body);
        }
        zero(at + head.len() + body.len(), tail);
        // SAFETY: every one of the `len` bytes at `at` was initialised just above.
        let buf = unsafe { std::slice::from_raw_parts_mut(at as *mut u8, len) };
        let r = fill(buf);
        if r.is_err() {
            zeroize::Zeroize::zeroize(buf);
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

/// The per-thread span for touching `len` fresh bytes: one thread per core when large.
fn span(len: usize) -> usize {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(len / LARGE).max(1);
    len.div_ceil(threads).next_multiple_of(4096)
}

/// Copies `src` to address `at` (a fresh buffer: page faults dominate), split over the cores
/// when large.
///
/// # Safety
/// `at..at + src.len()` must be writable memory that `src` does not overlap.
unsafe fn copy(at: usize, src: &[u8]) {
    if src.len() < LARGE {
        std::ptr::copy_nonoverlapping(src.as_ptr(), at as *mut u8, src.len());
        return;
    }
    let per = span(src.len());
    std::thread::scope(|s| {
        for piece in src.chunks(per) {
            let to = at + (piece.as_ptr() as usize - src.as_ptr() as usize);
            // SAFETY: disjoint ranges of the destination, one per thread (caller's contract).
            s.spawn(move || unsafe {
                std::ptr::copy_nonoverlapping(piece.as_ptr(), to as *mut u8, piece.len())
            });
        }
    });
}

/// Initialises `len` bytes at address `at` to zero: huge-page hinted and split over the cores
/// when large.
fn zero(at: usize, len: usize) {
    if len < LARGE {
        // SAFETY: `at..at + len` is the writable buffer of a bytes object we own (bytes_with).
        unsafe { std::ptr::write_bytes(at as *mut u8, 0, len) };
        return;
    }
    let per = span(len);
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
