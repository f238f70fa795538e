//! A TPM key as the identity file holds it: only what the TPM wrapped to itself (each object's
//! public area and its private blob, encrypted under the storage primary), the primary's name
//! (to tell "a different TPM" from damage), and the PCR values the policy binds (to name the
//! PCR that changed). Nothing in it is secret; it opens nothing without the TPM that made it.
//!
//! It is carried in an age plugin identity, `AGE-PLUGIN-HYPERSEAL-1…`, so age, rage and sops
//! hand it to `age-plugin-hyperseal`; the data starts with a NUL byte, which no agent socket
//! path holds (docs/FORMAT.md, "TPM identities").

use hyperseal::recipient::tag::TagRecipient;
use hyperseal::recipient::{plugin, Recipient};

use crate::error::TpmError;
use crate::marshal::{In, Out};
use crate::ops::{ecc_point, MAX_NAME, MAX_PRIVATE, MAX_PUBLIC};

/// The plugin name: age runs `age-plugin-hyperseal` for these identities.
pub const PLUGIN_NAME: &str = "hyperseal";
const MAGIC: &[u8; 4] = b"\0TPM";
const VERSION: u8 = 1;
const FLAG_PQ: u8 = 1;
const FLAG_PIN: u8 = 2;
/// PCRs 0–23 exist on every PC TPM.
pub const PCR_COUNT: u8 = 24;

/// One TPM object: its private blob and public area.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Blob {
    pub private: Vec<u8>,
    pub public: Vec<u8>,
}

/// A TPM-bound key.
#[derive(Clone, PartialEq, Eq)]
pub struct TpmKey {
    pub(crate) pin: bool,
    pub(crate) parent_name: Vec<u8>,
    pub(crate) pcrs: Vec<(u8, [u8; 32])>,
    pub(crate) ecdh: Blob,
    pub(crate) sealed: Option<Blob>,
    pub(crate) point: [u8; 65],
}

impl std::fmt::Debug for TpmKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pcrs: Vec<u8> = self.pcrs.iter().map(|p| p.0).collect();
        write!(f, "TpmKey {{ pq: {}, pin: {}, pcrs: {pcrs:?} }}", self.sealed.is_some(), self.pin)
    }
}

impl TpmKey {
    /// Whether the key has an ML-KEM seed (an `age1tagpq1…` recipient).
    pub fn is_postquantum(&self) -> bool {
        self.sealed.is_some()
    }

    /// Whether using it takes a PIN.
    pub fn has_pin(&self) -> bool {
        self.pin
    }

    /// The PCRs it is bound to.
    pub fn pcrs(&self) -> Vec<u8> {
        self.pcrs.iter().map(|p| p.0).collect()
    }

    /// The recipient: a classic key's from its point; a post-quantum key's as written beside
    /// it (`# public key: age1tagpq1…` in the identity file): the ML-KEM half cannot be checked without the TPM, so its P-256 half and its kind must
    /// match this key's, or it is refused.
    pub fn recipient_in(&self, file_text: &str) -> Result<TagRecipient, TpmError> {
        if !self.is_postquantum() {
            // The classic recipient is the key's point: nothing to believe.
            return hyperseal::recipient::tag_held::recipient(&self.point, None)
                .map_err(|e| TpmError::BadIdentity(e.to_string()));
        }
        let bad = |why: &str| TpmError::BadIdentity(why.into());
        let mut found = file_text.lines().filter_map(|l| l.strip_prefix("# public key: ")).filter_map(|r| {
            let r = TagRecipient::from_bech32(r.trim()).ok()?;
            let id = r.key_id()?;
            (r.is_postquantum() == self.is_postquantum() && id.ends_with(&self.point)).then_some(r)
        });
        found.next().ok_or_else(|| bad("its `# public key:` line is missing, or is not this key's"))
    }

    /// The `AGE-PLUGIN-HYPERSEAL-1…` line.
    pub fn to_identity_string(&self) -> String {
        let mut o = Out::default();
        o.raw(MAGIC).u8(VERSION);
        o.u8(if self.sealed.is_some() { FLAG_PQ } else { 0 } | if self.pin { FLAG_PIN } else { 0 });
        o.b(&self.parent_name).u8(self.pcrs.len() as u8);
        for (i, v) in &self.pcrs {
            o.u8(*i).raw(v);
        }
        for blob in std::iter::once(&self.ecdh).chain(&self.sealed) {
            o.b(&blob.private).b(&blob.public);
        }
        plugin::identity_string(PLUGIN_NAME, &o.0)
    }

    /// Whether `line` is a TPM identity (cheap: no TPM, no full parse).
    pub fn is_tpm_identity(line: &str) -> bool {
        line.get(..23).is_some_and(|head| head.eq_ignore_ascii_case("AGE-PLUGIN-HYPERSEAL-1Q"))
            && plugin::identity_data(line).is_ok_and(|(n, d)| n == PLUGIN_NAME && d.starts_with(MAGIC))
    }

