//! Signatures (PEM keys), RSA-OAEP, and tokens with a small cache of parsed token keys.

use std::sync::Arc;
use std::time::Duration;

use hyperseal_toolkit::sign::oaep::{RsaOaepPrivateKey, RsaOaepPublicKey};

use crate::keys::Cache;
use hyperseal_toolkit::sign::{self as ts, KeyKind, RsaPadding, SigningKey, VerifyingKey};
use hyperseal_toolkit::token::{self as tt, KeyRing, TokenKey};
use napi::bindgen_prelude::{BufferSlice, Either};
use napi::Env;
use napi_derive::napi;
use zeroize::Zeroizing;

use super::{opt_bytes, take};
use crate::buffers::{bytes, to_js};
use crate::errors::{Code, Fail, JsErr};

// ── signatures ───────────────────────────────────────────────────────────────────────────

/// A signing key pair as PEM text.
#[napi(object)]
pub struct SignKeyPair {
    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). Keep it secret.
    pub private_key: String,
    /// SPKI PEM (`-----BEGIN PUBLIC KEY-----`).
    pub public_key: String,
}

fn rsa_padding(p: Option<&str>) -> Result<RsaPadding, Fail> {
    Ok(p.map(RsaPadding::parse).transpose()?.unwrap_or_default())
}

/// Generates a signing key pair. `kind`: 'ed25519' (default), 'ecdsa-p256', 'rsa2048',
/// 'rsa3072', 'rsa4096', 'ml-dsa-65'. RSA generation takes up to seconds and blocks.
#[napi]
pub fn sign_generate_key_pair(kind: Option<String>) -> Result<SignKeyPair, JsErr> {
    let kind = KeyKind::parse(kind.as_deref().unwrap_or("ed25519")).map_err(Fail::from)?;
    let run = || -> Result<SignKeyPair, Fail> {
        let sk = SigningKey::generate(kind)?;
        Ok(SignKeyPair {
            private_key: sk.to_pkcs8_pem()?.to_string(),
            public_key: sk.verifying_key()?.to_pem(),
        })
    };
    Ok(run()?)
}

// Parsed PEM keys, cached by their text: parsing an RSA private key validates it (hundreds of
// µs), which made a 50-byte RSA-2048 signature 2.3× slower than Node's KeyObject path.
static SIGNING: Cache<Arc<SigningKey>> = Cache::new();
static VERIFYING: Cache<Arc<VerifyingKey>> = Cache::new();
static OAEP_PUBLIC: Cache<Arc<RsaOaepPublicKey>> = Cache::new();
static OAEP_PRIVATE: Cache<Arc<RsaOaepPrivateKey>> = Cache::new();

/// Signs `data` with a PEM private key (PKCS#8, or OpenSSL's SEC1/PKCS#1 forms). Ed25519 and
/// ML-DSA sign the message itself, ECDSA P-256 is SHA-256/ASN.1 (DER), RSA is SHA-256 with
/// `padding` 'pss' (default) or 'pkcs1'.
#[napi(ts_return_type = "Buffer")]
pub fn sign_message<'e>(
    env: &'e Env,
    private_key: String,
    data: Either<&[u8], String>,
    padding: Option<String>,
) -> Result<BufferSlice<'e>, JsErr> {
    let pad = rsa_padding(padding.as_deref())?;
    let sk = SIGNING
        .get_or_parse(&private_key, || Ok::<_, Fail>(Arc::new(SigningKey::from_pem(&private_key)?)))?;
    Ok(to_js(env, sk.sign_with(bytes(&data), pad).map_err(Fail::from)?)?)
}

/// Whether `signature` is a valid signature of `data` under the PEM public key (SPKI). An
/// unusable key throws `ERR_HYPERSEAL_KEY`; a wrong signature is just `false`.
#[napi]
pub fn sign_verify(
    public_key: String,
    data: Either<&[u8], String>,
    signature: &[u8],
    padding: Option<String>,
) -> Result<bool, JsErr> {
    let pad = rsa_padding(padding.as_deref())?;
    let vk = VERIFYING
        .get_or_parse(&public_key, || Ok::<_, Fail>(Arc::new(VerifyingKey::from_pem(&public_key)?)))?;
    Ok(vk.verify_with(bytes(&data), signature, pad).is_ok())
}

/// The SPKI PEM public key of a PEM private signing key.
#[napi]
pub fn sign_public_key_of(private_key: String) -> Result<String, JsErr> {
    Ok(ts::public_pem_from_private(&private_key).map_err(Fail::from)?)
}

