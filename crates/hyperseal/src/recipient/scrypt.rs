//! age's passphrase recipient, byte for byte (C2SP age spec, "scrypt recipient stanza"):
//!
//! ```text
//! -> scrypt <b64 16-byte salt> <log2 N>
//! <b64 ChaCha20-Poly1305(key, zero nonce, 16-byte file key)>
//! ```
//! key = scrypt(passphrase, salt = "age-encryption.org/v1/scrypt" ‖ salt, N = 2^logN, r = 8,
//! p = 1, 32 bytes). Used only in the age profile; hyperseal files use Argon2id
//! (`recipient/passphrase.rs`).
//!
//! The work factor comes from the file, so an attacker chooses it: the identity refuses anything
//! above its cap *before* spending any time or memory (logN 22 ≈ 4 GiB·s of work, age's limit).
//!
//! Within the cap, scrypt's working memory (128·r·N bytes: 4 GiB at logN 22) may still be more
//! than the process can have (`ulimit -v`, a container). The `scrypt` crate allocates it with
//! `vec!`, which aborts the process when the allocation fails, and it neither takes a caller's
//! buffer nor exposes ROMix. So [`derive`] first reserves the same number of bytes fallibly
//! (`try_reserve_exact`), releases them and lets the crate allocate: a process that cannot
//! have the memory gets [`Error::Io`] of kind `OutOfMemory` naming the work factor and the
//! size, not an abort. What remains is a race: another thread of the same process allocating
//! between the release and the crate's allocation can still make the latter fail (an abort,
//! as before). The CLI has no such thread at that point; an embedder running allocating threads
//! beside a decryption keeps that window. Memory the kernel grants by overcommit and cannot
//! back later is the OOM killer's, as for any allocation.

use zeroize::Zeroizing;

use super::primitives::{decode_arg, open_file_key, random, seal_file_key, TAG_LEN, ZERO_NONCE};
use super::traits::{Identity, Labels, Recipient};
use crate::format::{encode_b64, Stanza};
use crate::{error::Error, file_key::FileKey};

/// The stanza type.
pub const TAG: &str = "scrypt";
/// age's encryption work factor (log2 N = 18: about a second on a laptop).
pub const DEFAULT_LOG_N: u8 = 18;
/// age's decryption cap (log2 N = 22: 4 GiB of memory with r = 8).
pub const DEFAULT_MAX_LOG_N: u8 = 22;

const LABEL: &[u8] = b"age-encryption.org/v1/scrypt";
const SALT_LEN: usize = 16;
/// age file keys are 16 bytes; the wrapped key is exactly that plus the tag.
const BODY_LEN: usize = 16 + TAG_LEN;

/// Encrypts to a passphrase with scrypt. Must be the only recipient of a file.
pub struct ScryptRecipient {
    passphrase: Zeroizing<String>,
    log_n: u8,
}

impl std::fmt::Debug for ScryptRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScryptRecipient(logN {}, passphrase redacted)", self.log_n)
    }
}

impl ScryptRecipient {
    /// A recipient with age's default work factor.
    pub fn new(passphrase: Zeroizing<String>) -> Self {
        ScryptRecipient { passphrase, log_n: DEFAULT_LOG_N }
    }

    /// Sets log2 N (1..=30; for tests and for users who want more than the default).
    pub fn with_work_factor(mut self, log_n: u8) -> Result<Self, Error> {
        if !(1..=30).contains(&log_n) {
            return Err(Error::InvalidArgument(format!("scrypt work factor {log_n} must be 1..=30")));
        }
        self.log_n = log_n;
        Ok(self)
    }
}

impl Recipient for ScryptRecipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        if file_key.expose().len() != 16 {
            return Err(Error::InvalidArgument(
                "scrypt recipients are for age files (16-byte file keys)".into(),
            ));
        }
        let salt = random::<SALT_LEN>()?;
        let key = derive(&self.passphrase, &salt, self.log_n, "")?;
        let body = seal_file_key(&key, ZERO_NONCE, file_key);
        let stanza = Stanza::new(TAG, vec![encode_b64(&salt), self.log_n.to_string()], body);
        // A unique random label: no other recipient can share it, so a passphrase stands alone
        // (anyone who knows the passphrase could otherwise be impersonated by another recipient).
        let unique = encode_b64(&random::<16>()?);
        Ok((vec![stanza], Labels::from([unique])))
    }
}

/// Decrypts an age scrypt file.
pub struct ScryptIdentity {
    passphrase: Zeroizing<String>,
    max_log_n: u8,
}

