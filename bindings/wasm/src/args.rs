//! Decoding JS arguments: data as `Uint8Array` or string, one public key or a list, options
//! objects. Anything else is an `ERR_HYPERSEAL_ARGUMENT` error naming the argument.

use hyperseal::Options;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::errors::arg;

/// A `Uint8Array` (copied into WebAssembly memory) or a string (its UTF-8 bytes).
pub(crate) fn bytes(v: &JsValue, name: &str) -> Result<Vec<u8>, JsValue> {
    if let Some(s) = v.as_string() {
        return Ok(s.into_bytes());
    }
    match v.dyn_ref::<js_sys::Uint8Array>() {
        Some(a) => Ok(a.to_vec()),
        None => Err(arg(format!("{name} must be a Uint8Array or a string"))),
    }
}

/// A string or an array of strings.
pub(crate) fn strings(v: &JsValue, name: &str) -> Result<Vec<String>, JsValue> {
    if let Some(s) = v.as_string() {
        return Ok(vec![s]);
    }
    let bad = || arg(format!("{name} must be a string or an array of strings"));
    let array = v.dyn_ref::<js_sys::Array>().ok_or_else(bad)?;
    array.iter().map(|item| item.as_string().ok_or_else(bad)).collect()
}

/// Reads `options[field]`; `undefined` for a missing options object or field.
pub(crate) fn field(options: &JsValue, field: &str) -> Result<JsValue, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(JsValue::UNDEFINED);
    }
    if !options.is_object() {
        return Err(arg("options must be an object"));
    }
    js_sys::Reflect::get(options, &JsValue::from_str(field)).map_err(|_| arg("options could not be read"))
}

/// An optional string option.
pub(crate) fn string_field(options: &JsValue, name: &str) -> Result<Option<String>, JsValue> {
    let v = field(options, name)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.as_string().map(Some).ok_or_else(|| arg(format!("options.{name} must be a string")))
}

/// An optional boolean option.
pub(crate) fn bool_field(options: &JsValue, name: &str) -> Result<bool, JsValue> {
    let v = field(options, name)?;
    if v.is_undefined() || v.is_null() {
        return Ok(false);
    }
    v.as_bool().ok_or_else(|| arg(format!("options.{name} must be a boolean")))
}

/// `{ format: 'hyperseal' | 'age' }` → the library's options (defaults for everything else: on
/// WebAssembly the default suite is ChaCha20-Poly1305, the fastest without AES instructions).
pub(crate) fn file_options(options: &JsValue) -> Result<Options, JsValue> {
    match string_field(options, "format")?.as_deref() {
        None | Some("hyperseal") => Ok(Options::default()),
        Some("age") => Ok(Options::age()),
        Some(other) => Err(arg(format!("options.format must be 'hyperseal' or 'age', not {other:?}"))),
    }
}
