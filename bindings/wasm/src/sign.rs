//! Signatures under the Node package's names (`signGenerateKeyPair`, `signMessage`, `signVerify`,
//! `signPublicKeyOf`; `js/core.js` groups them as `sign.{generateKeyPair, sign, verify,
//! publicKeyOf}`). Only type conversion over `hyperseal_toolkit::sign`, which on wasm32 runs on
//! RustCrypto (its `sign/portable.rs`): Ed25519, ECDSA P-256 and ML-DSA-65, the same PEM keys
//! (PKCS#8 / SPKI) and signature encodings (ECDSA ASN.1 DER, Ed25519 and ML-DSA pure) as the CLI
//! and Node. RSA keys are native-only.

use hyperseal_toolkit::sign::{KeyKind, RsaPadding, SigningKey, VerifyingKey};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::args::bytes;
use crate::errors::{arg, fail_kit};

/// RSA is refused before any work, as an argument the browser build does not support (the same
/// code as `generateKeyPair({ kind: 'rsa3072' })`).
fn kind(name: Option<String>) -> Result<KeyKind, JsValue> {
    let kind = KeyKind::parse(name.as_deref().unwrap_or("ed25519")).map_err(fail_kit)?;
    if kind.is_rsa() {
        return Err(arg("RSA signing keys are native-only: use ed25519, ecdsa-p256 or ml-dsa-65"));
    }
    Ok(kind)
}

/// 'pss' (the default) or 'pkcs1', checked as in Node even though only RSA uses it.
fn padding(p: Option<String>) -> Result<RsaPadding, JsValue> {
    Ok(p.as_deref().map(RsaPadding::parse).transpose().map_err(fail_kit)?.unwrap_or_default())
}

/// A signing key pair `{ privateKey, publicKey }` as PEM text (PKCS#8 and SPKI). `kind`:
/// 'ed25519' (default), 'ecdsa-p256', 'ml-dsa-65'.
#[wasm_bindgen(js_name = signGenerateKeyPair)]
pub fn sign_generate_key_pair(kind_name: Option<String>) -> Result<js_sys::Object, JsValue> {
    let sk = SigningKey::generate(kind(kind_name)?).map_err(fail_kit)?;
    let private = sk.to_pkcs8_pem().map_err(fail_kit)?;
    let public = sk.verifying_key().map_err(fail_kit)?.to_pem();
    let pair = js_sys::Object::new();
    js_sys::Reflect::set(&pair, &JsValue::from_str("privateKey"), &JsValue::from_str(&private))?;
    js_sys::Reflect::set(&pair, &JsValue::from_str("publicKey"), &JsValue::from_str(&public))?;
    Ok(pair)
}

/// Signs `data` with a PEM private key (PKCS#8, or OpenSSL's SEC1 form for P-256).
#[wasm_bindgen(js_name = signMessage)]
pub fn sign_message(
    private_key: String,
    data: JsValue,
    padding_name: Option<String>,
) -> Result<Vec<u8>, JsValue> {
    let private_key = Zeroizing::new(private_key);
    let pad = padding(padding_name)?;
    let sk = SigningKey::from_pem(&private_key).map_err(fail_kit)?;
    sk.sign_with(&bytes(&data, "data")?, pad).map_err(fail_kit)
}

/// Whether `signature` is a valid signature of `data` under the PEM public key (SPKI). An
/// unusable key throws `ERR_HYPERSEAL_KEY`; a wrong signature is just `false`.
#[wasm_bindgen(js_name = signVerify)]
pub fn sign_verify(
    public_key: String,
    data: JsValue,
    signature: &[u8],
    padding_name: Option<String>,
) -> Result<bool, JsValue> {
    let pad = padding(padding_name)?;
    let vk = VerifyingKey::from_pem(&public_key).map_err(fail_kit)?;
    Ok(vk.verify_with(&bytes(&data, "data")?, signature, pad).is_ok())
}

/// The SPKI PEM public key of a PEM private signing key.
#[wasm_bindgen(js_name = signPublicKeyOf)]
pub fn sign_public_key_of(private_key: String) -> Result<String, JsValue> {
    let private_key = Zeroizing::new(private_key);
    hyperseal_toolkit::sign::public_pem_from_private(&private_key).map_err(fail_kit)
}