impl std::fmt::Debug for ScryptIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScryptIdentity(max logN {}, passphrase redacted)", self.max_log_n)
    }
}

impl ScryptIdentity {
    /// An identity with age's work-factor cap (log2 N ≤ 22).
    pub fn new(passphrase: Zeroizing<String>) -> Self {
        ScryptIdentity { passphrase, max_log_n: DEFAULT_MAX_LOG_N }
    }

    /// Sets the highest log2 N this identity will compute.
    pub fn with_max_work_factor(mut self, max_log_n: u8) -> Self {
        self.max_log_n = max_log_n;
        self
    }

    fn unwrap_own(&self, stanza: &Stanza) -> Result<FileKey, Error> {
        let [salt, log_n] = stanza.args.as_slice() else {
            return Err(Error::InvalidStanza("scrypt stanza must have exactly two arguments".into()));
        };
        let salt = decode_arg(salt, SALT_LEN, "scrypt salt")?;
        let log_n = parse_log_n(log_n)?;
        if log_n > u32::from(self.max_log_n) {
            return Err(Error::WorkFactorTooHigh(format!("log2 N = {log_n}, limit {}", self.max_log_n)));
        }
        if stanza.body.len() != BODY_LEN {
            return Err(Error::InvalidStanza(format!("scrypt wrapped file key must be {BODY_LEN} bytes")));
        }
        let key = derive(&self.passphrase, &salt, log_n as u8, "the file's ")?;
        open_file_key(&key, ZERO_NONCE, &stanza.body).ok_or(Error::WrongPassphrase)
    }
}

impl Identity for ScryptIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        (stanza.tag == TAG).then(|| self.unwrap_own(stanza))
    }

    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        // The header parser already enforces this; checked again so the identity is safe alone.
        if stanzas.len() != 1 && stanzas.iter().any(|s| s.tag == TAG) {
            return Some(Err(Error::InvalidStanza("an scrypt stanza must be the only one".into())));
        }
        stanzas.iter().find_map(|s| self.unwrap_stanza(s))
    }
}

/// log2 N as age spells it: canonical decimal (`[1-9][0-9]*`), so one value has one encoding.
fn parse_log_n(s: &str) -> Result<u32, Error> {
    let bad = || Error::InvalidStanza(format!("scrypt work factor {s:?} is not a canonical decimal from 1"));
    if s.is_empty() || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 9 {
        return Err(bad());
    }
    s.parse().map_err(|_| bad())
}

/// scrypt's block size parameter r, as age sets it.
const R: u32 = 8;

/// `whose` names where the work factor came from in the error ("the file's ").
fn derive(passphrase: &str, salt: &[u8], log_n: u8, whose: &str) -> Result<Zeroizing<[u8; 32]>, Error> {
    let mut full_salt = Vec::with_capacity(LABEL.len() + salt.len());
    full_salt.extend_from_slice(LABEL);
    full_salt.extend_from_slice(salt);
    let params =
        scrypt::Params::new(log_n, R, 1).map_err(|_| Error::InvalidArgument("scrypt parameters".into()))?;
    probe_working_memory(log_n).map_err(|bytes| out_of_memory(whose, log_n, bytes))?;
    let mut key = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(passphrase.as_bytes(), &full_salt, &params, &mut key[..]).map_err(|_| Error::Crypto)?;
    Ok(key)
}

/// Whether scrypt's working memory for `log_n` (V, 128·r·N bytes) can be allocated now: it is
/// reserved fallibly and released at once, just before the crate allocates the same size (see
/// the module's note on the race that leaves). `log_n` is below 64 ([`scrypt::Params::new`]
/// checked it), so the size fits a `u128`; `Err` carries it.
fn probe_working_memory(log_n: u8) -> Result<(), u128> {
    let bytes = (128 * u128::from(R)) << log_n;
    let mut probe: Vec<u8> = Vec::new();
    usize::try_from(bytes).ok().and_then(|size| probe.try_reserve_exact(size).ok()).ok_or(bytes)?;
    // Kept opaque, so the optimiser cannot drop an allocation nobody reads (and assume success).
    std::hint::black_box(probe.as_mut_ptr());
    Ok(())
}

