//! `hyperseal::Error` becomes one of the exception classes defined in `hyperseal/_errors.py`,
//! each carrying the same `code` string as the Node package (bindings/node/src/errors.rs), so
//! the mapping is the same in both languages. It is done here and nowhere else.

use pyo3::prelude::*;

pyo3::import_exception!(hyperseal._errors, AuthenticationError);
pyo3::import_exception!(hyperseal._errors, NoIdentityError);
pyo3::import_exception!(hyperseal._errors, FormatError);
pyo3::import_exception!(hyperseal._errors, InvalidKeyError);
pyo3::import_exception!(hyperseal._errors, ArgumentError);
pyo3::import_exception!(hyperseal._errors, IoError);
pyo3::import_exception!(hyperseal._errors, AlreadyFinalized);

/// The Python exception for a library error.
pub fn to_py(e: hyperseal::Error) -> PyErr {
    use hyperseal::Error as E;
    let e = match e {
        E::Io(io) => E::from_io(io),
        e => e,
    };
    let msg = e.to_string();
    match e {
        E::HeaderMac | E::ChunkAuth(_) | E::Truncated(_) | E::WrongPassphrase | E::WrongKey => {
            AuthenticationError::new_err(msg)
        }
        E::NoIdentityMatched => NoIdentityError::new_err(msg),
        E::InvalidKey(_) | E::InvalidRecipient(_) | E::IncompatibleRecipients(_) => {
            InvalidKeyError::new_err(msg)
        }
        E::InvalidArgument(_) => ArgumentError::new_err(msg),
        // An input that ends inside the header is a malformed file, not an I/O failure.
        E::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            FormatError::new_err("file is truncated inside its header")
        }
        E::Io(_) | E::Crypto => IoError::new_err(msg),
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
