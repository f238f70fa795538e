//! Key pairs and key parsing.
//!
//! A key string that names an age plugin (`age1NAME1…`, `AGE-PLUGIN-NAME-1…`) is refused by
//! the library unless the call passes `allowPlugins: true` (there are no plugin programs in a
//! browser, so with it such a key fails later, when the plugin is not found); the flag goes
//! through as the library's `Plugins` policy. Nothing here is cached.

use std::sync::Arc;

use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::{self, Callbacks, Identity, Kind, Recipient};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::args;
use crate::errors::{arg, error, fail};

/// Generates a key pair: `{ publicKey, privateKey }`, exactly as `hyperseal keygen` writes them.
/// `options.kind`: 'hybrid' (ML-KEM-768 + X25519, the default), 'x25519', 'mlkem1024' (RSA
/// kinds are not available in the browser build).
#[wasm_bindgen(js_name = generateKeyPair)]
pub fn generate_key_pair(options: JsValue) -> Result<js_sys::Object, JsValue> {
    let name = args::string_field(&options, "kind")?.unwrap_or_else(|| "hybrid".into());
    let kind = Kind::from_name(&name)
        .ok_or_else(|| arg(format!("unknown key kind {name:?}: use hybrid, x25519 or mlkem1024")))?;
    let key = recipient::generate(kind).map_err(fail)?;
    let pair = js_sys::Object::new();
    for (field, value) in [("publicKey", key.public.as_str()), ("privateKey", key.secret.as_str())] {
        js_sys::Reflect::set(&pair, &JsValue::from_str(field), &JsValue::from_str(value))?;
    }
    Ok(pair)
}

/// The public key of a private key (what `hyperseal pubkey` prints).
#[wasm_bindgen(js_name = publicKeyOf)]
pub fn public_key_of(private_key: String) -> Result<String, JsValue> {
    let private_key = Zeroizing::new(private_key);
    recipient::public_of(&private_key).map_err(fail)
}

/// `options.allowPlugins` (false when not given).
pub(crate) fn allow_plugins(options: &JsValue) -> Result<bool, JsValue> {
    args::bool_field(options, "allowPlugins")
}

/// The library's callbacks for a call: answer nothing, allow plugins only if asked to.
fn policy(allow_plugins: bool) -> Arc<dyn Callbacks> {
    Arc::new(Plugins::allowed(allow_plugins))
}

/// Parses one public key or a list of them (a recipients file with several lines is accepted,
/// as the CLI's `-R` does); plugin recipients only with `allow_plugins`.
pub(crate) fn recipients(
    public_key: &JsValue,
    allow_plugins: bool,
) -> Result<Vec<Box<dyn Recipient>>, JsValue> {
    let keys = args::strings(public_key, "publicKey")?;
    if keys.is_empty() {
        return Err(arg("publicKey: give at least one public key"));
    }
    let mut out = Vec::with_capacity(keys.len());
    for k in &keys {
        if k.trim().is_empty() {
            return Err(error(hyperseal::ErrorCode::Key, "invalid recipient: empty public key"));
        }
        if k.trim().lines().count() > 1 && !k.trim_start().starts_with("-----BEGIN") {
            out.extend(recipient::parse_recipients_file_with(k, policy(allow_plugins)).map_err(fail)?);
        } else {
            out.push(recipient::parse_recipient_with(k, policy(allow_plugins)).map_err(fail)?);
        }
    }
    Ok(out)
}

/// Parses a private key: a secret key line or an identity file as the CLI writes it. The text
/// is zeroized when parsed; the parsed keys zeroize themselves. Plugin identities only with
/// `allow_plugins`.
pub(crate) fn identities(
    private_key: String,
    allow_plugins: bool,
) -> Result<Arc<Vec<Box<dyn Identity>>>, JsValue> {
    let text = Zeroizing::new(private_key);
    Ok(Arc::new(recipient::parse_identities_with(&text, policy(allow_plugins)).map_err(fail)?))
}

/// Both passphrase identities (age's scrypt, hyperseal's Argon2id): each opens only its own
/// stanza type, so a stream can be opened before its header says which one it needs.
pub(crate) fn passphrase_identities(passphrase: String) -> Arc<Vec<Box<dyn Identity>>> {
    Arc::new(recipient::passphrase_identities(Zeroizing::new(passphrase)))
}
