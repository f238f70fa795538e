//! age v1.3's tag recipients: `age1tag1…` (P-256) and `age1tagpq1…` (ML-KEM-768 + P-256), for
//! encrypting to keys held in hardware (YubiKeys, Secure Enclaves) without running a plugin.
//!
//! Exactly age v1.3.1 `tag/tag.go` on `filippo.io/hpke` v0.4.0 (the stanzas are also in the
//! C2SP age spec's tag section):
//!
//! * Recipient: bech32 (no length limit) with HRP `age1tag` over the 33-byte compressed P-256
//!   point, or `age1tagpq` over the 1249-byte MLKEM768-P256 public key (ML-KEM-768 ek ‖ P-256
//!   point uncompressed).
//! * Stanza `-> p256tag <b64 tag> <b64 enc>` (enc: 65 bytes, DHKEM(P-256)) or
//!   `-> mlkem768p256tag <b64 tag> <b64 enc>` (enc: 1153 bytes, MLKEM768-P256); body = HPKE
//!   (base mode, HKDF-SHA-256, ChaCha20-Poly1305) `Seal` of the file key with info =
//!   "age-encryption.org/p256tag" or "age-encryption.org/mlkem768p256tag".
//! * tag = the first 4 bytes of HKDF-Extract(salt = that info label, ikm = enc ‖
//!   SHA-256(R)[..4]), where R is the compressed point (classic) or the uncompressed P-256 point
//!   of the hybrid key. It lets a hardware key skip stanzas that are not its own without a
//!   touch; it makes files addressed to one key linkable by anyone who knows that key.
//! * Labels: none for `age1tag1`, `postquantum` for `age1tagpq1` (so it mixes only with other
//!   post-quantum recipients).
//!
//! age has no software identity for these keys (only plugins, and the test plugin
//! `age-plugin-tagtest`). hyperseal's own `p256` and `p256-mlkem768` identities are the same
//! keys (a P-256 scalar; an MLKEM768-P256 seed), so they also open the tag stanzas addressed to
//! them: [`unwrap_classic`] and [`unwrap_hybrid`], called from `p256.rs` and `mlkem768p256.rs`.

use subtle::ConstantTimeEq;

use super::base::{self, KEM_MLKEM768_P256, KEM_P256};
use super::kem::{self, HybridKey, HybridPublic, P256Key, COMPRESSED_LEN, HYBRID_ENC_LEN, POINT_LEN};
use crate::crypto::hmac_sha256;
use crate::format::{encode_b64, Stanza};
use crate::recipient::bech32_long;
use crate::recipient::primitives::{check_wrapped_len, decode_arg};
use crate::recipient::traits::{Labels, Recipient, POSTQUANTUM};
use crate::{error::Error, file_key::FileKey};

/// Detection prefix of a P-256 tag recipient.
pub const CLASSIC_PREFIX: &str = "age1tag1";
/// Detection prefix of an ML-KEM-768 + P-256 tag recipient.
pub const HYBRID_PREFIX: &str = "age1tagpq1";

const CLASSIC_HRP: &str = "age1tag";
const HYBRID_HRP: &str = "age1tagpq";
pub(super) const CLASSIC_TYPE: &str = "p256tag";
pub(super) const HYBRID_TYPE: &str = "mlkem768p256tag";
pub(super) const CLASSIC_LABEL: &[u8] = b"age-encryption.org/p256tag";
pub(super) const HYBRID_LABEL: &[u8] = b"age-encryption.org/mlkem768p256tag";
const TAG_LEN: usize = 4;

/// Whether `s` is a tag recipient (tested before the plugin rule, which `age1tag1…` also fits).
pub fn is_recipient(s: &str) -> bool {
    let lower = s.get(..HYBRID_PREFIX.len()).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with(CLASSIC_PREFIX) || lower.starts_with(HYBRID_PREFIX)
}

#[derive(Clone, PartialEq, Eq)]
enum Key {
    Classic([u8; POINT_LEN]),
    Hybrid(HybridPublic),
}

