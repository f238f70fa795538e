//! Every failure leaves the addon as a JS `Error` whose `code` is one of a few stable strings.
//! `hyperseal::Error` is mapped here and nowhere else, so the codes cannot drift apart between
//! the sync, async, file and stream entry points.

use hyperseal::ErrorCode;
use napi::bindgen_prelude::{FromNapiValue, JsError, Status, ToNapiValue, Unknown};
use napi::{sys, Env};

/// The stable `code` strings: the library's one list (`hyperseal::ErrorCode`), wrapped so napi
/// can carry it (it needs `From<Status>`, which only this crate may add).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code(pub ErrorCode);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

/// napi's own failures (an argument of the wrong JS type, mostly) are argument errors.
impl From<Status> for Code {
    fn from(_: Status) -> Self {
        Code(ErrorCode::Argument)
    }
}

/// Every `code` string, in a stable order (`ERROR_CODES` in JS).
#[napi_derive::napi]
pub fn error_codes() -> Vec<&'static str> {
    ErrorCode::ALL.iter().map(|c| c.as_str()).collect()
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
        Fail::new(Code(ErrorCode::Argument), msg)
    }

    /// Builds the JS error object on the main thread, for async completions: napi rejects a
    /// promise with an `Error<Status>`, so the coded object is made here and handed back
    /// by reference, which napi then rejects with verbatim.
    pub fn into_rejection(self, env: &Env) -> napi::Error {
        // SAFETY: called on the JS thread that owns `env` (Task::resolve / reject).
        unsafe {
            let raw = self.into_js_error(env.raw());
            match Unknown::from_napi_value(env.raw(), raw) {
                Ok(v) if !raw.is_null() => napi::Error::from(v),
                _ => napi::Error::new(Status::GenericFailure, "ERR_HYPERSEAL: could not build the error"),
            }
        }
    }

    /// The JS `Error` with `code` set, as a value (null if napi could not make one).
    ///
    /// # Safety
    /// `env` is the live env of the JS thread this runs on.
    unsafe fn into_js_error(self, env: sys::napi_env) -> sys::napi_value {
        let coded: JsErr = self.into();
        JsError::from(coded).into_value(env)
    }
}

/// A failure handed to JS as a value rather than thrown: a file's `error` in a tree re-key's
/// report is the same coded `Error` a single-file call rejects with.
impl ToNapiValue for Fail {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        match val.into_js_error(env) {
            raw if raw.is_null() => {
                Err(napi::Error::new(Status::GenericFailure, "could not build the error"))
            }
            raw => Ok(raw),
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
        let msg = match &e {
            hyperseal::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                "file is truncated inside its header".to_string()
            }
            e => e.to_string(),
        };
        Fail { code: Code(e.code()), msg }
    }
}

/// Toolkit errors, with the codes the toolkit assigns (`hyperseal_toolkit::Error::code`).
impl From<hyperseal_toolkit::Error> for Fail {
    fn from(e: hyperseal_toolkit::Error) -> Self {
        Fail { code: toolkit_code(e.code()), msg: e.to_string() }
    }
}

impl From<hyperseal_toolkit::token::TokenError> for Fail {
    fn from(e: hyperseal_toolkit::token::TokenError) -> Self {
        Fail { code: toolkit_code(e.code()), msg: e.to_string() }
    }
}

fn toolkit_code(code: &str) -> Code {
    Code(ErrorCode::from_code(code).unwrap_or(ErrorCode::Argument))
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Self {
        Fail::from(hyperseal::Error::from(e))
    }
}

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Self {
        Fail::arg(e.reason.clone())
    }
}

/// `Task` for a job on the libuv pool whose `run(&mut self)` gives the JS value or a `Fail`:
/// the failure rejects the promise with its coded error.
macro_rules! fail_task {
    ($task:ty => $js:ty) => {
        impl napi::Task for $task {
            type Output = Result<$js, $crate::errors::Fail>;
            type JsValue = $js;

            fn compute(&mut self) -> napi::Result<Self::Output> {
                Ok(self.run())
            }

            fn resolve(&mut self, env: napi::Env, output: Self::Output) -> napi::Result<$js> {
                output.map_err(|f| f.into_rejection(&env))
            }
        }
    };
}
pub(crate) use fail_task;
