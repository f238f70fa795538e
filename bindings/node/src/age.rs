//! The native half of `hyperseal/age` (typage's API, `age.mjs` over `age-api.js`): age files
//! made and opened by the library, in typage's shapes. Each call maps JS values onto the
//! library's public API: `Encryptor` (with recipients, a passphrase, or a file key wrapped by
//! JS recipients: `Encryptor::with_file_key`), `Decryptor`, the header codec, `detached`'s
//! header-only decryption and its `FileKeyIdentity`, and the armor codec. Nothing is framed,
//! parsed or derived here.
//!
//! A JS `Recipient` or `Identity` (typage's `wrapFileKey` / `unwrapFileKey`) is called by the JS
//! side at the header step only: it gets a file key from `ageFileKey` and hands its stanzas to
//! the encryptor, or reads the stanzas of `ageHeader` and hands back a file key, which the
//! library checks against the header MAC before it opens a byte of payload.

use std::io::{BufReader, Write};

use hyperseal::detached::{self, FileKeyIdentity};
use hyperseal::format::{armor, Header, Stanza};
use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::scrypt::{ScryptIdentity, ScryptRecipient};
use hyperseal::recipient::{self, x25519, Identity, Recipient};
use hyperseal::{Decryptor, Encryptor, FileKey, Options, Profile};
use napi::bindgen_prelude::{AsyncTask, Buffer, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;
use zeroize::Zeroizing;

use crate::buffers::{pooled, Output};
use crate::errors::{Code, Fail, JsErr};
use crate::pool;

/// A stanza in typage's shape: `args[0]` is its type, the rest its arguments.
#[napi(object)]
pub struct AgeStanza {
    pub args: Vec<String>,
    pub body: Uint8Array,
}

/// Who an age file is for: recipient strings (`age1…`, `age1pq1…`, `age1tag1…`), or one
/// passphrase (scrypt, `workFactor` its log2 N, default 18); with `fileKey`, the recipients are
/// wrapped under that key and `stanzas` (from JS recipients) follow theirs in the header.
#[napi(object)]
pub struct AgePlan {
    pub recipients: Vec<String>,
    pub passphrase: Option<String>,
    pub work_factor: Option<u32>,
    pub file_key: Option<Uint8Array>,
    pub stanzas: Option<Vec<AgeStanza>>,
}

/// What opens an age file: identity strings, passphrases (scrypt), or a file key a JS identity
/// unwrapped (checked against the header MAC like any other).
#[napi(object)]
pub struct AgeKeys {
    pub identities: Vec<String>,
    pub passphrases: Vec<String>,
    pub file_key: Option<Uint8Array>,
}

/// A header's stanzas and its length in bytes (`ageHeader`).
#[napi(object)]
pub struct AgeHeader {
    pub stanzas: Vec<AgeStanza>,
    pub size: u32,
}

fn file_key(bytes: &[u8]) -> Result<FileKey, Fail> {
    FileKey::from_slice(bytes).ok_or_else(|| Fail::arg("a file key must be 16 bytes"))
}

fn recipients(list: &[String]) -> Result<Vec<Box<dyn Recipient>>, Fail> {
    let policy = std::sync::Arc::new(Plugins::allowed(false));
    list.iter().map(|r| Ok(recipient::parse_recipient_with(r, policy.clone())?)).collect()
}

fn to_stanza(s: &AgeStanza) -> Result<Stanza, Fail> {
    let (tag, args) = s.args.split_first().ok_or_else(|| Fail::arg("a stanza needs a type: args[0]"))?;
    Ok(Stanza::try_new(tag, args.to_vec(), s.body.to_vec())?)
}

fn from_stanza(s: &Stanza) -> AgeStanza {
    let args = std::iter::once(s.tag.clone()).chain(s.args.iter().cloned()).collect();
    AgeStanza { args, body: Uint8Array::new(s.body.clone()) }
}

/// The encryptor of `plan`, for an age file.
pub(crate) fn encryptor(plan: &AgePlan) -> Result<Encryptor, Fail> {
    let opts = Options::age();
    if let Some(p) = &plan.passphrase {
        let mut r = ScryptRecipient::new(Zeroizing::new(p.clone()));
        if let Some(n) = plan.work_factor {
            r = r.with_work_factor(u8::try_from(n).unwrap_or(u8::MAX))?;
        }
        return Ok(Encryptor::with_recipients(&[Box::new(r) as Box<dyn Recipient>], opts)?);
    }
    let to = recipients(&plan.recipients)?;
    let Some(key) = &plan.file_key else {
        return Ok(Encryptor::with_recipients(&to, opts)?);
    };
    let key = file_key(key)?;
    let mut stanzas = match to.is_empty() {
        true => Vec::new(),
        false => recipient::wrap_all(&to, &key)?,
    };
    for s in plan.stanzas.iter().flatten() {
        stanzas.push(to_stanza(s)?);
    }
    Ok(Encryptor::with_file_key(&key, stanzas, opts)?)
}

/// The identities of `keys`, in the order typage tries them.
pub(crate) fn identities(keys: &AgeKeys) -> Result<Vec<Box<dyn Identity>>, Fail> {
    let mut out: Vec<Box<dyn Identity>> = Vec::new();
    if let Some(k) = &keys.file_key {
        out.push(Box::new(FileKeyIdentity::new(file_key(k)?)));
    }
    let policy = std::sync::Arc::new(Plugins::allowed(false));
    for text in &keys.identities {
        out.extend(recipient::parse_identities_with(text, policy.clone())?);
    }
    for p in &keys.passphrases {
        out.push(Box::new(ScryptIdentity::new(Zeroizing::new(p.clone()))));
    }
    Ok(out)
}

/// A fresh file key for JS recipients to wrap (`Encrypter.encrypt` with a custom recipient).
#[napi]
pub fn age_file_key() -> Buffer {
    FileKey::generate(Profile::Age.file_key_len()).expose().to_vec().into()
}

fn key32(v: &[u8], what: &str) -> Result<[u8; 32], Fail> {
    v.try_into().map_err(|_| Fail::arg(format!("{what} must be 32 bytes")))
}

/// The ephemeral shares of a header's X25519 stanzas, for an X25519 `CryptoKey` to agree on
/// (Web Crypto's `deriveBits`: the key need not leave its keystore).
#[napi]
pub fn age_x25519_shares(header: &[u8]) -> Result<Vec<Uint8Array>, JsErr> {
    let (h, _) = Header::parse_prefix(header)
        .map_err(Fail::from)?
        .ok_or_else(|| Fail::new(Code(hyperseal::ErrorCode::Format), "the header is incomplete"))?;
    Ok(x25519::stanza_shares(&h.stanzas).into_iter().map(|s| Uint8Array::new(s.to_vec())).collect())
}

/// The `age1…` recipient of an X25519 public key (a `CryptoKey`'s, derived by Web Crypto).
#[napi]
pub fn age_x25519_recipient(public_key: &[u8]) -> Result<String, JsErr> {
    Ok(x25519::X25519Recipient::from_bytes(key32(public_key, "an X25519 public key")?).to_bech32())
}

/// The file key of `header` for an X25519 key whose agreements were made outside (`secrets[i]`
/// for `shares[i]`), or null when none of its stanzas is for that key.
#[napi]
pub fn age_x25519_unwrap(
    header: &[u8],
    public_key: &[u8],
    shares: Vec<Uint8Array>,
    secrets: Vec<Uint8Array>,
) -> Result<Option<Buffer>, JsErr> {
    let mut agreed = Vec::with_capacity(shares.len());
    for (share, secret) in shares.iter().zip(&secrets) {
        agreed.push((key32(share, "a share")?, Zeroizing::new(key32(secret, "a shared secret")?)));
    }
    let id: Box<dyn Identity> =
        Box::new(x25519::X25519Agreed::new(key32(public_key, "an X25519 public key")?, agreed));
    match detached::decrypt_header(header, &[id]) {
        Ok(k) => Ok(Some(k.expose().to_vec().into())),
        Err(e) if e.code() == hyperseal::ErrorCode::NoIdentity => Ok(None),
        Err(e) => Err(Fail::from(e).into()),
    }
}

/// Parses a recipient string, for `addRecipient`'s synchronous check.
#[napi]
pub fn age_check_recipient(recipient: String) -> Result<(), JsErr> {
    recipients(&[recipient])?;
    Ok(())
}

/// The header at the start of `prefix` (binary), or null while more bytes are needed and
/// `ended` is false.
#[napi]
pub fn age_header(prefix: &[u8], ended: bool) -> Result<Option<AgeHeader>, JsErr> {
    match Header::parse_prefix(prefix).map_err(Fail::from)? {
        Some((h, size)) => {
            Ok(Some(AgeHeader { stanzas: h.stanzas.iter().map(from_stanza).collect(), size: size as u32 }))
        }
        None if !ended => Ok(None),
        None => Err(Fail::new(Code(hyperseal::ErrorCode::Format), "the file ends inside its header").into()),
    }
}

/// The file key of a detached header, or null when no identity opens it (a file key from
/// `keys.fileKey` must pass the header MAC).
#[napi]
pub fn age_decrypt_header(header: &[u8], keys: AgeKeys) -> Result<Option<Buffer>, JsErr> {
    match detached::decrypt_header(header, &identities(&keys)?) {
        Ok(k) => Ok(Some(k.expose().to_vec().into())),
        Err(e) if e.code() == hyperseal::ErrorCode::NoIdentity => Ok(None),
        Err(e) => Err(Fail::from(e).into()),
    }
}

/// ASCII armor, as age writes it.
#[napi]
pub fn age_armor(file: &[u8]) -> Result<String, JsErr> {
    let mut w = armor::ArmoredWriter::new(Vec::with_capacity(file.len() / 3 * 4 + 128), armor::AGE_LABEL);
    w.write_all(file).map_err(Fail::from)?;
    let text = w.finish().map_err(Fail::from)?;
    Ok(String::from_utf8(text).expect("armor is ASCII"))
}

/// The file inside ASCII armor (age's strict reading).
#[napi]
pub fn age_dearmor(text: String) -> Result<Buffer, JsErr> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    std::io::copy(&mut armor::ArmoredReader::new(BufReader::new(text.as_bytes())), &mut out)
        .map_err(Fail::from)?;
    Ok(out.into())
}

