//! `hyperseal::Error` becomes the exception class that `hyperseal/_errors.py` generated for its
//! stable code (`hyperseal::ErrorCode`, the one list Node and the browser use too): the class is
//! looked up by the code string, so a code added to the library gets its class without a change
//! here.

use pyo3::prelude::*;

pyo3::import_exception!(hyperseal._errors, ArgumentError);
pyo3::import_exception!(hyperseal._errors, AlreadyFinalized);
pyo3::import_exception!(hyperseal._errors, IoError);

/// Every code string, in the library's stable order (`hyperseal.ERROR_CODES`).
#[pyfunction]
pub fn error_codes() -> Vec<&'static str> {
    hyperseal::ErrorCode::ALL.iter().map(|c| c.as_str()).collect()
}

/// The Python exception for a library error. An exception that a Python file object raised
/// while we read or wrote it comes back as itself (see `pyio.rs`).
pub fn to_py(e: hyperseal::Error) -> PyErr {
    let e = match e {
        hyperseal::Error::Io(io) if io.get_ref().is_some_and(|i| i.is::<PyErr>()) => {
            let inner = io.into_inner().expect("checked above");
            return *inner.downcast::<PyErr>().expect("checked above");
        }
        e => e,
    };
    let msg = match &e {
        hyperseal::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "file is truncated inside its header".to_string()
        }
        e => e.to_string(),
    };
    coded(e.code(), msg)
}

/// An instance of the class generated for `code`.
pub fn coded(code: hyperseal::ErrorCode, msg: String) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("hyperseal._errors")
            .and_then(|m| m.getattr("exception_for"))
            .and_then(|f| f.call1((code.as_str(), msg)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        }
    })
}

/// An I/O failure with its message (not from the library's `Error`).
pub fn io_error(msg: String) -> PyErr {
    coded(hyperseal::ErrorCode::Io, msg)
}

/// For `?` on library results.
pub trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, hyperseal::Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

pub fn already_finalized() -> PyErr {
    AlreadyFinalized::new_err("this context was already finalized (or failed) and cannot be used again")
}

/// Toolkit errors, with the codes the toolkit assigns (`hyperseal_toolkit::Error::code`).
pub fn toolkit_error(e: hyperseal_toolkit::Error) -> PyErr {
    coded(toolkit_code(e.code()), e.to_string())
}

/// Token failures: each has its own code (and class), as in Node.
pub fn token(e: hyperseal_toolkit::token::TokenError) -> PyErr {
    coded(toolkit_code(e.code()), e.to_string())
}

fn toolkit_code(code: &str) -> hyperseal::ErrorCode {
    hyperseal::ErrorCode::from_code(code).unwrap_or(hyperseal::ErrorCode::Argument)
}
