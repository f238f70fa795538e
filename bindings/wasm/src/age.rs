//! What `hyperseal/age` (typage's API, `js/age-api.js`) needs of the library, under the Node
//! addon's names (`bindings/node/src/age.rs`): age files made and opened by `Encryptor` (with
//! recipients, a passphrase, or a file key JS recipients wrapped: `Encryptor::with_file_key`),
//! `Decryptor` and `Opener`, the header codec, `detached`'s header-only decryption and its
//! `FileKeyIdentity`, and the armor codec. Nothing is framed, parsed or derived here.
//!
//! A plan is `{ recipients, passphrase, workFactor, fileKey, stanzas }` and keys are
//! `{ identities, passphrases, fileKey }`, as the addon takes them; a recipient or identity may
//! also be an answered passkey (`js/passkeys.js`), as everywhere in this package.

use std::io::{BufReader, Write};

use hyperseal::detached::{self, FileKeyIdentity};
use hyperseal::format::{armor, Header, Stanza};
use hyperseal::recipient::scrypt::{ScryptIdentity, ScryptRecipient};
use hyperseal::recipient::{self, x25519, Identity, Recipient};
use hyperseal::{Decryptor, Encryptor, FileKey, Options, Profile};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use zeroize::Zeroizing;

use crate::errors::{arg, error, fail};
use crate::session::{DecryptSession, EncryptSession};
use crate::{args, keys};

fn set(o: &js_sys::Object, name: &str, v: impl Into<JsValue>) -> Result<(), JsValue> {
    js_sys::Reflect::set(o, &JsValue::from_str(name), &v.into()).map(|_| ())
}

fn file_key(v: &JsValue) -> Result<Option<FileKey>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    let bytes = Zeroizing::new(args::bytes(v, "fileKey")?);
    FileKey::from_slice(&bytes).map(Some).ok_or_else(|| arg("a file key must be 16 bytes"))
}

/// A list argument's length (0 when absent).
fn count(v: &JsValue) -> u32 {
    v.dyn_ref::<js_sys::Array>().map_or(0, |a| a.length())
}

fn to_stanza(v: &JsValue) -> Result<Stanza, JsValue> {
    let all = args::strings(&args::field(v, "args")?, "stanza.args")?;
    let (tag, rest) = all.split_first().ok_or_else(|| arg("a stanza needs a type: args[0]"))?;
    Stanza::try_new(tag, rest.to_vec(), args::bytes(&args::field(v, "body")?, "stanza.body")?).map_err(fail)
}

fn from_stanza(s: &Stanza) -> Result<JsValue, JsValue> {
    let o = js_sys::Object::new();
    let a: js_sys::Array = std::iter::once(&s.tag).chain(&s.args).map(|t| JsValue::from_str(t)).collect();
    set(&o, "args", a)?;
    set(&o, "body", js_sys::Uint8Array::from(&s.body[..]))?;
    Ok(o.into())
}

/// The encryptor of `plan`, for an age file.
pub(crate) fn encryptor(plan: &JsValue) -> Result<Encryptor, JsValue> {
    let opts = Options::age();
    if let Some(p) = args::string_field(plan, "passphrase")? {
        let mut r = ScryptRecipient::new(Zeroizing::new(p));
        if let Some(n) = args::u32_field(plan, "workFactor")? {
            r = r.with_work_factor(u8::try_from(n).unwrap_or(u8::MAX)).map_err(fail)?;
        }
        return Encryptor::with_recipients(&[Box::new(r) as Box<dyn Recipient>], opts).map_err(fail);
    }
    let list = args::field(plan, "recipients")?;
    let to = match count(&list) {
        0 => Vec::new(),
        _ => keys::recipients(&list, false)?,
    };
    let Some(key) = file_key(&args::field(plan, "fileKey")?)? else {
        return Encryptor::with_recipients(&to, opts).map_err(fail);
    };
    let mut stanzas = match to.is_empty() {
        true => Vec::new(),
        false => recipient::wrap_all(&to, &key).map_err(fail)?,
    };
    if let Some(custom) = args::field(plan, "stanzas")?.dyn_ref::<js_sys::Array>() {
        for s in custom.iter() {
            stanzas.push(to_stanza(&s)?);
        }
    }
    Encryptor::with_file_key(&key, stanzas, opts).map_err(fail)
}