/// One age encrypt or decrypt on the libuv pool (all cores for large inputs).
pub enum AgeJob {
    Seal(Encryptor),
    Open(Vec<Box<dyn Identity>>),
}

pub struct AgeTask {
    data: Uint8Array,
    job: Option<AgeJob>,
}

impl Task for AgeTask {
    type Output = Result<Output, Fail>;
    type JsValue = Buffer;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let data: &[u8] = &self.data;
        Ok(match self.job.take().expect("computed once") {
            AgeJob::Seal(enc) => {
                let len = enc.encrypted_len(data.len());
                pooled(len, |out| enc.encrypt_into(data, out).map(|()| len).map_err(Fail::from))
            }
            AgeJob::Open(ids) => pooled(data.len(), |out| {
                Ok(Decryptor::from_slice(data).and_then(|d| d.decrypt_into(&ids, out))?)
            }),
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Buffer> {
        match output {
            Ok((v, len)) => pool::to_js_buffer(&env, v, len),
            Err(f) => Err(f.into_rejection(&env)),
        }
    }
}

/// `Encrypter.encrypt` of bytes: the whole age file. Keys are parsed before this returns.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn age_encrypt(data: Uint8Array, plan: AgePlan) -> Result<AsyncTask<AgeTask>, JsErr> {
    Ok(AsyncTask::new(AgeTask { data, job: Some(AgeJob::Seal(encryptor(&plan)?)) }))
}

/// `Decrypter.decrypt` of bytes: the plaintext, every chunk authenticated.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn age_decrypt(data: Uint8Array, keys: AgeKeys) -> Result<AsyncTask<AgeTask>, JsErr> {
    if data.is_empty() {
        return Err(
            Fail::new(Code(hyperseal::ErrorCode::Format), "unknown file format: the input is empty").into()
        );
    }
    Ok(AsyncTask::new(AgeTask { data, job: Some(AgeJob::Open(identities(&keys)?)) }))
}
