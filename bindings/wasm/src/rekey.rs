//! `rekeyHead`: the header half of a re-key (the library's `rekey::rekey_head`). It takes the
//! start of a binary file (at least its whole header) and returns the new header and the old
//! header's length; the re-keyed file is the new header followed by the old file from that
//! length on. `js/core.js` builds `rekey` (bytes) and `rekeyFile` (a `Blob`/`File`, of which
//! only the start is read: the payload is never copied into the page) on it.
//!
//! Removal is not revocation: a removed recipient who kept an old copy (or its file key) still
//! reads this one. Only a fresh encryption protects what is written from then on.

use hyperseal::recipient::Recipient;
use hyperseal::rekey::Change;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::args;
use crate::errors::{arg, fail};
use crate::keys;

/// `options[name]` as recipients; `None` when not given.
fn recipients(
    options: &JsValue,
    name: &str,
    allow_plugins: bool,
) -> Result<Option<Vec<Box<dyn Recipient>>>, JsValue> {
    let v = args::field(options, name)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    // Type-checked here so a wrong type names the option, not `publicKey`.
    if keys::key_items(&v, &format!("options.{name}"), "WebAuthnRecipient")?.is_empty() {
        return Ok(Some(Vec::new()));
    }
    keys::recipients(&v, allow_plugins).map(Some)
}

/// The options as the library's `Change`: `recipients` (the full new list), `add`, `remove`,
/// `removeOwn`.
fn change(options: &JsValue) -> Result<Change, JsValue> {
    let allow = keys::allow_plugins(options)?;
    let set = match recipients(options, "recipients", allow)? {
        Some(list) if list.is_empty() => return Err(arg("options.recipients: give at least one public key")),
        set => set,
    };
    Ok(Change {
        set,
        add: recipients(options, "add", allow)?.unwrap_or_default(),
        remove: recipients(options, "remove", allow)?.unwrap_or_default(),
        remove_own: args::bool_field(options, "removeOwn")?,
    })
}

/// Re-keys the header at the start of `head` (a `Uint8Array`: the whole file, or at least its
/// header), opened with `identities` (one private key or several) or, when they are `null`,
/// `options.passphrase`. Returns `{ header, oldHeaderLength, before, after, removed, added }`:
/// the new file is `header` followed by the old file from `oldHeaderLength` on. Armored input
/// is refused.
#[wasm_bindgen(js_name = rekeyHead)]
pub fn rekey_head(head: JsValue, identities: JsValue, options: JsValue) -> Result<js_sys::Object, JsValue> {
    let head = head.dyn_into::<js_sys::Uint8Array>().map_err(|_| arg("data must be a Uint8Array"))?.to_vec();
    let ids = match (
        identities.is_null() || identities.is_undefined(),
        args::string_field(&options, "passphrase")?,
    ) {
        (true, Some(p)) if p.is_empty() => return Err(arg("options.passphrase: the passphrase is empty")),
        (true, Some(p)) => keys::passphrase_identities(p),
        (false, Some(_)) => return Err(arg("give identities or a passphrase, not both")),
        (true, None) => return Err(arg("identities: give a private key (or options.passphrase)")),
        (false, None) => {
            if keys::key_items(&identities, "identities", "WebAuthnIdentity")?.is_empty() {
                return Err(arg("identities: give at least one private key"));
            }
            keys::identities(&identities, keys::allow_plugins(&options)?)?
        }
    };
    let change = change(&options)?;
    let (header, old_len, plan) = hyperseal::rekey::rekey_head(&head, &ids, &change).map_err(fail)?;
    let out = js_sys::Object::new();
    let strings = |v: &[String]| v.iter().map(|s| JsValue::from_str(s)).collect::<js_sys::Array>();
    let fields: [(&str, JsValue); 6] = [
        ("header", js_sys::Uint8Array::from(&header[..]).into()),
        ("oldHeaderLength", (old_len as f64).into()),
        ("before", strings(&plan.before).into()),
        ("after", strings(&plan.after).into()),
        ("removed", (plan.removed as f64).into()),
        ("added", (plan.added as f64).into()),
    ];
    for (name, value) in fields {
        js_sys::Reflect::set(&out, &JsValue::from_str(name), &value)?;
    }
    Ok(out)
}
