//! One keyed legacy cipher (block cipher, mode, direction) applied to a run of whole blocks in
//! place, starting anywhere in the stream. The one-shot calls and the streaming pipeline both
//! go through [`Keyed::apply`], so each mode is written once.
//!
//! "Anywhere in the stream" is what makes the parallel pipeline possible: a piece that starts at
//! block `k` needs only a 16-byte [`Keyed::chain_at`] value — the counter block `iv + k` in CTR,
//! the ciphertext block `k - 1` (or the IV) in CBC, nothing in ECB. CBC encryption is the one
//! mode that cannot start before the previous piece has been encrypted ([`Keyed::parallel`]).
//!
//! AES runs on aws-lc-rs: CTR and CBC on its unpadded `EncryptingKey`/`DecryptingKey` (one
//! `AES_ctr128_encrypt` / `AES_cbc_encrypt` call per piece, the multi-block AES-NI code), ECB
//! through its EVP streaming keys, because its unpadded ECB key encrypts one block per FFI call
//! (several times slower). SM4 runs on `sm4-simd`, whose ECB, CTR and CBC decryption hand the
//! SIMD backend 16 blocks at a time.

use aws_lc_rs::cipher::{
    DecryptingKey, DecryptionContext, EncryptingKey, EncryptionContext, StreamingDecryptingKey,
    StreamingEncryptingKey, UnboundCipherKey, AES_128, AES_256,
};
use aws_lc_rs::iv::FixedLength;
use zeroize::Zeroizing;

use super::{Block, Cipher, Mode, IV_LEN};
use crate::{Error, Result};

/// The EVP ECB keys write to a separate buffer: the work is done in slices of this size, each
/// copied back (the copy stays in the L2 cache and costs far less than the cipher).
const ECB_SLICE: usize = 64 << 10;

/// The AES key prepared for one mode and direction.
enum Aes {
    Ctr(EncryptingKey),
    CbcEncrypt(EncryptingKey),
    CbcDecrypt(DecryptingKey),
    /// ECB builds an EVP key per call from the raw key (see the module docs).
    Ecb,
}

/// A cipher keyed for one direction.
pub(crate) struct Keyed {
    cipher: Cipher,
    decrypt: bool,
    key: Zeroizing<Vec<u8>>,
    aes: Option<Aes>,
}

impl Keyed {
    /// Checks the key length and prepares the key schedule.
    pub(crate) fn new(cipher: Cipher, key: &[u8], decrypt: bool) -> Result<Keyed> {
        if key.len() != cipher.key_len {
            return Err(Error::InvalidKey(match (cipher.block, cipher.key_len) {
                (Block::Sm4, _) => "SM4 needs a 16-byte key",
                (_, 16) => "AES-128 needs a 16-byte key",
                _ => "AES-256 needs a 32-byte key",
            }));
        }
        let aes = match cipher.block {
            Block::Sm4 => None,
            Block::Aes => Some(match (cipher.mode, decrypt) {
                (Mode::Ctr, _) => Aes::Ctr(EncryptingKey::ctr(unbound(cipher, key)?)?),
                (Mode::Cbc, false) => Aes::CbcEncrypt(EncryptingKey::cbc(unbound(cipher, key)?)?),
                (Mode::Cbc, true) => Aes::CbcDecrypt(DecryptingKey::cbc(unbound(cipher, key)?)?),
                (Mode::Ecb, _) => Aes::Ecb,
            }),
        };
        Ok(Keyed { cipher, decrypt, key: Zeroizing::new(key.to_vec()), aes })
    }

    /// Whether pieces may be processed at the same time (all but CBC encryption).
    pub(crate) fn parallel(&self) -> bool {
        self.cipher.mode != Mode::Cbc || self.decrypt
    }

    /// Whether the mode pads (CBC and ECB, PKCS#7 as `openssl enc`).
    pub(crate) fn pads(&self) -> bool {
        self.cipher.mode != Mode::Ctr
    }

    /// The chain value of the piece that starts `offset` bytes (a multiple of 16) into `data`,
    /// when `data` starts with chain value `first`. Read before anything is processed.
    pub(crate) fn chain_at(&self, data: &[u8], first: [u8; IV_LEN], offset: usize) -> [u8; IV_LEN] {
        if offset == 0 {
            return first;
        }
        match self.cipher.mode {
            Mode::Ctr => counter_add(first, offset / IV_LEN),
            // Only CBC decryption is split, and there the previous block is ciphertext.
            Mode::Cbc => data[offset - IV_LEN..offset].try_into().expect("one block"),
            Mode::Ecb => first,
        }
    }

    /// Processes `data` in place as the run of blocks that starts with chain value `at` (see
    /// [`Keyed::chain_at`]). Every length is a multiple of 16 but the last CTR piece's.
    pub(crate) fn apply(&self, data: &mut [u8], at: [u8; IV_LEN]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mode = self.cipher.mode;
        if mode != Mode::Ctr && !data.len().is_multiple_of(IV_LEN) {
            return Err(Error::InvalidLength("not a whole number of blocks"));
        }
        match &self.aes {
            Some(Aes::Ctr(k)) => {
                k.less_safe_encrypt(data, EncryptionContext::Iv128(FixedLength::from(at)))?;
            }
            Some(Aes::CbcEncrypt(k)) => {
                k.less_safe_encrypt(data, EncryptionContext::Iv128(FixedLength::from(at)))?;
            }
            Some(Aes::CbcDecrypt(k)) => {
                k.decrypt(data, DecryptionContext::Iv128(FixedLength::from(at)))?;
            }
            Some(Aes::Ecb) => self.aes_ecb(data)?,
            None => self.sm4(data, at)?,
        }
        Ok(())
    }

