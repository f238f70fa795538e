//! Passphrase recipients: Argon2id (RFC 9106) in place of age's scrypt.
//!
//! Stanza `-> argon2id <b64 16-byte salt> <m_kib> <t> <p>` (decimal, canonical), wrap key =
//! Argon2id(passphrase, salt = "hyperseal/v1/argon2id" ‖ salt, 32 bytes), body =
//! ChaCha20-Poly1305(wrap key, zero nonce, file key). The zero nonce is safe: a fresh random salt
//! gives a fresh key for every wrap.
//!
//! As in age, a passphrase must be the only recipient of a file: otherwise anyone holding another
//! recipient's key could learn the file key and then run an offline dictionary attack on the
//! passphrase from the stanza. The sender enforces it with a unique random label; the identity
//! enforces it by refusing an argon2id stanza that is not alone. The identity also caps the work
//! factor before running Argon2, so a hostile file cannot make it burn gigabytes or hours.

use argon2::{Algorithm, Argon2, Params, Version};
use zeroize::Zeroizing;

use super::primitives::{check_wrapped_len, decode_arg, open_file_key, random, seal_file_key, ZERO_NONCE};
use super::traits::{Identity, Labels, Recipient};
use crate::format::{encode_b64, Stanza};
use crate::{error::Error, file_key::FileKey};

/// Passphrases have no string encoding; these never match a key line.
pub const RECIPIENT_HRP: &str = "\0passphrase";
/// See [`RECIPIENT_HRP`].
pub const IDENTITY_HRP: &str = "\0PASSPHRASE";

const TAG: &str = "argon2id";
const SALT_PREFIX: &[u8] = b"hyperseal/v1/argon2id";
const SALT_LEN: usize = 16;

/// Default memory, KiB (64 MiB). With t = 3, p = 1 one derivation takes ~185 ms on the
/// reference machine (AMD EPYC, release build, measured 2026-11 with argon2 0.6): slow enough
/// to cost a guesser, fast enough to be unnoticed once per file.
pub const DEFAULT_M_KIB: u32 = 65536;
/// Default passes.
pub const DEFAULT_T: u32 = 3;
/// Default lanes. One, because the `argon2` crate is single-threaded here: more lanes would
/// only add time for us without adding cost for a parallel attacker.
pub const DEFAULT_P: u32 = 1;

/// Default identity cap on memory: 1 GiB.
pub const MAX_M_KIB: u32 = 1024 * 1024;
/// Default identity cap on passes.
pub const MAX_T: u32 = 16;
/// Default identity cap on lanes.
pub const MAX_P: u32 = 16;

fn derive(passphrase: &str, salt: &[u8], m_kib: u32, t: u32, p: u32) -> Result<Zeroizing<[u8; 32]>, Error> {
    let params = Params::new(m_kib, t, p, Some(32))
        .map_err(|e| Error::InvalidStanza(format!("argon2id parameters rejected: {e}")))?;
    let mut full_salt = Vec::with_capacity(SALT_PREFIX.len() + salt.len());
    full_salt.extend_from_slice(SALT_PREFIX);
    full_salt.extend_from_slice(salt);
    let mut key = Zeroizing::new([0u8; 32]);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(passphrase.as_bytes(), &full_salt, &mut key[..])
        .map_err(|_| Error::Crypto)?;
    Ok(key)
}

/// Encrypts to a passphrase.
pub struct PassphraseRecipient {
    passphrase: Zeroizing<String>,
    m_kib: u32,
    t: u32,
    p: u32,
}

impl std::fmt::Debug for PassphraseRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PassphraseRecipient(m={} KiB, t={}, p={}, passphrase redacted)",
            self.m_kib, self.t, self.p
        )
    }
}

impl PassphraseRecipient {
    /// Uses the default work factor (m = 64 MiB, t = 3, p = 1).
    pub fn new(passphrase: Zeroizing<String>) -> Self {
        PassphraseRecipient { passphrase, m_kib: DEFAULT_M_KIB, t: DEFAULT_T, p: DEFAULT_P }
    }

    /// Uses an explicit work factor (tests, or users who want more). Checked now so that a bad
    /// choice fails at setup rather than mid-encryption.
    pub fn with_params(passphrase: Zeroizing<String>, m_kib: u32, t: u32, p: u32) -> Result<Self, Error> {
        Params::new(m_kib, t, p, Some(32))
            .map_err(|e| Error::InvalidArgument(format!("argon2id parameters: {e}")))?;
        Ok(PassphraseRecipient { passphrase, m_kib, t, p })
    }
}

