//! Key pairs and key parsing.
//!
//! A key string that names an age plugin (`age1NAME1…`, `AGE-PLUGIN-NAME-1…`) is refused by
//! the library unless the call passes `allowPlugins: true` (there are no plugin programs in a
//! browser, so with it such a key fails later, when the plugin is not found); the flag goes
//! through as the library's `Plugins` policy. Nothing here is cached.
//!
//! Wherever keys are taken, a passkey may stand among them once its authenticator has answered
//! (`js/passkeys.js` asks it, on the page's thread): `{ fido2prf: { nonce, first, second } }`,
//! the stanza nonce and the two PRF outputs, from which the library derives the wrapping key.

use std::sync::Arc;

use hyperseal::recipient::fido2prf::{self, Fido2PrfIdentity, Fido2PrfRecipient, WrappingKey};
use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::{self, Callbacks, Identity, Kind, Recipient};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::args;
use crate::errors::{arg, error, fail};
use crate::passkey;

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
/// as the CLI's `-R` does); plugin recipients only with `allow_plugins`. An item may also be a
/// passkey the authenticator has answered for (`passkey::answered`, from `js/passkeys.js`).
pub(crate) fn recipients(
    public_key: &JsValue,
    allow_plugins: bool,
) -> Result<Vec<Box<dyn Recipient>>, JsValue> {
    let items = key_items(public_key, "publicKey", "WebAuthnRecipient")?;
    if items.is_empty() {
        return Err(arg("publicKey: give at least one public key"));
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let k = match item {
            Item::Text(k) => k,
            Item::Passkey(nonce, key) => {
                out.push(Box::new(Fido2PrfRecipient::new(nonce, key)) as Box<dyn Recipient>);
                continue;
            }
        };
        if k.trim().is_empty() {
            return Err(error(hyperseal::ErrorCode::Key, "invalid recipient: empty public key"));
        }
        if k.trim().lines().count() > 1 && !k.trim_start().starts_with("-----BEGIN") {
            out.extend(recipient::parse_recipients_file_with(&k, policy(allow_plugins)).map_err(fail)?);
        } else {
            out.push(recipient::parse_recipient_with(&k, policy(allow_plugins)).map_err(fail)?);
        }
    }
    Ok(out)
}

/// One key argument's item: key text, or a passkey's stanza nonce and wrapping key.
pub(crate) enum Item {
    Text(Zeroizing<String>),
    Passkey([u8; fido2prf::NONCE_LEN], WrappingKey),
}

/// A key argument: a string, an answered passkey, or an array of them. `unanswered`: the
/// class whose objects must be answered first (they are asked for asynchronously).
pub(crate) fn key_items(v: &JsValue, name: &str, unanswered: &str) -> Result<Vec<Item>, JsValue> {
    let one = |item: JsValue| -> Result<Item, JsValue> {
        if let Some(s) = item.as_string() {
            return Ok(Item::Text(Zeroizing::new(s)));
        }
        match passkey::answered(&item)? {
            Some((nonce, key)) => Ok(Item::Passkey(nonce, key)),
            None => Err(arg(format!(
                "{name} must be a string or an array of strings (a {unanswered} is asked asynchronously: \
                 give it to the Async one-shots, the streams, a WorkerPool or rekeyFile)"
            ))),
        }
    };
    match v.dyn_ref::<js_sys::Array>() {
        Some(array) => array.iter().map(one).collect(),
        None => Ok(vec![one(v.clone())?]),
    }
}

/// Parses a private key: a secret key line or an identity file as the CLI writes it, a list of
/// them, or answered passkeys among them. The text is zeroized when parsed; the parsed keys
/// zeroize themselves. Plugin identities only with `allow_plugins`.
pub(crate) fn identities(
    private_key: &JsValue,
    allow_plugins: bool,
) -> Result<Arc<Vec<Box<dyn Identity>>>, JsValue> {
    let mut texts = Vec::new();
    let mut out: Vec<Box<dyn Identity>> = Vec::new();
    for item in key_items(private_key, "privateKey", "WebAuthnIdentity")? {
        match item {
            Item::Text(t) => texts.push(t),
            Item::Passkey(nonce, key) => out.push(Box::new(Fido2PrfIdentity::new(nonce, key))),
        }
    }
    // A PEM key (an OpenSSH private key) is a key file of its own: parsed alone, so that it can
    // stand in one list beside secret key lines (the web app's Identities box).
    let (pem, lines): (Vec<_>, Vec<_>) = texts.iter().partition(|t| t.trim_start().starts_with("-----BEGIN"));
    for text in pem {
        out.extend(recipient::parse_identities_with(text, policy(allow_plugins)).map_err(fail)?);
    }
    if !lines.is_empty() || out.is_empty() {
        let text = Zeroizing::new(lines.iter().map(|t| t.as_str()).collect::<Vec<_>>().join("\n"));
        out.extend(recipient::parse_identities_with(&text, policy(allow_plugins)).map_err(fail)?);
    }
    Ok(Arc::new(out))
}

/// Both passphrase identities (age's scrypt, hyperseal's Argon2id): each opens only its own
/// stanza type, so a stream can be opened before its header says which one it needs.
pub(crate) fn passphrase_identities(passphrase: String) -> Arc<Vec<Box<dyn Identity>>> {
    Arc::new(recipient::passphrase_identities(Zeroizing::new(passphrase)))
}
