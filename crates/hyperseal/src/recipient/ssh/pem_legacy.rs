//! PEM's legacy encryption (RFC 1421 headers as OpenSSL writes them): `Proc-Type: 4,ENCRYPTED`
//! and `DEK-Info: CIPHER,IV-IN-HEX`, the key from OpenSSL's `EVP_BytesToKey` (MD5, one
//! iteration, the salt being the IV's first 8 bytes) and the body in CBC mode with PKCS#7
//! padding. `ssh-keygen -m PEM -N PASS` writes AES-128-CBC; `openssl genrsa -traditional
//! -aes256` and `openssl rsa -traditional -des3` the others. age reads these keys through Go's
//! `x509.DecryptPEMBlock`, which takes the same five ciphers as here.
//!
//! The derivation is weak (one MD5 per 16 bytes of key, no work factor), so these keys are read,
//! never written. Nothing authenticates the body: a wrong passphrase shows only as bad padding
//! (and, about once in 256 tries, as good padding over garbage, which the caller must refuse as a
//! wrong passphrase too, see `pem_key.rs`).

use aes::{Aes128, Aes192, Aes256};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockCipherDecrypt, BlockModeDecrypt, KeyInit, KeyIvInit};
use des::{Des, TdesEde3};
use md5::{Digest, Md5};
use zeroize::Zeroizing;

use crate::error::Error;

/// The ciphers of `DEK-Info` (OpenSSL's names, as Go's `x509` takes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DekCipher {
    /// Single DES (`openssl … -des`): 56-bit keys, read only because age reads them.
    DesCbc,
    /// Triple DES, EDE with three keys (`-des3`).
    DesEde3Cbc,
    /// AES-128 (`ssh-keygen -m PEM`, `-aes128`).
    Aes128Cbc,
    /// AES-192 (`-aes192`).
    Aes192Cbc,
    /// AES-256 (`-aes256`).
    Aes256Cbc,
}

impl DekCipher {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "DES-CBC" => DekCipher::DesCbc,
            "DES-EDE3-CBC" => DekCipher::DesEde3Cbc,
            "AES-128-CBC" => DekCipher::Aes128Cbc,
            "AES-192-CBC" => DekCipher::Aes192Cbc,
            "AES-256-CBC" => DekCipher::Aes256Cbc,
            _ => return None,
        })
    }

    /// Key and block (IV) lengths in bytes.
    fn sizes(self) -> (usize, usize) {
        match self {
            DekCipher::DesCbc => (8, 8),
            DekCipher::DesEde3Cbc => (24, 8),
            DekCipher::Aes128Cbc => (16, 16),
            DekCipher::Aes192Cbc => (24, 16),
            DekCipher::Aes256Cbc => (32, 16),
        }
    }
}

/// How a PEM body is encrypted: its cipher and IV (the salt is the IV's first 8 bytes).
#[derive(Clone, Debug)]
pub struct LegacyEncryption {
    cipher: DekCipher,
    iv: Vec<u8>,
}

/// Whether a PEM block's header lines say it is encrypted (`Proc-Type: 4,ENCRYPTED`).
pub fn is_encrypted(headers: &[String]) -> bool {
    headers.iter().any(|h| header(h, "Proc-Type").is_some_and(|v| v.contains("ENCRYPTED")))
}

/// `Some(value)` if `line` is the header `name: value`.
fn header<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let (n, v) = line.split_once(':')?;
    (n.trim() == name).then(|| v.trim())
}

impl LegacyEncryption {
    /// Reads the `Proc-Type` and `DEK-Info` headers of an encrypted block. Every field is
    /// checked exactly: a known cipher, an IV of its block size in hex.
    pub fn from_headers(headers: &[String]) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidKey(format!("PEM key with legacy encryption: {why}"));
        let proc_type = headers.iter().find_map(|h| header(h, "Proc-Type"));
        if proc_type != Some("4,ENCRYPTED") {
            return Err(bad("expected the header Proc-Type: 4,ENCRYPTED"));
        }
        let dek =
            headers.iter().find_map(|h| header(h, "DEK-Info")).ok_or_else(|| bad("no DEK-Info header"))?;
        let (name, iv_hex) = dek.split_once(',').ok_or_else(|| bad("malformed DEK-Info header"))?;
        let cipher = DekCipher::from_name(name.trim())
            .ok_or_else(|| bad("unsupported cipher in DEK-Info (DES, 3DES and AES-CBC are read)"))?;
        let iv_hex = iv_hex.trim();
        let (_, block) = cipher.sizes();
        // Checked before decoding: the IV's length is the cipher's block size, nothing else.
        if iv_hex.len() != 2 * block {
            return Err(bad("the DEK-Info IV does not match the cipher's block size"));
        }
        let iv = hex_decode(iv_hex).ok_or_else(|| bad("the DEK-Info IV is not hex"))?;
        Ok(LegacyEncryption { cipher, iv })
    }

    /// The cipher named in `DEK-Info`.
    pub fn cipher(&self) -> DekCipher {
        self.cipher
    }

    /// Decrypts `body` with `passphrase`. Bad padding (or a body that is not whole blocks) is
    /// [`Error::WrongPassphrase`]: with no MAC, that is all a wrong passphrase shows.
    pub fn decrypt(&self, body: &[u8], passphrase: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let (key_len, block) = self.cipher.sizes();
        if body.is_empty() || !body.len().is_multiple_of(block) {
            return Err(Error::InvalidKey(
                "PEM key with legacy encryption: the body is not whole cipher blocks".into(),
            ));
        }
        let key = bytes_to_key(passphrase, &self.iv[..8], key_len);
        let mut buf = Zeroizing::new(body.to_vec());
        let n = match self.cipher {
            DekCipher::DesCbc => cbc_decrypt::<Des>(&key, &self.iv, &mut buf),
            DekCipher::DesEde3Cbc => cbc_decrypt::<TdesEde3>(&key, &self.iv, &mut buf),
            DekCipher::Aes128Cbc => cbc_decrypt::<Aes128>(&key, &self.iv, &mut buf),
            DekCipher::Aes192Cbc => cbc_decrypt::<Aes192>(&key, &self.iv, &mut buf),
            DekCipher::Aes256Cbc => cbc_decrypt::<Aes256>(&key, &self.iv, &mut buf),
        }?;
        buf.truncate(n);
        Ok(buf)
    }
}

