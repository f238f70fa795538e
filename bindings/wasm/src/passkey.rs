//! Passkeys and security keys (the library's `recipient::fido2prf`): what `js/passkeys.js`
//! needs around its WebAuthn calls, which are all it does itself. Here: the identity string
//! (`AGE-PLUGIN-FIDO2PRF-1…`) both ways, a fresh nonce and its two PRF inputs (encrypting), the
//! PRF inputs of a file's passkey stanzas (decrypting, from the start of the file), whether an
//! answer opens its stanza, and reading an answered passkey among key arguments (`keys.rs`).
//!
//! An answered passkey is `{ fido2prf: { nonce, first, second } }`: the stanza nonce and the
//! authenticator's two PRF outputs. It is plain data so that `WorkerPool` can hand it to a
//! worker as it hands a key string; the wrapping key is derived from it in each instance that
//! uses it, and that instance zeroizes it. One answer seals one file: `js/passkeys.js` asks
//! afresh (a fresh nonce) for every encryption, and the library refuses a second wrap with one
//! recipient.

use std::io::BufReader;

use hyperseal::format::{armor, Header};
use hyperseal::recipient::fido2prf::{
    self, identity_string::PasskeyIdentity, Fido2PrfIdentity, WrappingKey, NONCE_LEN,
};
use hyperseal::recipient::Identity;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use zeroize::Zeroizing;

use crate::args;
use crate::errors::{arg, error, fail};

fn set(o: &js_sys::Object, name: &str, v: impl Into<JsValue>) -> Result<(), JsValue> {
    js_sys::Reflect::set(o, &JsValue::from_str(name), &v.into()).map(|_| ())
}

fn bytes_of(o: &JsValue, name: &str) -> Result<Zeroizing<Vec<u8>>, JsValue> {
    let v = args::field(o, name)?;
    v.dyn_ref::<js_sys::Uint8Array>()
        .map(|a| Zeroizing::new(a.to_vec()))
        .ok_or_else(|| arg(format!("an answered passkey's {name} must be a Uint8Array")))
}

/// `{ nonce, first, second }` for a nonce: the PRF inputs to ask for.
fn inputs(nonce: &[u8; NONCE_LEN]) -> Result<js_sys::Object, JsValue> {
    let (first, second) = fido2prf::prf_inputs(nonce);
    let o = js_sys::Object::new();
    set(&o, "nonce", js_sys::Uint8Array::from(&nonce[..]))?;
    set(&o, "first", js_sys::Uint8Array::from(&first[..]))?;
    set(&o, "second", js_sys::Uint8Array::from(&second[..]))?;
    Ok(o)
}

/// An answered passkey (see the module docs) as its nonce and wrapping key; `None` for any
/// other value.
pub(crate) fn answered(v: &JsValue) -> Result<Option<([u8; NONCE_LEN], WrappingKey)>, JsValue> {
    if !v.is_object() || v.is_instance_of::<js_sys::Array>() {
        return Ok(None);
    }
    let a = js_sys::Reflect::get(v, &JsValue::from_str("fido2prf")).unwrap_or(JsValue::UNDEFINED);
    if !a.is_object() {
        return Ok(None);
    }
    let nonce: [u8; NONCE_LEN] = bytes_of(&a, "nonce")?
        .as_slice()
        .try_into()
        .map_err(|_| arg(format!("an answered passkey's nonce must be {NONCE_LEN} bytes")))?;
    let key = WrappingKey::from_prf(&bytes_of(&a, "first")?, &bytes_of(&a, "second")?).map_err(fail)?;
    Ok(Some((nonce, key)))
}

/// The identity string of a credential: `AGE-PLUGIN-FIDO2PRF-1…`.
#[wasm_bindgen(js_name = passkeyIdentity)]
pub fn passkey_identity(credential_id: &[u8], rp_id: String, transports: JsValue) -> Result<String, JsValue> {
    let transports = match transports.is_undefined() || transports.is_null() {
        true => Vec::new(),
        false => args::strings(&transports, "transports")?,
    };
    PasskeyIdentity { credential_id: credential_id.to_vec(), rp_id, transports }.encode().map_err(fail)
}