    fn sm4(&self, data: &mut [u8], at: [u8; IV_LEN]) -> Result<()> {
        use sm4_simd::modes;
        let key: &[u8; 16] =
            self.key[..].try_into().map_err(|_| Error::InvalidKey("SM4 needs a 16-byte key"))?;
        let r = match (self.cipher.mode, self.decrypt) {
            (Mode::Ctr, _) => {
                modes::ctr_apply(key, &at, data);
                Ok(())
            }
            (Mode::Cbc, false) => modes::cbc_encrypt_nopad(key, &at, data),
            (Mode::Cbc, true) => modes::cbc_decrypt_nopad(key, &at, data),
            (Mode::Ecb, false) => modes::ecb_encrypt(key, data),
            (Mode::Ecb, true) => modes::ecb_decrypt(key, data),
        };
        r.map_err(|_| Error::InvalidLength("not a whole number of blocks"))
    }

    /// AES-ECB through aws-lc's EVP (multi-block AES-NI). Padding is ours (the caller's), so
    /// the EVP keys only ever see whole blocks and `finish` is never called. Decryption: EVP
    /// keeps the last block of every update back for its padding check and releases it with
    /// the next update, so the output trails the input by one block (written behind the read
    /// position, into bytes already consumed) and one dummy block at the end flushes it.
    fn aes_ecb(&self, data: &mut [u8]) -> Result<()> {
        let mut tmp = Zeroizing::new(vec![0u8; ECB_SLICE + IV_LEN]);
        let key = unbound(self.cipher, &self.key)?;
        if !self.decrypt {
            let mut k = StreamingEncryptingKey::ecb_pkcs7(key)?;
            for slice in data.chunks_mut(ECB_SLICE) {
                let n = k.update(slice, &mut tmp[..])?.written().len();
                if n != slice.len() {
                    return Err(Error::Crypto);
                }
                slice.copy_from_slice(&tmp[..n]);
            }
            return Ok(());
        }
        let mut k = StreamingDecryptingKey::ecb_pkcs7(key, DecryptionContext::None)?;
        let mut written = 0;
        let mut read = 0;
        while read < data.len() {
            let end = (read + ECB_SLICE).min(data.len());
            let n = k.update(&data[read..end], &mut tmp[..])?.written().len();
            data[written..written + n].copy_from_slice(&tmp[..n]);
            written += n;
            read = end;
        }
        let n = k.update(&[0u8; IV_LEN], &mut tmp[..])?.written().len();
        if written + n != data.len() {
            return Err(Error::Crypto);
        }
        data[written..].copy_from_slice(&tmp[..n]);
        Ok(())
    }
}

fn unbound(cipher: Cipher, key: &[u8]) -> Result<UnboundCipherKey> {
    let alg = if cipher.key_len == 16 { &AES_128 } else { &AES_256 };
    Ok(UnboundCipherKey::new(alg, key)?)
}

/// `block + n` as a 128-bit big-endian counter that wraps, as OpenSSL's CTR increments it.
pub(crate) fn counter_add(block: [u8; IV_LEN], n: usize) -> [u8; IV_LEN] {
    u128::from_be_bytes(block).wrapping_add(n as u128).to_be_bytes()
}

/// Appends PKCS#7 padding to `buf[..len]` (room for 16 more bytes is the caller's); returns the
/// padded length.
pub(crate) fn pad(buf: &mut [u8], len: usize) -> usize {
    let p = IV_LEN - len % IV_LEN;
    buf[len..len + p].fill(p as u8);
    len + p
}

/// The PKCS#7 padding length of the decrypted last block, or [`Error::Crypto`]. Branch-free over
/// the block's bytes, so timing does not say which byte was wrong (the error itself remains a
/// padding oracle, which is why these modes are hazmat).
pub(crate) fn unpad(last: &[u8; IV_LEN]) -> Result<usize> {
    let p = last[IV_LEN - 1];
    let mut bad = u8::from(p == 0) | u8::from(p as usize > IV_LEN);
    for (i, &b) in last.iter().enumerate() {
        // In the padding when i >= 16 - p; compared without a branch on p.
        let in_pad = u8::from(i + p as usize >= IV_LEN);
        bad |= in_pad & u8::from(b != p);
    }
    if bad == 0 {
        Ok(p as usize)
    } else {
        Err(Error::Crypto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_wraps_at_128_bits() {
        let max = [0xffu8; 16];
        assert_eq!(counter_add(max, 1), [0u8; 16]);
        let mut low = [0u8; 16];
        low[11] = 0xff;
        low[12..].fill(0xff);
        let mut want = [0u8; 16];
        want[10] = 1;
        assert_eq!(counter_add(low, 1), want, "carries past the low 32 bits");
    }

    #[test]
    fn padding_rules() {
        for p in 1..=16u8 {
            let mut b = [0x41u8; 16];
            b[16 - p as usize..].fill(p);
            assert_eq!(unpad(&b).unwrap(), p as usize);
        }
        let mut b = [3u8; 16];
        b[14] = 2;
        assert!(unpad(&b).is_err(), "inconsistent padding byte");
        assert!(unpad(&[0u8; 16]).is_err(), "zero padding");
        assert!(unpad(&[17u8; 16]).is_err(), "padding longer than a block");
        let mut buf = [0u8; 48];
        assert_eq!(pad(&mut buf, 16), 32);
        assert_eq!(&buf[16..32], &[16u8; 16]);
        assert_eq!(pad(&mut buf, 5), 16);
        assert_eq!(&buf[5..16], &[11u8; 11]);
    }
}
