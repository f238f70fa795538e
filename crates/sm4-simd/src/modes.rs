//! Modes of operation over [`Sm4`].
//!
//! Two layers:
//! * type aliases for the RustCrypto generic mode crates (`ecb`, `cbc`,
//!   `ctr`, `aes-gcm`, `ccm`), for callers that already speak the `cipher`/`aead`
//!   traits;
//! * small byte-slice functions for the rest of hyperseal.
//!
//! **Use [`gcm_seal_in_place_detached`] / [`gcm_open_in_place_detached`]
//! (or [`Sm4Gcm`]) for data protection**, or the CCM pair
//! ([`ccm_seal_in_place_detached`], [`Sm4Ccm`]) where a protocol asks for
//! SM4-CCM. ECB, CBC and CTR are hazmat: they
//! are unauthenticated, ECB leaks equal blocks, CTR is malleable and
//! catastrophically broken by IV reuse, and CBC with padding is a padding
//! oracle if decryption errors are observable. They exist for
//! interoperability with legacy formats (GM/T protocols, OpenSSL `enc`).
//!
//! Performance notes: ECB, CTR and CBC decryption hand the backend a full
//! batch (8 or 16 blocks) per call; CTR builds the batch of counter blocks
//! first. CBC encryption is serial by construction and runs the backend's
//! latency-optimised single-block path; so does CCM's CBC-MAC half.

use crate::Sm4;
use cipher::{
    array::Array,
    block_padding::Pkcs7,
    consts::{U12, U16},
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, KeyInit,
};
use core::fmt;

/// SM4-GCM with 96-bit nonces and 128-bit tags (RFC 8998).
pub type Sm4Gcm = aes_gcm::AesGcm<Sm4, U12>;
/// SM4-CCM with 96-bit nonces and 128-bit tags (RFC 3610 over SM4; the
/// parameters of RFC 8998's `TLS_SM4_CCM_SM3`). Other tag/nonce sizes:
/// `ccm::Ccm<Sm4, M, N>` directly.
pub type Sm4Ccm = ccm::Ccm<Sm4, U16, U12>;
/// SM4-CTR with a 128-bit big-endian counter (same as OpenSSL `sm4-ctr`). Hazmat.
pub type Sm4Ctr = ctr::Ctr128BE<Sm4>;
/// SM4-CBC encryptor. Hazmat: unauthenticated.
pub type Sm4CbcEnc = cbc::Encryptor<Sm4>;
/// SM4-CBC decryptor. Hazmat: unauthenticated.
pub type Sm4CbcDec = cbc::Decryptor<Sm4>;
/// SM4-ECB encryptor. Hazmat: leaks equal plaintext blocks.
pub type Sm4EcbEnc = ecb::Encryptor<Sm4>;
/// SM4-ECB decryptor. Hazmat.
pub type Sm4EcbDec = ecb::Decryptor<Sm4>;

/// Errors from the convenience functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Input length is not a multiple of 16 (ECB, CBC) or exceeds GCM/CCM limits.
    InvalidLength,
    /// CBC/PKCS#7 padding is malformed.
    BadPadding,
    /// The GCM or CCM tag did not verify (GCM leaves the buffer unchanged,
    /// CCM zeroes it).
    AuthenticationFailed,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::InvalidLength => "sm4: invalid input length",
            Error::BadPadding => "sm4: bad padding",
            Error::AuthenticationFailed => "sm4: authentication failed",
        })
    }
}

impl std::error::Error for Error {}

fn cipher(key: &[u8; 16]) -> Sm4 {
    Sm4::new(key.into())
}

/// Splits `data` into whole 16-byte blocks, or fails.
fn as_blocks(data: &mut [u8]) -> Result<&mut [Array<u8, cipher::consts::U16>], Error> {
    let (blocks, rest) = Array::slice_as_chunks_mut(data);
    if rest.is_empty() {
        Ok(blocks)
    } else {
        Err(Error::InvalidLength)
    }
}

/// ECB-encrypts `data` in place. **Hazmat** (see module docs).
///
/// # Errors
/// [`Error::InvalidLength`] if `data.len()` is not a multiple of 16.
pub fn ecb_encrypt(key: &[u8; 16], data: &mut [u8]) -> Result<(), Error> {
    cipher(key).encrypt_blocks(as_blocks(data)?);
    Ok(())
}

/// ECB-decrypts `data` in place. **Hazmat.**
///
/// # Errors
/// [`Error::InvalidLength`] if `data.len()` is not a multiple of 16.
pub fn ecb_decrypt(key: &[u8; 16], data: &mut [u8]) -> Result<(), Error> {
    cipher(key).decrypt_blocks(as_blocks(data)?);
    Ok(())
}