/// The identities of `keys`: a JS identity's file key first, then identity strings and
/// answered passkeys, then passphrases.
pub(crate) fn identities(keys_arg: &JsValue) -> Result<Vec<Box<dyn Identity>>, JsValue> {
    let mut out: Vec<Box<dyn Identity>> = Vec::new();
    if let Some(k) = file_key(&args::field(keys_arg, "fileKey")?)? {
        out.push(Box::new(FileKeyIdentity::new(k)));
    }
    let ids = args::field(keys_arg, "identities")?;
    if count(&ids) > 0 {
        let parsed = keys::identities(&ids, false)?;
        let parsed = std::sync::Arc::try_unwrap(parsed).map_err(|_| arg("identities are shared"))?;
        out.extend(parsed);
    }
    let pass = args::field(keys_arg, "passphrases")?;
    if count(&pass) > 0 {
        for p in args::strings(&pass, "passphrases")? {
            out.push(Box::new(ScryptIdentity::new(Zeroizing::new(p))));
        }
    }
    Ok(out)
}

/// A fresh file key for JS recipients to wrap.
#[wasm_bindgen(js_name = ageFileKey)]
pub fn age_file_key() -> Vec<u8> {
    FileKey::generate(Profile::Age.file_key_len()).expose().to_vec()
}

fn key32(v: &[u8], what: &str) -> Result<[u8; 32], JsValue> {
    v.try_into().map_err(|_| arg(format!("{what} must be 32 bytes")))
}

/// The ephemeral shares of a header's X25519 stanzas, for an X25519 `CryptoKey` to agree on
/// (Web Crypto's `deriveBits`: the key need not leave its keystore).
#[wasm_bindgen(js_name = ageX25519Shares)]
pub fn age_x25519_shares(header: &[u8]) -> Result<js_sys::Array, JsValue> {
    let (h, _) = Header::parse_prefix(header)
        .map_err(fail)?
        .ok_or_else(|| error(hyperseal::ErrorCode::Format, "the header is incomplete"))?;
    Ok(x25519::stanza_shares(&h.stanzas)
        .iter()
        .map(|s| JsValue::from(js_sys::Uint8Array::from(&s[..])))
        .collect())
}

/// The `age1…` recipient of an X25519 public key (a `CryptoKey`'s, derived by Web Crypto).
#[wasm_bindgen(js_name = ageX25519Recipient)]
pub fn age_x25519_recipient(public_key: &[u8]) -> Result<String, JsValue> {
    Ok(x25519::X25519Recipient::from_bytes(key32(public_key, "an X25519 public key")?).to_bech32())
}

/// The file key of `header` for an X25519 key whose agreements were made outside (`secrets[i]`
/// for `shares[i]`), or `null` when none of its stanzas is for that key.
#[wasm_bindgen(js_name = ageX25519Unwrap)]
pub fn age_x25519_unwrap(
    header: &[u8],
    public_key: &[u8],
    shares: js_sys::Array,
    secrets: js_sys::Array,
) -> Result<JsValue, JsValue> {
    let mut agreed = Vec::with_capacity(shares.length() as usize);
    for (share, secret) in shares.iter().zip(secrets.iter()) {
        let share = args::bytes(&share, "share")?;
        let secret = Zeroizing::new(args::bytes(&secret, "shared secret")?);
        agreed.push((key32(&share, "a share")?, Zeroizing::new(key32(&secret, "a shared secret")?)));
    }
    let id: Box<dyn Identity> =
        Box::new(x25519::X25519Agreed::new(key32(public_key, "an X25519 public key")?, agreed));
    match detached::decrypt_header(header, &[id]) {
        Ok(k) => Ok(js_sys::Uint8Array::from(k.expose()).into()),
        Err(e) if e.code() == hyperseal::ErrorCode::NoIdentity => Ok(JsValue::NULL),
        Err(e) => Err(fail(e)),
    }
}

/// Parses a recipient string, for `addRecipient`'s synchronous check.
#[wasm_bindgen(js_name = ageCheckRecipient)]
pub fn age_check_recipient(recipient: String) -> Result<(), JsValue> {
    keys::recipients(&JsValue::from_str(&recipient), false).map(|_| ())
}