/// CBC decryption in place; the plaintext's length once the PKCS#7 padding is checked and gone.
fn cbc_decrypt<C: BlockCipherDecrypt + KeyInit>(
    key: &[u8],
    iv: &[u8],
    buf: &mut [u8],
) -> Result<usize, Error> {
    let dec = cbc::Decryptor::<C>::new_from_slices(key, iv).map_err(|_| Error::Crypto)?;
    dec.decrypt_padded::<Pkcs7>(buf).map(|pt| pt.len()).map_err(|_| Error::WrongPassphrase)
}

/// OpenSSL's `EVP_BytesToKey` with MD5 and one iteration: `D_1 = MD5(pass ‖ salt)`,
/// `D_i = MD5(D_{i-1} ‖ pass ‖ salt)`, the key being the first `len` bytes of `D_1 ‖ D_2 ‖ …`.
fn bytes_to_key(passphrase: &[u8], salt: &[u8], len: usize) -> Zeroizing<Vec<u8>> {
    let mut key = Zeroizing::new(Vec::with_capacity(len + 16));
    let mut prev: Zeroizing<Vec<u8>> = Zeroizing::new(Vec::new());
    while key.len() < len {
        let mut h = Md5::new();
        h.update(&prev[..]);
        h.update(passphrase);
        h.update(salt);
        *prev = h.finalize().to_vec();
        key.extend_from_slice(&prev);
    }
    key.truncate(len);
    key
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    b.len().is_multiple_of(2).then_some(())?;
    b.chunks(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(dek: &str) -> Vec<String> {
        vec!["Proc-Type: 4,ENCRYPTED".into(), format!("DEK-Info: {dek}")]
    }

    /// `openssl enc -aes-256-cbc -S 0102030405060708 -P -pass pass:password -md md5` prints
    /// this key (EVP_BytesToKey, one iteration: two MD5 blocks); shorter keys are its prefixes.
    #[test]
    fn evp_bytes_to_key_matches_openssl() {
        let salt = [1, 2, 3, 4, 5, 6, 7, 8];
        let openssl = "e7b0971e52ca5cc8d0539fb3412f6316f7ba2e6ee293d9f3457b99436b51ce02";
        for len in [8, 16, 24, 32] {
            assert_eq!(hex::encode(&bytes_to_key(b"password", &salt, len)[..]), openssl[..2 * len], "{len}");
        }
    }

    #[test]
    fn headers_are_checked_exactly() {
        let ok =
            LegacyEncryption::from_headers(&headers("AES-128-CBC,8045E7CF19D7794F4ADF5AC63179D985")).unwrap();
        assert_eq!(ok.cipher(), DekCipher::Aes128Cbc);
        assert_eq!(
            LegacyEncryption::from_headers(&headers("DES-EDE3-CBC,3141122CC8905D01")).unwrap().cipher(),
            DekCipher::DesEde3Cbc
        );
        for dek in [
            "AES-128-CBC,00",
            "AES-128-CBC,3141122CC8905D01",
            "DES-EDE3-CBC,8045E7CF19D7794F4ADF5AC63179D985",
            "AES-128-CBC,8045E7CF19D7794F4ADF5AC63179D98Z",
            "AES-128-CTR,8045E7CF19D7794F4ADF5AC63179D985",
            "AES-128-CBC",
        ] {
            assert!(LegacyEncryption::from_headers(&headers(dek)).is_err(), "{dek}");
        }
        assert!(LegacyEncryption::from_headers(&["Proc-Type: 4,ENCRYPTED".into()]).is_err());
        assert!(!is_encrypted(&["Comment: ENCRYPTED".into()]));
        assert!(is_encrypted(&headers("x")));
    }

    #[test]
    fn bodies_that_are_not_whole_blocks_or_bad_padding() {
        let enc =
            LegacyEncryption::from_headers(&headers("AES-256-CBC,77842293DD393F81C41D5FEA37EF1673")).unwrap();
        assert!(matches!(enc.decrypt(&[0u8; 15], b"pw"), Err(Error::InvalidKey(_))));
        assert!(matches!(enc.decrypt(&[], b"pw"), Err(Error::InvalidKey(_))));
        // Some 16-byte block decrypts to bad padding under most passphrases.
        let wrong =
            (0..64u8).filter(|i| matches!(enc.decrypt(&[*i; 16], b"pw"), Err(Error::WrongPassphrase)));
        assert!(wrong.count() > 32);
    }
}