impl Recipient for PassphraseRecipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let salt = random::<SALT_LEN>()?;
        let key = derive(&self.passphrase, &salt, self.m_kib, self.t, self.p)?;
        let body = seal_file_key(&key, ZERO_NONCE, file_key);
        let args = vec![encode_b64(&salt), self.m_kib.to_string(), self.t.to_string(), self.p.to_string()];
        // A fresh random label on every wrap: it equals no other recipient's label set (not even
        // this recipient's, if listed twice), so `wrap_all` refuses any company.
        let label = format!("passphrase-{}", encode_b64(&random::<16>()?));
        Ok((vec![Stanza::new(TAG, args, body)], Labels::from([label])))
    }
}

/// Decrypts with a passphrase, refusing work factors above its caps.
pub struct PassphraseIdentity {
    passphrase: Zeroizing<String>,
    max_m_kib: u32,
    max_t: u32,
    max_p: u32,
}

impl std::fmt::Debug for PassphraseIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PassphraseIdentity(max m={} KiB, t={}, passphrase redacted)", self.max_m_kib, self.max_t)
    }
}

impl PassphraseIdentity {
    /// Default caps: m ≤ 1 GiB, t ≤ 16, p ≤ 16.
    pub fn new(passphrase: Zeroizing<String>) -> Self {
        PassphraseIdentity { passphrase, max_m_kib: MAX_M_KIB, max_t: MAX_T, max_p: MAX_P }
    }

    /// Overrides the memory and pass caps (the lane cap stays at 16).
    pub fn with_max(mut self, m_kib_max: u32, t_max: u32) -> Self {
        self.max_m_kib = m_kib_max;
        self.max_t = t_max;
        self
    }

    fn unwrap_own(&self, stanza: &Stanza) -> Result<FileKey, Error> {
        let [salt, m, t, p] = stanza.args.as_slice() else {
            return Err(Error::InvalidStanza("argon2id stanza must have exactly four arguments".into()));
        };
        let salt = decode_arg(salt, SALT_LEN, "argon2id salt")?;
        let (m, t, p) = (parse_decimal(m)?, parse_decimal(t)?, parse_decimal(p)?);
        if m > self.max_m_kib || t > self.max_t || p > self.max_p {
            return Err(Error::WorkFactorTooHigh(format!(
                "m = {m} KiB, t = {t}, p = {p}; the limit is m ≤ {}, t ≤ {}, p ≤ {}",
                self.max_m_kib, self.max_t, self.max_p
            )));
        }
        check_wrapped_len(&stanza.body)?;
        let key = derive(&self.passphrase, &salt, m, t, p)?;
        // The stanza is ours by construction (there is only one), so a failed open means the
        // passphrase is wrong, or the stanza was altered: the same answer for both.
        open_file_key(&key, ZERO_NONCE, &stanza.body).ok_or(Error::WrongPassphrase)
    }
}

/// A canonical positive decimal `u32`: digits only, no sign, no leading zero. Canonical so the
/// header, which the MAC covers, has one spelling per parameter set.
fn parse_decimal(s: &str) -> Result<u32, Error> {
    let bad = || Error::InvalidStanza(format!("argon2id parameter {s:?} is not a canonical decimal"));
    if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) || s.starts_with('0') {
        return Err(bad());
    }
    s.parse().map_err(|_| bad())
}