/// An age tag recipient.
#[derive(Clone, PartialEq, Eq)]
pub struct TagRecipient {
    key: Key,
}

impl std::fmt::Debug for TagRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TagRecipient({}…)", &self.to_bech32()[..24])
    }
}

impl TagRecipient {
    /// Parses `age1tag1…` or `age1tagpq1…`.
    pub fn from_bech32(s: &str) -> Result<Self, Error> {
        kem::require_p256(true)?;
        let bad = |why: &str| Error::InvalidRecipient(format!("tag recipient: {why}"));
        let (hrp, data) = bech32_long::decode(s).map_err(bad)?;
        let key = match hrp.as_str() {
            CLASSIC_HRP if data.len() == COMPRESSED_LEN => Key::Classic(kem::decompress(&data)?),
            HYBRID_HRP => Key::Hybrid(HybridPublic::parse(&data)?),
            CLASSIC_HRP => return Err(bad("a P-256 tag key is 33 bytes")),
            _ => return Err(bad("expected age1tag1… or age1tagpq1…")),
        };
        Ok(TagRecipient { key })
    }

    /// The recipient of a P-256 key (the `age1tag1…` form of a hyperseal `p256` identity).
    pub(crate) fn classic(key: &P256Key) -> Self {
        TagRecipient { key: Key::Classic(*key.public()) }
    }

    /// The recipient of an MLKEM768-P256 key (a hyperseal `p256-mlkem768` identity).
    pub(crate) fn hybrid(key: &HybridKey) -> Self {
        TagRecipient { key: Key::Hybrid(key.public()) }
    }

    /// The `age1tag1…` / `age1tagpq1…` encoding.
    pub fn to_bech32(&self) -> String {
        match &self.key {
            Key::Classic(p) => bech32_long::encode(CLASSIC_HRP, &compress(p)),
            Key::Hybrid(h) => bech32_long::encode(HYBRID_HRP, &h.bytes()),
        }
    }

    /// The recipient of a key held elsewhere (`tag_held.rs`).
    pub(super) fn from_held(point: [u8; POINT_LEN], hybrid: Option<HybridPublic>) -> Self {
        TagRecipient { key: hybrid.map_or(Key::Classic(point), Key::Hybrid) }
    }

    /// Whether this is the post-quantum (`age1tagpq1…`) kind.
    pub fn is_postquantum(&self) -> bool {
        matches!(self.key, Key::Hybrid(_))
    }
}

pub(super) fn compress(p: &[u8; POINT_LEN]) -> [u8; COMPRESSED_LEN] {
    crate::crypto::p256_compress(p).expect("a parsed point is on the curve")
}

/// age's tag: HKDF-Extract(salt = label, ikm = enc ‖ SHA-256(R)[..4])[..4] (see the module docs).
pub(super) fn tag(label: &[u8], enc: &[u8], tag_recipient: &[u8]) -> [u8; TAG_LEN] {
    use sha2::Digest;
    let rh = sha2::Sha256::digest(tag_recipient);
    let prk = hmac_sha256(label, &[enc, &rh[..TAG_LEN]]);
    prk[..TAG_LEN].try_into().expect("4 bytes")
}

fn stanza(kind: &str, tag: [u8; TAG_LEN], enc: &[u8], body: Vec<u8>) -> Stanza {
    Stanza::new(kind, vec![encode_b64(&tag), encode_b64(enc)], body)
}