/// CBC-encrypts `plaintext` with PKCS#7 padding (as `openssl enc -sm4-cbc`).
/// The output is 1–16 bytes longer than the input. **Hazmat.**
pub fn cbc_encrypt_pkcs7(key: &[u8; 16], iv: &[u8; 16], plaintext: &[u8]) -> Vec<u8> {
    Sm4CbcEnc::inner_iv_init(cipher(key), iv.into()).encrypt_padded_vec::<Pkcs7>(plaintext)
}

/// CBC-decrypts and strips PKCS#7 padding. **Hazmat**: never reveal *why*
/// decryption failed to an attacker (padding oracle).
///
/// # Errors
/// [`Error::InvalidLength`] for an empty or non-block-multiple input,
/// [`Error::BadPadding`] if the padding is malformed.
pub fn cbc_decrypt_pkcs7(key: &[u8; 16], iv: &[u8; 16], ciphertext: &[u8]) -> Result<Vec<u8>, Error> {
    if ciphertext.is_empty() || !ciphertext.len().is_multiple_of(16) {
        return Err(Error::InvalidLength);
    }
    Sm4CbcDec::inner_iv_init(cipher(key), iv.into())
        .decrypt_padded_vec::<Pkcs7>(ciphertext)
        .map_err(|_| Error::BadPadding)
}

/// CBC without padding, in place (`data.len()` a multiple of 16). **Hazmat.**
///
/// # Errors
/// [`Error::InvalidLength`] if `data.len()` is not a multiple of 16.
pub fn cbc_encrypt_nopad(key: &[u8; 16], iv: &[u8; 16], data: &mut [u8]) -> Result<(), Error> {
    let (blocks, rest) = data.as_chunks_mut::<16>();
    if !rest.is_empty() {
        return Err(Error::InvalidLength);
    }
    cipher(key).cbc_encrypt_blocks(iv, blocks);
    Ok(())
}

/// Inverse of [`cbc_encrypt_nopad`]. **Hazmat.**
///
/// # Errors
/// [`Error::InvalidLength`] if `data.len()` is not a multiple of 16.
pub fn cbc_decrypt_nopad(key: &[u8; 16], iv: &[u8; 16], data: &mut [u8]) -> Result<(), Error> {
    let blocks = as_blocks(data)?;
    Sm4CbcDec::inner_iv_init(cipher(key), iv.into()).decrypt_blocks(blocks);
    Ok(())
}

/// XORs the SM4-CTR keystream into `data` (encrypts and decrypts). The
/// 16-byte `iv` is the initial counter block, incremented as a 128-bit
/// big-endian integer that wraps at 2^128 (as `openssl enc -sm4-ctr` and
/// [`Sm4Ctr`]). **Hazmat**: never reuse a (key, iv) pair; no integrity.
///
/// Unlike the generic [`Sm4Ctr`], this encrypts many counter blocks per
/// backend call (see [`Sm4::ctr_apply`]), which brings CTR to ECB speed.
pub fn ctr_apply(key: &[u8; 16], iv: &[u8; 16], data: &mut [u8]) {
    cipher(key).ctr_apply(iv, data);
}

impl Sm4 {
    /// CBC-encrypts whole blocks in place from chain value `iv` (no
    /// padding) and returns the last ciphertext block, the chain value of a
    /// following call. **Hazmat.** The `gfni512` backend keeps the chain in
    /// registers from block to block; the others run the generic `cbc` mode.
    pub fn cbc_encrypt_blocks(&self, iv: &[u8; 16], blocks: &mut [[u8; 16]]) -> [u8; 16] {
        if let Some(next) = self.cbc_encrypt_chain(iv, blocks) {
            return next;
        }
        let (arrays, _) = Array::slice_as_chunks_mut(blocks.as_flattened_mut());
        Sm4CbcEnc::inner_iv_init(self.clone(), iv.into()).encrypt_blocks(arrays);
        blocks.last().copied().unwrap_or(*iv)
    }

    /// XORs the CTR keystream from counter block `iv` into `data`, as
    /// [`ctr_apply`]. **Hazmat.** `gfni512` makes the counter blocks in
    /// registers; the others encrypt 256 counter blocks per backend call.
    pub fn ctr_apply(&self, iv: &[u8; 16], data: &mut [u8]) {
        const CHUNK: usize = 256 * 16;
        if self.ctr_apply_fast(iv, data) {
            return;
        }
        let mut ctr = u128::from_be_bytes(*iv);
        let mut ks = [0u8; CHUNK];
        for chunk in data.chunks_mut(CHUNK) {
            let n = chunk.len().div_ceil(16);
            let (blocks, _) = Array::slice_as_chunks_mut(&mut ks[..16 * n]);
            for b in blocks.iter_mut() {
                b.copy_from_slice(&ctr.to_be_bytes());
                ctr = ctr.wrapping_add(1);
            }
            self.encrypt_blocks(blocks);
            for (d, k) in chunk.iter_mut().zip(&ks) {
                *d ^= k;
            }
        }
        zeroize::Zeroize::zeroize(&mut ks);
    }
}

