//! Errors as JS `Error`s with a stable `code` (`ERR_HYPERSEAL_*`, from the library's one list).

use hyperseal::ErrorCode;
use wasm_bindgen::prelude::*;

/// A JS `Error` with `code` set. Messages are the library's, which never contain secrets.
pub(crate) fn error(code: ErrorCode, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("code"), &JsValue::from_str(code.as_str()));
    e.into()
}

/// A library error as a JS error.
pub(crate) fn fail(e: hyperseal::Error) -> JsValue {
    error(e.code(), &e.to_string())
}

/// A bad argument (type or option) as a JS error.
pub(crate) fn arg(message: impl AsRef<str>) -> JsValue {
    error(ErrorCode::Argument, message.as_ref())
}

/// Every error code string, in the library's stable order (as Node's `ERROR_CODES`).
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Vec<String> {
    ErrorCode::ALL.iter().map(|c| c.as_str().to_string()).collect()
}

/// Toolkit errors, with the Node package's codes: failed opens and verifies are `AUTH`, unusable
/// keys `KEY`, unknown algorithms and out-of-range lengths or parameters `ARGUMENT`.
pub(crate) fn fail_kit(e: hyperseal_toolkit::Error) -> JsValue {
    use hyperseal_toolkit::Error as E;
    let code = match &e {
        E::Crypto => ErrorCode::Auth,
        E::InvalidKey(_) | E::Malformed(_) => ErrorCode::Key,
        E::Io(_) => ErrorCode::Io,
        _ => ErrorCode::Argument,
    };
    error(code, &e.to_string())
}

/// Token errors, with the Node package's codes.
pub(crate) fn fail_token(e: hyperseal_toolkit::token::TokenError) -> JsValue {
    use hyperseal_toolkit::token::TokenError as T;
    let code = match e {
        T::Malformed => ErrorCode::Format,
        T::UnknownKeyId => ErrorCode::TokenUnknownKey,
        T::Expired => ErrorCode::TokenExpired,
        T::Auth => ErrorCode::Auth,
    };
    error(code, &e.to_string())
}
