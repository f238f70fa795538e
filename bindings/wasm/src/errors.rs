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

/// Toolkit errors, with the codes the toolkit assigns (`hyperseal_toolkit::Error::code`).
pub(crate) fn fail_kit(e: hyperseal_toolkit::Error) -> JsValue {
    error(ErrorCode::from_code(e.code()).unwrap_or(ErrorCode::Argument), &e.to_string())
}

/// Token errors, each with its own code.
pub(crate) fn fail_token(e: hyperseal_toolkit::token::TokenError) -> JsValue {
    error(ErrorCode::from_code(e.code()).unwrap_or(ErrorCode::Argument), &e.to_string())
}
