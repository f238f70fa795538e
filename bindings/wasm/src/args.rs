//! Decoding JS arguments: data as `Uint8Array` or string, one public key or a list, options
//! objects. Anything else is an `ERR_HYPERSEAL_ARGUMENT` error naming the argument.

use hyperseal::Options;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::errors::{arg, fail};

/// A copy of caller data in WebAssembly memory that is wiped when dropped (`hyperseal::wipe`, at
/// memset speed: `Zeroizing` makes one volatile store per byte, 16 million for a 16 MB input).
/// Linear memory outlives the call and is reused by the next allocation, so a plaintext copy is
/// never left behind.
pub(crate) struct Plaintext(Vec<u8>);

impl Plaintext {
    /// `data` as for [`bytes`], held until dropped, then wiped.
    pub(crate) fn of(data: &JsValue, name: &str) -> Result<Self, JsValue> {
        bytes(data, name).map(Plaintext)
    }

    /// A zeroed buffer of `len` bytes, wiped when dropped unless taken with [`Plaintext::take`].
    pub(crate) fn zeroed(len: usize) -> Self {
        Plaintext(vec![0; len])
    }

    /// The first `len` bytes, handed to the caller (and so no longer wiped here).
    pub(crate) fn take(mut self, len: usize) -> Vec<u8> {
        self.0.truncate(len);
        std::mem::take(&mut self.0)
    }
}

impl std::ops::Deref for Plaintext {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::DerefMut for Plaintext {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Drop for Plaintext {
    fn drop(&mut self) {
        hyperseal::wipe(&mut self.0);
    }
}

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
    let format = string_field(options, "format")?;
    Options::named(format.as_deref().unwrap_or("hyperseal"), None, None).map_err(fail)
}

/// An optional non-negative whole-number option.
pub(crate) fn u32_field(options: &JsValue, name: &str) -> Result<Option<u32>, JsValue> {
    number_field(options, name)?
        .map(|n| match n >= 0.0 && n <= f64::from(u32::MAX) && n.fract() == 0.0 {
            true => Ok(n as u32),
            false => Err(arg(format!("options.{name} must be a whole number from 0 to 2^32 - 1"))),
        })
        .transpose()
}

/// An optional number option.
pub(crate) fn number_field(options: &JsValue, name: &str) -> Result<Option<f64>, JsValue> {
    let v = field(options, name)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.as_f64().map(Some).ok_or_else(|| arg(format!("options.{name} must be a number")))
}

/// Optional bytes (`undefined`/`null` = empty), e.g. associated data.
pub(crate) fn opt_bytes(v: &JsValue, name: &str) -> Result<Vec<u8>, JsValue> {
    match v.is_undefined() || v.is_null() {
        true => Ok(Vec::new()),
        false => bytes(v, name),
    }
}