/// An identity string's parts: `{ credentialId, rpId, transports }`.
#[wasm_bindgen(js_name = passkeyIdentityParse)]
pub fn passkey_identity_parse(identity: String) -> Result<js_sys::Object, JsValue> {
    let id = PasskeyIdentity::parse(&identity).map_err(fail)?;
    let o = js_sys::Object::new();
    set(&o, "credentialId", js_sys::Uint8Array::from(&id.credential_id[..]))?;
    set(&o, "rpId", JsValue::from_str(&id.rp_id))?;
    set(&o, "transports", id.transports.iter().map(|t| JsValue::from_str(t)).collect::<js_sys::Array>())?;
    Ok(o)
}

/// A fresh nonce and its PRF inputs, for one encryption: `{ nonce, first, second }`.
#[wasm_bindgen(js_name = passkeyPrfInputs)]
pub fn passkey_prf_inputs() -> Result<js_sys::Object, JsValue> {
    inputs(&fido2prf::fresh_nonce().map_err(fail)?)
}

/// The header at the start of `prefix` (binary or armored); `None` while more bytes are needed
/// and `ended` is false.
fn header(prefix: &[u8], ended: bool) -> Result<Option<Header>, JsValue> {
    if prefix.is_empty() && !ended {
        return Ok(None);
    }
    if armor::is_armored(prefix) {
        match Header::read_from(&mut BufReader::new(armor::ArmoredReader::new(prefix))) {
            Ok(h) => return Ok(Some(h)),
            // Armor is 4/3 of the bytes, plus line ends: past that the header cannot be longer.
            Err(_) if !ended && prefix.len() < hyperseal::limits::HEADER_BYTES / 3 * 5 => return Ok(None),
            Err(e) => return Err(fail(e)),
        }
    }
    match Header::parse_prefix(prefix).map_err(fail)? {
        Some((h, _)) => Ok(Some(h)),
        None if !ended => Ok(None),
        None => Err(error(hyperseal::ErrorCode::Format, "the file ends inside its header")),
    }
}

/// The PRF inputs of every passkey stanza of the file that starts with `prefix`, in order
/// (`[{ nonce, first, second }]`), or `undefined` while the header is not complete and
/// `ended` is false. A file without any is `ERR_HYPERSEAL_NO_IDENTITY`; a malformed one
/// `ERR_HYPERSEAL_FORMAT`.
#[wasm_bindgen(js_name = passkeyStanzas)]
pub fn passkey_stanzas(prefix: &[u8], ended: bool) -> Result<JsValue, JsValue> {
    let Some(h) = header(prefix, ended)? else { return Ok(JsValue::UNDEFINED) };
    let nonces = fido2prf::stanza_nonces(&h.stanzas).map_err(fail)?;
    if nonces.is_empty() {
        return Err(error(
            hyperseal::ErrorCode::NoIdentity,
            "the file is not encrypted to any passkey (it has no age-encryption.org/fido2prf stanza)",
        ));
    }
    Ok(nonces.iter().map(|n| inputs(n).map(JsValue::from)).collect::<Result<js_sys::Array, _>>()?.into())
}

/// Whether an answered passkey opens its stanza in the header at the start of `prefix` (so the
/// page asks the authenticator no more than it must).
#[wasm_bindgen(js_name = passkeyOpens)]
pub fn passkey_opens(prefix: &[u8], answer: JsValue) -> Result<bool, JsValue> {
    let Some((nonce, key)) = answered(&answer)? else { return Err(arg("not an answered passkey")) };
    let h = header(prefix, true)?.expect("ended");
    let id = Fido2PrfIdentity::new(nonce, key);
    Ok(matches!(id.unwrap_stanzas(&h.stanzas), Some(Ok(_))))
}