/// RSA-OAEP (SHA-256, MGF1-SHA-256) encryption of a short secret to an RSA SPKI PEM public
/// key (at most key bytes − 66: 190 bytes for RSA-2048). `label` is the optional OAEP label.
#[napi(ts_return_type = "Buffer")]
pub fn rsa_encrypt<'e>(
    env: &'e Env,
    public_key: String,
    data: Either<&[u8], String>,
    label: Option<Either<&[u8], String>>,
) -> Result<BufferSlice<'e>, JsErr> {
    let k = OAEP_PUBLIC
        .get_or_parse(&public_key, || Ok::<_, Fail>(Arc::new(RsaOaepPublicKey::from_pem(&public_key)?)))?;
    Ok(to_js(env, k.encrypt(bytes(&data), opt_bytes(&label)).map_err(Fail::from)?)?)
}

/// RSA-OAEP decryption with a PKCS#8 PEM private key; any failure is `ERR_HYPERSEAL_AUTH`.
#[napi(ts_return_type = "Buffer")]
pub fn rsa_decrypt<'e>(
    env: &'e Env,
    private_key: String,
    data: &[u8],
    label: Option<Either<&[u8], String>>,
) -> Result<BufferSlice<'e>, JsErr> {
    let k = OAEP_PRIVATE
        .get_or_parse(&private_key, || Ok::<_, Fail>(Arc::new(RsaOaepPrivateKey::from_pem(&private_key)?)))?;
    Ok(to_js(env, take(k.decrypt(data, opt_bytes(&label)).map_err(Fail::from)?))?)
}

// ── tokens ───────────────────────────────────────────────────────────────────────────────

static RINGS: Cache<Arc<KeyRing>> = Cache::new();

/// The parsed ring of a key line or key file (cached: parsing derives three keys with BLAKE3 and
/// expands two AEAD key schedules, more than the AEAD itself on a 1 KB token).
fn ring(text: &str) -> Result<Arc<KeyRing>, Fail> {
    if text.trim().is_empty() {
        return Err(Fail::new(Code(hyperseal::ErrorCode::Key), "invalid token key: empty"));
    }
    RINGS.get_or_parse(text, || Ok::<_, Fail>(Arc::new(KeyRing::from_key_file(text)?)))
}

/// A new random token key: one key-file line `HYPERSEAL-TOKEN-KEY-1<43 base64url chars>`
/// (no newline), the same format `hyperseal token` reads. Keep it secret.
#[napi]
pub fn token_generate_key() -> String {
    tt::TokenKey::generate().to_key_file().trim_end().to_owned()
}

/// Seals `plaintext` into a compact base64url token, authenticated together with the optional
/// `aad`; `ttlSeconds` adds an expiry. `key` is a key line, or a key file whose first key seals.
#[napi]
pub fn token_seal(
    key: String,
    plaintext: Either<&[u8], String>,
    aad: Option<Either<&[u8], String>>,
    ttl_seconds: Option<f64>,
) -> Result<String, JsErr> {
    let ttl = match ttl_seconds {
        None => None,
        Some(s) if s > 0.0 && s.is_finite() => {
            Some(Duration::try_from_secs_f64(s).map_err(|_| Fail::arg("ttlSeconds is out of range"))?)
        }
        Some(_) => return Err(Fail::arg("ttlSeconds must be a positive number").into()),
    };
    let ring = ring(&key)?;
    let primary: &TokenKey =
        ring.primary().ok_or_else(|| Fail::new(Code(hyperseal::ErrorCode::Key), "no token key"))?;
    Ok(tt::seal(primary, bytes(&plaintext), opt_bytes(&aad), ttl))
}

/// Opens a token with any of the given keys (one key line, several, or a key file: keep old
/// keys while their tokens live). Codes: `ERR_HYPERSEAL_TOKEN_EXPIRED`,
/// `ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY`, `ERR_HYPERSEAL_AUTH` (tampered or wrong `aad`),
/// `ERR_HYPERSEAL_FORMAT` (not a token).
#[napi(ts_return_type = "Buffer")]
pub fn token_open<'e>(
    env: &'e Env,
    keys: Either<String, Vec<String>>,
    token: String,
    aad: Option<Either<&[u8], String>>,
) -> Result<BufferSlice<'e>, JsErr> {
    let ring = match &keys {
        Either::A(k) => ring(k)?,
        Either::B(list) if list.is_empty() => {
            return Err(Fail::new(Code(hyperseal::ErrorCode::Key), "give at least one token key").into())
        }
        Either::B(list) => ring(&Zeroizing::new(list.join("\n")))?,
    };
    let out = tt::open(&ring, &token, opt_bytes(&aad)).map_err(Fail::from)?;
    Ok(to_js(env, take(out))?)
}
