//! `hyperseal::Error` becomes one of the exception classes defined in `hyperseal/_errors.py`,
//! chosen by the library's stable `ErrorCode` (the one list Node and the browser use too).

use pyo3::prelude::*;

pyo3::import_exception!(hyperseal._errors, AuthenticationError);
pyo3::import_exception!(hyperseal._errors, NoIdentityError);
pyo3::import_exception!(hyperseal._errors, FormatError);
pyo3::import_exception!(hyperseal._errors, InvalidKeyError);
pyo3::import_exception!(hyperseal._errors, ArgumentError);
pyo3::import_exception!(hyperseal._errors, IoError);
pyo3::import_exception!(hyperseal._errors, AlreadyFinalized);

/// The Python exception for a library error, chosen by its stable code (`hyperseal::ErrorCode`,
/// the one list every binding uses).
pub fn to_py(e: hyperseal::Error) -> PyErr {
    use hyperseal::ErrorCode as C;
    let msg = match &e {
        hyperseal::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "file is truncated inside its header".to_string()
        }
        e => e.to_string(),
    };
    match e.code() {
        C::Auth | C::TokenExpired | C::TokenUnknownKey => AuthenticationError::new_err(msg),
        C::NoIdentity => NoIdentityError::new_err(msg),
        C::Key => InvalidKeyError::new_err(msg),
        C::Argument => ArgumentError::new_err(msg),
        C::Io => IoError::new_err(msg),
        _ => FormatError::new_err(msg),
    }
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