/// The error for scrypt's working memory that could not be allocated (`bytes`, a power of two).
fn out_of_memory(whose: &str, log_n: u8, bytes: u128) -> Error {
    let size = match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    };
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::OutOfMemory,
        format!("{whose}scrypt work factor (log2 N = {log_n}) needs {size} of memory, which could not be allocated"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipient::contract::Pair;

    fn pass(s: &str) -> Zeroizing<String> {
        Zeroizing::new(s.to_string())
    }

    #[test]
    fn round_trip_and_wrong_passphrase() {
        let r = ScryptRecipient::new(pass("correct horse")).with_work_factor(10).unwrap();
        let pair = Pair { recipient: &r, identity: &ScryptIdentity::new(pass("correct horse")) };
        pair.round_trip(&[16], |_, s, labels| {
            assert_eq!(labels.len(), 1);
            assert_eq!(s.args[1], "10");
            assert_eq!(s.body.len(), BODY_LEN);
        });
        let wrong = ScryptIdentity::new(pass("wrong")).unwrap_stanza(&pair.stanza(16)).unwrap();
        assert!(matches!(wrong, Err(Error::WrongPassphrase)));
    }

    #[test]
    fn labels_are_unique() {
        let r = ScryptRecipient::new(pass("p")).with_work_factor(1).unwrap();
        let a = r.wrap_file_key(&FileKey::generate(16)).unwrap().1;
        let b = r.wrap_file_key(&FileKey::generate(16)).unwrap().1;
        assert_ne!(a, b);
        assert!(r.wrap_file_key(&FileKey::generate(32)).is_err());
    }

    #[test]
    fn work_factor_cap_before_any_work() {
        let s = Stanza::new(TAG, vec![encode_b64(&[0; 16]), "40".into()], vec![0; BODY_LEN]);
        // logN 40 would need 128 TiB: returning at once proves nothing was computed.
        let r = ScryptIdentity::new(pass("p")).unwrap_stanza(&s).unwrap();
        assert!(matches!(r, Err(Error::WorkFactorTooHigh(_))));
        let s = Stanza::new(TAG, vec![encode_b64(&[0; 16]), "12".into()], vec![0; BODY_LEN]);
        let r = ScryptIdentity::new(pass("p")).with_max_work_factor(11).unwrap_stanza(&s).unwrap();
        assert!(matches!(r, Err(Error::WorkFactorTooHigh(_))));
    }

    /// Working memory past what can be reserved is an error naming the work factor and the
    /// size, not an abort (log2 N = 50 asks for 2^60 bytes, which no machine has).
    #[test]
    fn memory_that_cannot_be_allocated_is_an_error() {
        assert_eq!(probe_working_memory(10), Ok(()));
        assert_eq!(probe_working_memory(50), Err(1 << 60));
        let e = derive("p", &[0; 16], 50, "the file's ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the file's scrypt work factor (log2 N = 50) needs 1073741824 GiB of memory, which could not \
             be allocated"
        );
        assert!(matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::OutOfMemory));
        assert!(out_of_memory("", 22, 1 << 32)
            .to_string()
            .starts_with("scrypt work factor (log2 N = 22) needs 4 GiB"));
        assert!(out_of_memory("", 18, 1 << 28).to_string().contains("needs 256 MiB"));
        assert!(out_of_memory("", 5, 1 << 15).to_string().contains("needs 32 KiB"));
    }

    #[test]
    fn strict_arguments() {
        for bad in ["0", "010", "+10", "0x10", "10 ", "-1", "1e1", "", "99999999999999999999"] {
            assert!(parse_log_n(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_log_n("18").unwrap(), 18);
        let id = ScryptIdentity::new(pass("p"));
        let only_salt = Stanza::new(TAG, vec![encode_b64(&[0; 16])], vec![0; BODY_LEN]);
        assert!(matches!(id.unwrap_stanza(&only_salt), Some(Err(Error::InvalidStanza(_)))));
        let short_salt = Stanza::new(TAG, vec![encode_b64(&[0; 15]), "10".into()], vec![0; BODY_LEN]);
        assert!(matches!(id.unwrap_stanza(&short_salt), Some(Err(Error::InvalidStanza(_)))));
        let long_body = Stanza::new(TAG, vec![encode_b64(&[0; 16]), "10".into()], vec![0; BODY_LEN + 16]);
        assert!(matches!(id.unwrap_stanza(&long_body), Some(Err(Error::InvalidStanza(_)))));
        let other = Stanza::new("X25519", vec!["x".into()], vec![]);
        assert!(id.unwrap_stanza(&other).is_none());
        let pair = [only_salt.clone(), other];
        assert!(matches!(id.unwrap_stanzas(&pair), Some(Err(Error::InvalidStanza(_)))));
    }
}