impl Identity for PassphraseIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        (stanza.tag == TAG).then(|| self.unwrap_own(stanza))
    }

    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        if stanzas.len() > 1 && stanzas.iter().any(|s| s.tag == TAG) {
            return Some(Err(Error::InvalidStanza("argon2id stanza must be the only stanza".into())));
        }
        stanzas.iter().find_map(|s| self.unwrap_stanza(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    // Tiny work factors: the argon2 crate is slow in debug builds.
    fn recipient(pw: &str) -> PassphraseRecipient {
        PassphraseRecipient::with_params(Zeroizing::new(pw.into()), 64, 1, 1).unwrap()
    }
    fn identity(pw: &str) -> PassphraseIdentity {
        PassphraseIdentity::new(Zeroizing::new(pw.into()))
    }

    #[test]
    fn round_trip_both_key_lengths() {
        let pair = Pair { recipient: &recipient("pw"), identity: &identity("pw") };
        pair.round_trip(&[16, 32], |_, s, labels| {
            assert_eq!(labels.len(), 1);
            assert_eq!(s.args[1..], ["64", "1", "1"]);
        });
    }

    #[test]
    fn wrong_passphrase_and_not_mine() {
        let pair = Pair { recipient: &recipient("right"), identity: &identity("right") };
        let s = pair.stanza(16);
        assert!(matches!(identity("wrong").unwrap_stanza(&s), Some(Err(Error::WrongPassphrase))));
        pair.not_mine(&s, &[], &[Stanza::new("X25519", vec!["AA".into()], vec![0; 32])]);
        // No recipient to tell apart: a tampered body reads as a wrong passphrase.
        pair.damaged(&s, Damaged::WrongPassphrase, &[&|b| b.body[0] ^= 1]);
    }

    #[test]
    fn must_be_alone() {
        use crate::recipient::traits::wrap_all;

        let (mut stanzas, _) = recipient("pw").wrap_file_key(&FileKey::generate(16)).unwrap();
        stanzas.push(Stanza::new("X25519", vec!["AA".into()], vec![0; 32]));
        let r = identity("pw").unwrap_stanzas(&stanzas);
        assert!(matches!(r, Some(Err(Error::InvalidStanza(m))) if m.contains("only stanza")));
        // and labels stop the sender from making such a file, even with itself twice
        let fk = FileKey::generate(16);
        let x25519 = crate::recipient::x25519::generate().unwrap().public;
        let x = Box::new(crate::recipient::x25519::X25519Recipient::from_bech32(&x25519).unwrap());
        let pw = || Box::new(recipient("pw")) as Box<dyn Recipient>;
        assert!(matches!(wrap_all(&[pw(), x], &fk), Err(Error::IncompatibleRecipients(_))));
        assert!(matches!(wrap_all(&[pw(), pw()], &fk), Err(Error::IncompatibleRecipients(_))));
        assert_eq!(wrap_all(&[pw()], &fk).unwrap().len(), 1);
    }

    #[test]
    fn work_factor_cap_checked_before_argon2() {
        let (stanzas, _) = recipient("pw").wrap_file_key(&FileKey::generate(16)).unwrap();
        // u32::MAX KiB would take 4 TiB: if the cap were checked after Argon2 this would abort.
        for (m, t, p) in [("4294967295", "1", "1"), ("64", "17", "1"), ("64", "1", "17")] {
            let mut s = stanzas[0].clone();
            s.args[1..].clone_from_slice(&[m.into(), t.into(), p.into()]);
            assert!(
                matches!(identity("pw").unwrap_stanza(&s), Some(Err(Error::WorkFactorTooHigh(_)))),
                "{m} {t} {p}"
            );
        }
        let mut s = stanzas[0].clone();
        s.args[1] = "128".into();
        let capped = identity("pw").with_max(100, 16);
        assert!(matches!(capped.unwrap_stanza(&s), Some(Err(Error::WorkFactorTooHigh(_)))));
    }

    #[test]
    fn malformed_stanzas() {
        let pair = Pair { recipient: &recipient("pw"), identity: &identity("pw") };
        pair.damaged(
            &pair.stanza(16),
            Damaged::Invalid,
            &[
                &|s| s.args.truncate(3),
                &|s| s.args[0] = encode_b64(&[0; 15]),
                &|s| s.args[1] = "064".into(),
                &|s| s.args[2] = "+1".into(),
                &|s| s.args[3] = "0".into(),
                &|s| s.args[1] = "7".into(), // below Argon2's minimum of 8 KiB per lane
                &|s| s.body.truncate(31),
                &|s| s.body.push(0),
            ],
        );
        assert_eq!(parse_decimal("4294967295").unwrap(), u32::MAX);
        assert!(parse_decimal("4294967296").is_err());
    }

    /// RFC 9106 section 5.3 Argon2id test vector for the crate we rely on (it needs a secret and
    /// associated data, so it goes through the crate's full API rather than `derive`).
    #[test]
    fn rfc9106_argon2id_vector() {
        let mut out = [0u8; 32];
        // The crate exposes associated data only through `ParamsBuilder::data`.
        let params = argon2::ParamsBuilder::new()
            .m_cost(32)
            .t_cost(3)
            .p_cost(4)
            .output_len(32)
            .data(argon2::AssociatedData::new(&[4; 12]).unwrap())
            .build()
            .unwrap();
        Argon2::new_with_secret(&[3; 8], Algorithm::Argon2id, Version::V0x13, params)
            .unwrap()
            .hash_password_into(&[1; 32], &[2; 16], &mut out)
            .unwrap();
        assert_eq!(hex::encode(out), "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659");
    }
}
