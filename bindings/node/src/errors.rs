//! Every failure leaves the addon as a JS `Error` whose `code` is one of a few stable strings.
//! `hyperseal::Error` is mapped here and nowhere else, so the codes cannot drift apart between
//! the sync, async, file and stream entry points.

use napi::bindgen_prelude::{FromNapiValue, JsError, Status, Unknown};
use napi::Env;

/// The stable `code` strings (part of the public API: never rename one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// A chunk or the header failed to authenticate, or the payload was cut short.
    Auth,
    /// None of the given private keys opens the file.
    NoIdentity,
    /// Not a hyperseal/age file, or a malformed one.
    Format,
    /// A key string could not be parsed, or keys cannot be mixed.
    Key,
    /// Wrong argument types or bad options.
    Argument,
    /// Reading or writing a file failed.
    Io,
    /// A toolkit token authenticated but its expiry time has passed.
    TokenExpired,
    /// A toolkit token names a key id that none of the given keys has.
    TokenUnknownKey,
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        match self {
            Code::Auth => "ERR_HYPERSEAL_AUTH",
            Code::NoIdentity => "ERR_HYPERSEAL_NO_IDENTITY",
            Code::Format => "ERR_HYPERSEAL_FORMAT",
            Code::Key => "ERR_HYPERSEAL_KEY",
            Code::Argument => "ERR_HYPERSEAL_ARGUMENT",
            Code::Io => "ERR_HYPERSEAL_IO",
            Code::TokenExpired => "ERR_HYPERSEAL_TOKEN_EXPIRED",
            Code::TokenUnknownKey => "ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY",
        }
    }
}

/// napi's own failures (an argument of the wrong JS type, mostly) are argument errors.
impl From<Status> for Code {
    fn from(_: Status) -> Self {
        Code::Argument
    }
}

/// What sync functions return as their error: napi throws it with `code` set.
pub type JsErr = napi::Error<Code>;

/// A failure that can cross threads (no JS handles inside), turned into a JS error on the
/// main thread.
#[derive(Debug)]
pub struct Fail {
    pub code: Code,
    pub msg: String,
}

impl Fail {
    pub fn new(code: Code, msg: impl Into<String>) -> Self {
        Fail { code, msg: msg.into() }
    }

    pub fn arg(msg: impl Into<String>) -> Self {
        Fail::new(Code::Argument, msg)
    }

    /// Builds the JS error object on the main thread, for async completions: napi rejects a
    /// promise with an `Error<Status>`, so the coded object is made here and handed back
    /// by reference, which napi then rejects with verbatim.
    pub fn into_rejection(self, env: &Env) -> napi::Error {
        let coded: JsErr = self.into();
        // SAFETY: called on the JS thread that owns `env` (Task::resolve / reject).
        unsafe {
            let raw = JsError::from(coded).into_value(env.raw());
            match Unknown::from_napi_value(env.raw(), raw) {
                Ok(v) if !raw.is_null() => napi::Error::from(v),
                _ => napi::Error::new(Status::GenericFailure, "ERR_HYPERSEAL: could not build the error"),
            }
        }
    }
}

impl From<Fail> for JsErr {
    fn from(f: Fail) -> Self {
        napi::Error::new(f.code, f.msg)
    }
}

impl From<hyperseal::Error> for Fail {
    fn from(e: hyperseal::Error) -> Self {
        use hyperseal::Error as E;
        let e = match e {
            E::Io(io) => E::from_io(io),
            e => e,
        };
        let code = match &e {
            E::HeaderMac | E::ChunkAuth(_) | E::Truncated(_) | E::WrongPassphrase | E::WrongKey => Code::Auth,
            E::NoIdentityMatched => Code::NoIdentity,
            E::InvalidKey(_) | E::InvalidRecipient(_) | E::IncompatibleRecipients(_) => Code::Key,
            E::InvalidArgument(_) => Code::Argument,
            // An input that ends inside the header is a malformed file, not an I/O failure.
            E::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => Code::Format,
            E::Io(_) | E::Crypto => Code::Io,
            _ => Code::Format,
        };
        let msg = match &e {
            E::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                "file is truncated inside its header".to_string()
            }
            e => e.to_string(),
        };
        Fail { code, msg }
    }
}

/// Toolkit errors: failed opens/verifies are `AUTH`; unusable keys (wrong length, bad PEM or
/// key line) are `KEY`; unknown algorithms and out-of-range lengths or parameters `ARGUMENT`.
impl From<hyperseal_toolkit::Error> for Fail {
    fn from(e: hyperseal_toolkit::Error) -> Self {
        use hyperseal_toolkit::Error as E;
        let code = match &e {
            E::Crypto => Code::Auth,
            // The only encoded inputs the bindings take are keys (PEM, token key lines).
            E::InvalidKey(_) | E::Malformed(_) => Code::Key,
            E::Io(_) => Code::Io,
            _ => Code::Argument,
        };
        Fail { code, msg: e.to_string() }
    }
}

impl From<hyperseal_toolkit::token::TokenError> for Fail {
    fn from(e: hyperseal_toolkit::token::TokenError) -> Self {
        use hyperseal_toolkit::token::TokenError as T;
        let code = match e {
            T::Malformed => Code::Format,
            T::UnknownKeyId => Code::TokenUnknownKey,
            T::Expired => Code::TokenExpired,
            T::Auth => Code::Auth,
        };
        Fail { code, msg: e.to_string() }
    }
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Self {
        Fail::from(hyperseal::Error::from_io(e))
    }
}

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Self {
        Fail::arg(e.reason.clone())
    }
}