    /// Parses an `AGE-PLUGIN-HYPERSEAL-1…` line written by [`to_identity_string`](Self::to_identity_string).
    pub fn from_identity_string(line: &str) -> Result<Self, TpmError> {
        let bad = |why: &str| TpmError::BadIdentity(why.into());
        let (name, data) = plugin::identity_data(line).map_err(|e| bad(&e.to_string()))?;
        if name != PLUGIN_NAME || !data.starts_with(MAGIC) {
            return Err(bad("not an AGE-PLUGIN-HYPERSEAL-1… TPM line"));
        }
        let mut i = In::new(&data[MAGIC.len()..]);
        let parse = |i: &mut In| -> Result<TpmKey, TpmError> {
            if i.u8()? != VERSION {
                return Err(bad("made by a newer hyperseal"));
            }
            let flags = i.u8()?;
            let parent_name = i.b(MAX_NAME)?.to_vec();
            let n = i.u8()?;
            if n > PCR_COUNT {
                return Err(bad("too many PCRs"));
            }
            let mut pcrs = Vec::new();
            for _ in 0..n {
                let idx = i.u8()?;
                if idx >= PCR_COUNT || pcrs.iter().any(|p: &(u8, _)| p.0 >= idx) {
                    return Err(bad("PCRs out of order"));
                }
                pcrs.push((idx, i.take(32)?.try_into().expect("32 bytes")));
            }
            let mut blob = || -> Result<Blob, TpmError> {
                Ok(Blob { private: i.b(MAX_PRIVATE)?.to_vec(), public: i.b(MAX_PUBLIC)?.to_vec() })
            };
            let ecdh = blob()?;
            let sealed = if flags & FLAG_PQ != 0 { Some(blob()?) } else { None };
            let point = ecc_point(&ecdh.public)?;
            Ok(TpmKey { pin: flags & FLAG_PIN != 0, parent_name, pcrs, ecdh, sealed, point })
        };
        let key = parse(&mut i).map_err(|e| match e {
            TpmError::Protocol(_) => bad("truncated"),
            e => e,
        })?;
        if i.rest() != 0 {
            return Err(bad("trailing bytes"));
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pq: bool) -> TpmKey {
        let mut public = crate::ops::ecdh_template(&None, false);
        public.truncate(public.len() - 4);
        public.extend_from_slice(&[0, 32]);
        public.extend_from_slice(&[1; 32]);
        public.extend_from_slice(&[0, 32]);
        public.extend_from_slice(&[2; 32]);
        let point = ecc_point(&public).unwrap();
        let ecdh = Blob { private: vec![9; 126], public };
        let sealed = pq.then(|| Blob { private: vec![8; 200], public: vec![7; 80] });
        TpmKey {
            pin: true,
            parent_name: vec![0, 11, 5],
            pcrs: vec![(0, [3; 32]), (7, [4; 32])],
            ecdh,
            sealed,
            point,
        }
    }

    #[test]
    fn the_line_round_trips_and_is_told_from_an_agent_identity() {
        for pq in [true, false] {
            let key = sample(pq);
            let line = key.to_identity_string();
            assert!(TpmKey::is_tpm_identity(&line), "{line}");
            assert!(hyperseal::agent::socket_of(&line).is_err(), "never taken for a socket path");
            assert_eq!(TpmKey::from_identity_string(&line).unwrap(), key);
        }
        let agent = hyperseal::agent::plugin_identity(std::path::Path::new("/run/agent.sock"));
        assert!(!TpmKey::is_tpm_identity(&agent));
    }

    fn data_of(key: &TpmKey) -> Vec<u8> {
        plugin::identity_data(&key.to_identity_string()).unwrap().1
    }

    #[test]
    fn every_cut_and_every_trailing_byte_is_refused() {
        let data = data_of(&sample(true));
        for n in 0..data.len() {
            let line = plugin::identity_string(PLUGIN_NAME, &data[..n]);
            assert!(TpmKey::from_identity_string(&line).is_err(), "cut at {n}");
        }
        let mut longer = data.clone();
        longer.push(0);
        assert!(TpmKey::from_identity_string(&plugin::identity_string(PLUGIN_NAME, &longer)).is_err());
    }

    #[test]
    fn pcrs_out_of_order_or_range_are_refused() {
        let mut key = sample(false);
        key.pcrs = vec![(7, [0; 32]), (0, [0; 32])];
        assert!(TpmKey::from_identity_string(&key.to_identity_string()).is_err());
        key.pcrs = vec![(24, [0; 32])];
        assert!(TpmKey::from_identity_string(&key.to_identity_string()).is_err());
    }
}