/// `{ stanzas, size }` of the header at the start of `prefix` (binary), or `null` while more
/// bytes are needed and `ended` is false.
#[wasm_bindgen(js_name = ageHeader)]
pub fn age_header(prefix: &[u8], ended: bool) -> Result<JsValue, JsValue> {
    match Header::parse_prefix(prefix).map_err(fail)? {
        Some((h, size)) => {
            let o = js_sys::Object::new();
            let stanzas = h.stanzas.iter().map(from_stanza).collect::<Result<js_sys::Array, _>>()?;
            set(&o, "stanzas", stanzas)?;
            set(&o, "size", size as f64)?;
            Ok(o.into())
        }
        None if !ended => Ok(JsValue::NULL),
        None => Err(error(hyperseal::ErrorCode::Format, "the file ends inside its header")),
    }
}

/// The file key of a detached header, or `null` when no identity opens it.
#[wasm_bindgen(js_name = ageDecryptHeader)]
pub fn age_decrypt_header(header: &[u8], keys_arg: JsValue) -> Result<JsValue, JsValue> {
    match detached::decrypt_header(header, &identities(&keys_arg)?) {
        Ok(k) => Ok(js_sys::Uint8Array::from(k.expose()).into()),
        Err(e) if e.code() == hyperseal::ErrorCode::NoIdentity => Ok(JsValue::NULL),
        Err(e) => Err(fail(e)),
    }
}

/// ASCII armor, as age writes it.
#[wasm_bindgen(js_name = ageArmor)]
pub fn age_armor(file: &[u8]) -> Result<String, JsValue> {
    let mut w = armor::ArmoredWriter::new(Vec::with_capacity(file.len() / 3 * 4 + 128), armor::AGE_LABEL);
    w.write_all(file).map_err(|e| fail(e.into()))?;
    let text = w.finish().map_err(|e| fail(e.into()))?;
    Ok(String::from_utf8(text).expect("armor is ASCII"))
}

/// The file inside ASCII armor (age's strict reading).
#[wasm_bindgen(js_name = ageDearmor)]
pub fn age_dearmor(text: String) -> Result<Vec<u8>, JsValue> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    std::io::copy(&mut armor::ArmoredReader::new(BufReader::new(text.as_bytes())), &mut out)
        .map_err(|e| fail(e.into()))?;
    Ok(out)
}

/// `Encrypter.encrypt` of bytes: the whole age file.
#[wasm_bindgen(js_name = ageEncrypt)]
pub fn age_encrypt(data: &[u8], plan: JsValue) -> Result<Vec<u8>, JsValue> {
    let enc = encryptor(&plan)?;
    let mut file = vec![0u8; enc.encrypted_len(data.len())];
    enc.encrypt_into(data, &mut file).map_err(fail)?;
    Ok(file)
}

/// `Decrypter.decrypt` of bytes: the plaintext, every chunk authenticated.
#[wasm_bindgen(js_name = ageDecrypt)]
pub fn age_decrypt(data: &[u8], keys_arg: JsValue) -> Result<Vec<u8>, JsValue> {
    if data.is_empty() {
        return Err(error(hyperseal::ErrorCode::Format, "unknown file format: the input is empty"));
    }
    let ids = identities(&keys_arg)?;
    // On failure the buffer may hold unauthenticated bytes: it is wiped, never returned.
    let mut out = args::Plaintext::zeroed(data.len());
    let n = Decryptor::from_slice(data).and_then(|d| d.decrypt_into(&ids, &mut out)).map_err(fail)?;
    Ok(out.take(n))
}

#[wasm_bindgen]
impl EncryptSession {
    /// An age file for `hyperseal/age`'s `Encrypter`.
    #[wasm_bindgen(js_name = age)]
    pub fn age(plan: JsValue) -> Result<EncryptSession, JsValue> {
        Ok(EncryptSession::start(encryptor(&plan)?, &Options::age(), false))
    }
}

#[wasm_bindgen]
impl DecryptSession {
    /// An age file for `hyperseal/age`'s `Decrypter`.
    #[wasm_bindgen(js_name = age)]
    pub fn age(keys_arg: JsValue) -> Result<DecryptSession, JsValue> {
        Ok(DecryptSession::new_with(hyperseal::Opener::new(std::sync::Arc::new(identities(&keys_arg)?))))
    }
}