/// SM4-GCM encryption in place; returns the 16-byte tag.
///
/// # Errors
/// [`Error::InvalidLength`] if `buf` or `aad` exceed the GCM limits (~64 GiB).
pub fn gcm_seal_in_place_detached(
    key: &[u8; 16],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<[u8; 16], Error> {
    use aes_gcm::AeadInOut;
    Sm4Gcm::from(cipher(key))
        .encrypt_inout_detached(nonce.into(), aad, buf.into())
        .map(Into::into)
        .map_err(|_| Error::InvalidLength)
}

/// SM4-GCM decryption in place. The tag is checked in constant time *before*
/// anything is decrypted; on failure `buf` is left unchanged.
///
/// # Errors
/// [`Error::AuthenticationFailed`] if the tag does not verify (or lengths
/// exceed the GCM limits).
pub fn gcm_open_in_place_detached(
    key: &[u8; 16],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; 16],
) -> Result<(), Error> {
    use aes_gcm::AeadInOut;
    Sm4Gcm::from(cipher(key))
        .decrypt_inout_detached(nonce.into(), aad, buf.into(), tag.into())
        .map_err(|_| Error::AuthenticationFailed)
}

/// SM4-CCM encryption in place; returns the 16-byte tag.
///
/// # Errors
/// [`Error::InvalidLength`] if `buf` exceeds CCM's limit for a 12-byte nonce
/// (2^24 - 1 bytes: the counter field is 3 bytes).
pub fn ccm_seal_in_place_detached(
    key: &[u8; 16],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<[u8; 16], Error> {
    use ccm::AeadInOut;
    Sm4Ccm::from(cipher(key))
        .encrypt_inout_detached(nonce.into(), aad, buf.into())
        .map(Into::into)
        .map_err(|_| Error::InvalidLength)
}

/// SM4-CCM decryption in place. CCM must decrypt before it can check the
/// tag (the MAC is over the plaintext); on failure `buf` is zeroed, so no
/// unauthenticated plaintext is ever handed back. The tag compare is
/// constant time.
///
/// # Errors
/// [`Error::AuthenticationFailed`] if the tag does not verify (or `buf`
/// exceeds the CCM length limit).
pub fn ccm_open_in_place_detached(
    key: &[u8; 16],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; 16],
) -> Result<(), Error> {
    use ccm::AeadInOut;
    Sm4Ccm::from(cipher(key))
        .decrypt_inout_detached(nonce.into(), aad, buf.into(), tag.into())
        .map_err(|_| Error::AuthenticationFailed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_checked() {
        let k = [1u8; 16];
        assert_eq!(ecb_encrypt(&k, &mut [0u8; 15]), Err(Error::InvalidLength));
        assert_eq!(cbc_decrypt_pkcs7(&k, &k, &[]), Err(Error::InvalidLength));
        assert_eq!(cbc_decrypt_pkcs7(&k, &k, &[0u8; 17]), Err(Error::InvalidLength));
    }

    #[test]
    fn gcm_roundtrip_and_tamper() {
        let (k, n) = ([9u8; 16], [3u8; 12]);
        let mut buf = *b"attack at dawn!!xyz";
        let tag = gcm_seal_in_place_detached(&k, &n, b"hdr", &mut buf).unwrap();
        let ct = buf;
        assert_eq!(
            gcm_open_in_place_detached(&k, &n, b"hdX", &mut buf, &tag),
            Err(Error::AuthenticationFailed)
        );
        assert_eq!(buf, ct, "buffer untouched on failure");
        gcm_open_in_place_detached(&k, &n, b"hdr", &mut buf, &tag).unwrap();
        assert_eq!(&buf, b"attack at dawn!!xyz");
    }

    #[test]
    fn ccm_roundtrip_and_tamper() {
        let (k, n) = ([9u8; 16], [3u8; 12]);
        let mut buf = *b"attack at dawn!!xyz";
        let tag = ccm_seal_in_place_detached(&k, &n, b"hdr", &mut buf).unwrap();
        assert_ne!(&buf, b"attack at dawn!!xyz");
        let ct = buf;
        assert_eq!(
            ccm_open_in_place_detached(&k, &n, b"hdX", &mut buf, &tag),
            Err(Error::AuthenticationFailed)
        );
        assert_eq!(buf, [0u8; 19], "no unauthenticated plaintext on failure");
        buf = ct;
        ccm_open_in_place_detached(&k, &n, b"hdr", &mut buf, &tag).unwrap();
        assert_eq!(&buf, b"attack at dawn!!xyz");
    }
}
