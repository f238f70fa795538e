//! **Hazardous materials: unauthenticated legacy AES and SM4 modes.**
//!
//! AES-128/256 and SM4 in CBC (PKCS#7 padding), CTR and ECB (PKCS#7 padding), provided only
//! to read and write data for systems that already use them. None of these modes detects
//! tampering: CBC decryption with a padding check is a classic padding oracle, CTR
//! ciphertexts are malleable bit by bit, and ECB leaks which blocks are equal. For anything
//! new use [`crate::aead`].
//!
//! The byte format is exactly that of `openssl enc -K <hex> -iv <hex>` (no salt, no
//! header): `hyperseal` and OpenSSL decrypt each other's output. AES runs on aws-lc-rs, SM4 on
//! the project's constant-time SIMD `sm4-simd`.
//!
//! Two ways in: [`Cipher::encrypt`] / [`Cipher::decrypt`] on a buffer in memory, and
//! [`Cipher::encrypt_stream`] / [`Cipher::decrypt_stream`] from a reader to a writer in
//! constant memory, on every core for CTR, ECB and CBC decryption.
//!
//! ```
//! use hyperseal_toolkit::hazmat::Cipher;
//! let c = Cipher::parse("sm4-ctr")?;
//! let (key, iv) = ([7u8; 16], [9u8; 16]);
//! let ct = c.encrypt(&key, Some(&iv), b"legacy data")?;
//! let mut pt = Vec::new();
//! c.decrypt_stream(&key, Some(&iv), &ct[..], &mut pt)?;
//! assert_eq!(pt, b"legacy data");
//! # Ok::<(), hyperseal_toolkit::Error>(())
//! ```

use std::io::{Read, Write};

use zeroize::Zeroizing;

use crate::{Error, Result};

mod ops;
mod stream;

use ops::Keyed;

/// AES block and IV size.
pub const IV_LEN: usize = 16;

/// Block-cipher mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Cipher block chaining with PKCS#7 padding.
    Cbc,
    /// Counter mode (big-endian 128-bit counter, as OpenSSL); no padding.
    Ctr,
    /// Electronic code book with PKCS#7 padding. Leaks equal blocks.
    Ecb,
}

/// The 128-bit block cipher under the mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Block {
    /// AES (aws-lc-rs).
    Aes,
    /// SM4, GB/T 32907 (the project's constant-time SIMD `sm4-simd`); 16-byte keys.
    Sm4,
}

/// A legacy cipher: block cipher, key size and mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cipher {
    /// AES or SM4.
    pub block: Block,
    /// 16 or 32 (SM4: 16).
    pub key_len: usize,
    /// The mode.
    pub mode: Mode,
}

const NAMES: &str =
    "aes-128-cbc, aes-256-cbc, aes-128-ctr, aes-256-ctr, aes-128-ecb, aes-256-ecb, sm4-cbc, sm4-ctr, sm4-ecb";

impl Cipher {
    /// Every supported cipher.
    pub const ALL: [Cipher; 9] = [
        Cipher { block: Block::Aes, key_len: 16, mode: Mode::Cbc },
        Cipher { block: Block::Aes, key_len: 32, mode: Mode::Cbc },
        Cipher { block: Block::Aes, key_len: 16, mode: Mode::Ctr },
        Cipher { block: Block::Aes, key_len: 32, mode: Mode::Ctr },
        Cipher { block: Block::Aes, key_len: 16, mode: Mode::Ecb },
        Cipher { block: Block::Aes, key_len: 32, mode: Mode::Ecb },
        Cipher { block: Block::Sm4, key_len: 16, mode: Mode::Cbc },
        Cipher { block: Block::Sm4, key_len: 16, mode: Mode::Ctr },
        Cipher { block: Block::Sm4, key_len: 16, mode: Mode::Ecb },
    ];