impl Recipient for TagRecipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        Ok(match &self.key {
            Key::Classic(point) => {
                let (enc, shared) = kem::p256_encap(point)?;
                let body = base::seal(KEM_P256, &shared, CLASSIC_LABEL, file_key);
                let t = tag(CLASSIC_LABEL, &enc, &compress(point));
                (vec![stanza(CLASSIC_TYPE, t, &enc, body)], Labels::new())
            }
            Key::Hybrid(public) => {
                let (enc, shared) = public.encap()?;
                let body = base::seal(KEM_MLKEM768_P256, &shared, HYBRID_LABEL, file_key);
                let t = tag(HYBRID_LABEL, &enc, public.point());
                (vec![stanza(HYBRID_TYPE, t, &enc, body)], Labels::from([POSTQUANTUM.to_string()]))
            }
        })
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some(match &self.key {
            Key::Classic(point) => [CLASSIC_TYPE.as_bytes(), b" ", point].concat(),
            Key::Hybrid(public) => [HYBRID_TYPE.as_bytes(), b" ", &public.bytes()].concat(),
        })
    }

    fn names_stanza(&self, stanza: &Stanza) -> Option<bool> {
        // The tag is a hash of the stanza's own enc and this key, as when it was wrapped.
        let (kind, label, point) = match &self.key {
            Key::Classic(p) => (CLASSIC_TYPE, CLASSIC_LABEL, compress(p).to_vec()),
            Key::Hybrid(public) => (HYBRID_TYPE, HYBRID_LABEL, public.point().to_vec()),
        };
        Some(
            stanza.tag == kind
                && matches!(stanza.args.as_slice(), [t, enc]
            if crate::format::decode_b64(enc.as_bytes()).is_ok_and(|enc| encode_b64(&tag(label, &enc, &point)) == *t)),
        )
    }
}

/// The two arguments of a tag stanza, checked as age's `tagtest` identities check them:
/// (tag, enc), or a broken-stanza error.
pub(super) fn args(stanza: &Stanza, enc_len: usize) -> Result<([u8; TAG_LEN], Vec<u8>), Error> {
    let [t, enc] = stanza.args.as_slice() else {
        return Err(Error::InvalidStanza(format!("{} stanza must have exactly two arguments", stanza.tag)));
    };
    let t = decode_arg(t, TAG_LEN, "tag")?.try_into().expect("4 bytes");
    let enc = decode_arg(enc, enc_len, "tag stanza encapsulated key")?;
    check_wrapped_len(&stanza.body)?;
    Ok((t, enc))
}

/// After a matching tag the stanza is ours: a body that does not open is an error (as in age's
/// `tagtest`), not "another recipient's".
pub(super) fn opened(kind: &str, key: Option<FileKey>) -> Result<FileKey, Error> {
    key.ok_or_else(|| {
        Error::InvalidStanza(format!(
            "{kind}: the tag matches this key but the file key does not authenticate"
        ))
    })
}

/// A `p256tag` stanza for this P-256 key: `None` if it is another kind or another key's tag.
pub(crate) fn unwrap_classic(key: &P256Key, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
    if stanza.tag != CLASSIC_TYPE {
        return None;
    }
    let run = || -> Result<Option<FileKey>, Error> {
        let (t, enc) = args(stanza, POINT_LEN)?;
        if !bool::from(t.ct_eq(&tag(CLASSIC_LABEL, &enc, &key.public_compressed()))) {
            return Ok(None);
        }
        let shared = kem::p256_decap(key, &enc)?;
        opened(CLASSIC_TYPE, base::open(KEM_P256, &shared, CLASSIC_LABEL, &stanza.body)).map(Some)
    };
    run().transpose()
}

/// An `mlkem768p256tag` stanza for this MLKEM768-P256 key.
pub(crate) fn unwrap_hybrid(key: &HybridKey, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
    if stanza.tag != HYBRID_TYPE {
        return None;
    }
    let run = || -> Result<Option<FileKey>, Error> {
        let (t, enc) = args(stanza, HYBRID_ENC_LEN)?;
        if !bool::from(t.ct_eq(&tag(HYBRID_LABEL, &enc, key.point()))) {
            return Ok(None);
        }
        let shared = key.decap(&enc)?;
        opened(HYBRID_TYPE, base::open(KEM_MLKEM768_P256, &shared, HYBRID_LABEL, &stanza.body)).map(Some)
    };
    run().transpose()
}

#[cfg(all(test, not(portable_backend)))]
#[path = "tag_tests.rs"]
mod tests;
