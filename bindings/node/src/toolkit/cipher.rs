//! Symmetric ciphers: one-shot AEAD, the legacy unauthenticated modes, and batches.

use hyperseal_toolkit::{aead, batch, hazmat};
use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, Either, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;
use zeroize::Zeroizing;

use super::{guarded, opt_bytes, take};
use crate::buffers::{bytes, to_js, Data};
use crate::errors::{Code, Fail, JsErr};

fn aead_alg(algo: &str) -> Result<aead::Algorithm, Fail> {
    Ok(aead::Algorithm::parse(algo)?)
}

/// AEAD-encrypts with a fresh random nonce. Returns `nonce ‖ ciphertext ‖ tag` (12-byte nonce,
/// 24 for 'xchacha20-poly1305'; 16-byte tag). `algo`: 'aes-128-gcm', 'aes-256-gcm',
/// 'chacha20-poly1305', 'xchacha20-poly1305', 'aes-256-gcm-siv', 'sm4-ccm' (messages under
/// 16 MiB).
#[napi(ts_return_type = "Buffer")]
pub fn aead_seal<'e>(
    env: &'e Env,
    algo: String,
    key: &[u8],
    plaintext: Either<&[u8], String>,
    aad: Option<Either<&[u8], String>>,
) -> Result<BufferSlice<'e>, JsErr> {
    let out = aead::seal(aead_alg(&algo)?, key, bytes(&plaintext), opt_bytes(&aad)).map_err(Fail::from)?;
    Ok(to_js(env, out)?)
}

/// Opens what {@link aeadSeal} made; a wrong key, AAD or any changed byte throws
/// `ERR_HYPERSEAL_AUTH`.
#[napi(ts_return_type = "Buffer")]
pub fn aead_open<'e>(
    env: &'e Env,
    algo: String,
    key: &[u8],
    sealed: &[u8],
    aad: Option<Either<&[u8], String>>,
) -> Result<BufferSlice<'e>, JsErr> {
    let out = aead::open(aead_alg(&algo)?, key, sealed, opt_bytes(&aad)).map_err(Fail::from)?;
    Ok(to_js(env, take(out))?)
}

/// A random key of the right length for `algo` (16 bytes for AES-128-GCM and SM4-CCM, else 32).
#[napi(ts_return_type = "Buffer")]
pub fn aead_generate_key(env: &Env, algo: String) -> Result<BufferSlice<'_>, JsErr> {
    let k = aead::generate_key(aead_alg(&algo)?);
    Ok(to_js(env, take(k))?)
}

fn cipher(algo: &str) -> Result<hazmat::Cipher, Fail> {
    Ok(hazmat::Cipher::parse(algo)?)
}

/// LEGACY, UNAUTHENTICATED encryption, byte-compatible with `openssl enc -K … -iv …` and
/// Node's `createCipheriv` (PKCS#7 padding for CBC/ECB). Only for interoperating with old
/// systems: nothing detects tampering. `algo`: 'aes-128-cbc', 'aes-256-cbc', 'aes-128-ctr',
/// 'aes-256-ctr', 'aes-128-ecb', 'aes-256-ecb', 'sm4-cbc', 'sm4-ctr', 'sm4-ecb'; `iv` is
/// 16 bytes, and must be null/undefined for ECB.
#[napi(ts_return_type = "Buffer")]
pub fn hazmat_encrypt<'e>(
    env: &'e Env,
    algo: String,
    key: &[u8],
    iv: Option<&[u8]>,
    data: Either<&[u8], String>,
) -> Result<BufferSlice<'e>, JsErr> {
    let out = cipher(&algo)?.encrypt(key, iv, bytes(&data)).map_err(Fail::from)?;
    Ok(to_js(env, out)?)
}

/// LEGACY, UNAUTHENTICATED decryption (see {@link hazmatEncrypt}). Bad CBC/ECB padding
/// throws `ERR_HYPERSEAL_AUTH`, but a tampered ciphertext usually decrypts to garbage silently.
#[napi(ts_return_type = "Buffer")]
pub fn hazmat_decrypt<'e>(
    env: &'e Env,
    algo: String,
    key: &[u8],
    iv: Option<&[u8]>,
    data: &[u8],
) -> Result<BufferSlice<'e>, JsErr> {
    let out = cipher(&algo)?.decrypt(key, iv, data).map_err(Fail::from)?;
    Ok(to_js(env, take(out))?)
}

// ── batches ──────────────────────────────────────────────────────────────────────────────

/// Many messages sealed or opened under one key on the libuv pool (and all cores from
/// 256 KiB in total). Results come back in input order.
pub struct BatchTask {
    alg: String,
    key: Zeroizing<Vec<u8>>,
    items: Vec<Data>,
    seal: bool,
}

impl Task for BatchTask {
    type Output = Result<Vec<Vec<u8>>, Fail>;
    type JsValue = Vec<Buffer>;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(guarded(|| {
            let alg = aead_alg(&self.alg)?;
            let items: Vec<&[u8]> = self.items.iter().map(Data::as_slice).collect();
            if self.seal {
                return Ok(batch::encrypt_batch(alg, &self.key, &items)?);
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, r) in batch::decrypt_batch(alg, &self.key, &items)?.into_iter().enumerate() {
                match r {
                    Ok(p) => out.push(take(p)),
                    Err(hyperseal_toolkit::Error::Crypto) => {
                        return Err(Fail::new(
                            Code(hyperseal::ErrorCode::Auth),
                            format!("batchDecrypt: message {i} failed to authenticate"),
                        ))
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(out)
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Vec<Buffer>> {
        output.map(|v| v.into_iter().map(Buffer::from).collect()).map_err(|f| f.into_rejection(&env))
    }
}

fn batch_task(
    algo: String,
    key: &[u8],
    messages: Vec<Either<Uint8Array, String>>,
    seal: bool,
) -> AsyncTask<BatchTask> {
    AsyncTask::new(BatchTask {
        alg: algo,
        key: Zeroizing::new(key.to_vec()),
        items: messages.into_iter().map(Data::from).collect(),
        seal,
    })
}

/// Seals every message (as {@link aeadSeal}, each with its own random nonce, no AAD) on the
/// libuv pool; the result array is in input order.
#[napi(ts_return_type = "Promise<Buffer[]>")]
pub fn batch_encrypt(
    algo: String,
    key: &[u8],
    messages: Vec<Either<Uint8Array, String>>,
) -> AsyncTask<BatchTask> {
    batch_task(algo, key, messages, true)
}

/// Opens every message sealed by {@link batchEncrypt} / {@link aeadSeal} (no AAD), in input
/// order. Rejects with `ERR_HYPERSEAL_AUTH` naming the first index that fails.
#[napi(ts_return_type = "Promise<Buffer[]>")]
pub fn batch_decrypt(
    algo: String,
    key: &[u8],
    messages: Vec<Either<Uint8Array, String>>,
) -> AsyncTask<BatchTask> {
    batch_task(algo, key, messages, false)
}