    /// OpenSSL-style name, e.g. `aes-256-cbc`, `sm4-ctr`.
    pub fn name(self) -> &'static str {
        if self.block == Block::Sm4 {
            return match self.mode {
                Mode::Cbc => "sm4-cbc",
                Mode::Ctr => "sm4-ctr",
                Mode::Ecb => "sm4-ecb",
            };
        }
        match (self.key_len, self.mode) {
            (16, Mode::Cbc) => "aes-128-cbc",
            (16, Mode::Ctr) => "aes-128-ctr",
            (16, Mode::Ecb) => "aes-128-ecb",
            (_, Mode::Cbc) => "aes-256-cbc",
            (_, Mode::Ctr) => "aes-256-ctr",
            (_, Mode::Ecb) => "aes-256-ecb",
        }
    }

    /// Parses an OpenSSL-style name.
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        Cipher::ALL.into_iter().find(|c| c.name() == lower).ok_or_else(|| Error::unknown(name, NAMES))
    }

    /// Whether the mode takes an IV (ECB does not).
    pub fn needs_iv(self) -> bool {
        self.mode != Mode::Ecb
    }

    /// The one-line reason this cipher is hazardous, for warnings.
    pub fn hazard(self) -> &'static str {
        match self.mode {
            Mode::Cbc => "unauthenticated (no integrity; padding-oracle prone)",
            Mode::Ctr => "unauthenticated (ciphertext is malleable; never reuse key+IV)",
            Mode::Ecb => "unauthenticated and leaks equal blocks (no IV)",
        }
    }

    fn iv(self, iv: Option<&[u8]>) -> Result<Option<[u8; IV_LEN]>> {
        match (self.needs_iv(), iv) {
            (false, None) => Ok(None),
            (false, Some(_)) => Err(Error::param("ECB takes no IV")),
            (true, None) => Err(Error::param(format!("{} needs a 16-byte IV", self.name()))),
            (true, Some(iv)) => {
                Ok(Some(iv.try_into().map_err(|_| Error::InvalidLength("IV must be 16 bytes"))?))
            }
        }
    }

    /// Encrypts `plaintext` exactly like `openssl enc -<name> -K <key> [-iv <iv>]`.
    pub fn encrypt(self, key: &[u8], iv: Option<&[u8]>, plaintext: &[u8]) -> Result<Vec<u8>> {
        let at = self.iv(iv)?.unwrap_or_default();
        let keyed = Keyed::new(self, key, false)?;
        // Zeroizing until encrypted: an error must not leave the plaintext copy behind.
        let mut buf = Zeroizing::new(Vec::with_capacity(plaintext.len() + IV_LEN));
        buf.extend_from_slice(plaintext);
        if keyed.pads() {
            buf.resize(plaintext.len() + IV_LEN, 0);
            let n = ops::pad(&mut buf, plaintext.len());
            buf.truncate(n);
        }
        keyed.apply(&mut buf, at)?;
        Ok(std::mem::take(&mut *buf))
    }

    /// Decrypts the output of [`Cipher::encrypt`] or `openssl enc`.
    ///
    /// A bad key, IV or corrupted final block usually shows up as a padding error
    /// ([`Error::Crypto`]) in CBC/ECB, but CTR and many corruptions decrypt "successfully"
    /// to garbage: these modes cannot tell.
    pub fn decrypt(self, key: &[u8], iv: Option<&[u8]>, ciphertext: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        let at = self.iv(iv)?.unwrap_or_default();
        let keyed = Keyed::new(self, key, true)?;
        if keyed.pads() && (ciphertext.is_empty() || !ciphertext.len().is_multiple_of(IV_LEN)) {
            return Err(Error::Crypto);
        }
        let mut buf = Zeroizing::new(ciphertext.to_vec());
        keyed.apply(&mut buf, at)?;
        if keyed.pads() {
            let last: [u8; IV_LEN] = buf[buf.len() - IV_LEN..].try_into().expect("one block");
            let n = buf.len() - ops::unpad(&last)?;
            buf.truncate(n);
        }
        Ok(buf)
    }

    /// Encrypts everything `input` yields to `output`, byte for byte what [`Cipher::encrypt`]
    /// (and `openssl enc`) would give for the whole input, in constant memory (a few 4 MiB
    /// batches) and, except for CBC, on every core. Returns the number of bytes written.
    ///
    /// # Errors
    /// I/O errors are [`Error::Io`], their message prefixed by `reading input:` or
    /// `writing output:`; what was written before an error stays written.
    pub fn encrypt_stream<R: Read + Send, W: Write + Send>(
        self,
        key: &[u8],
        iv: Option<&[u8]>,
        input: R,
        output: W,
    ) -> Result<u64> {
        let at = self.iv(iv)?.unwrap_or_default();
        stream::run(&Keyed::new(self, key, false)?, at, input, output, stream::BATCH, false)
    }

    /// Decrypts a stream, as [`Cipher::encrypt_stream`] encrypts one. In CBC and ECB the
    /// padding can only be checked at the end, so on [`Error::Crypto`] all but the last block
    /// has already been written: send the output somewhere the caller discards on error.
    ///
    /// # Errors
    /// [`Error::Crypto`] for a padded mode whose input is not whole blocks or whose padding is
    /// wrong; I/O errors as for [`Cipher::encrypt_stream`].
    pub fn decrypt_stream<R: Read + Send, W: Write + Send>(
        self,
        key: &[u8],
        iv: Option<&[u8]>,
        input: R,
        output: W,
    ) -> Result<u64> {
        let at = self.iv(iv)?.unwrap_or_default();
        stream::run(&Keyed::new(self, key, true)?, at, input, output, stream::BATCH, true)
    }
}

impl std::fmt::Display for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sp800_38a_cbc_first_block() {
        // NIST SP 800-38A F.2.5 (AES-256-CBC), first block; PKCS#7 adds one block.
        let key = hex::decode("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4").unwrap();
        let iv = hex::decode("000102030405060708090a0b0c0d0e0f").unwrap();
        let pt = hex::decode("6bc1bee22e409f96e93d7e117393172a").unwrap();
        let c = Cipher::parse("aes-256-cbc").unwrap();
        let ct = c.encrypt(&key, Some(&iv), &pt).unwrap();
        assert_eq!(hex::encode(&ct[..16]), "f58c4c04d6e5f1ba779eabfb5f7bfbd6");
        assert_eq!(ct.len(), 32);
        assert_eq!(*c.decrypt(&key, Some(&iv), &ct).unwrap(), pt);
    }

    #[test]
    fn all_round_trip_and_iv_rules() {
        for c in Cipher::ALL {
            let key = vec![7u8; c.key_len];
            let iv = [9u8; 16];
            let iv = c.needs_iv().then_some(&iv[..]);
            for len in [0usize, 1, 15, 16, 17, 100] {
                let pt = vec![3u8; len];
                let ct = c.encrypt(&key, iv, &pt).unwrap();
                assert_eq!(*c.decrypt(&key, iv, &ct).unwrap(), pt, "{c} {len}");
            }
            assert!(c.encrypt(&key, if c.needs_iv() { None } else { Some(&[0u8; 16]) }, b"x").is_err());
            assert!(c.encrypt(&[0u8; 24], iv, b"x").is_err());
        }
    }
}
