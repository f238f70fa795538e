//! The passkey identity string, `AGE-PLUGIN-FIDO2PRF-1…`, as typage's `createCredential` and
//! age-plugin-fido2prf write it: Bech32 (upper case) over CTAP2 CBOR of
//! `uint 1` (the version), `bytes` (the credential ID), `text` (the relying-party ID),
//! `array of text` (the transports). It names a credential and where to find it; it holds no
//! secret (the PRF secret never leaves the authenticator), but it is what the plugin and a page
//! need to ask for a security key's non-discoverable credential, so losing it loses the file.
//!
//! Only what these items need of CBOR is read: major types 0, 2, 3 and 4 with arguments up to
//! 16 bits, in their shortest form (CTAP2's canonical encoding, the only one the writers emit),
//! and nothing after the array. Every size is bounded before anything is allocated.

use super::super::bech32_long;
use crate::error::Error;

/// The bech32 human-readable part, as age writes plugin identities (upper case).
pub const PREFIX: &str = "AGE-PLUGIN-FIDO2PRF-";
const HRP: &str = "age-plugin-fido2prf-";
const VERSION: u64 = 1;
/// WebAuthn allows credential IDs of at most 1023 bytes.
pub const MAX_CREDENTIAL_ID: usize = 1023;
/// A relying-party ID is a domain name (at most 253 bytes).
pub const MAX_RP_ID: usize = 253;
/// Transport hints: WebAuthn defines six short ones; room for more, bounded.
pub const MAX_TRANSPORTS: usize = 16;
/// Bytes of one transport hint.
pub const MAX_TRANSPORT: usize = 32;

/// A credential as its identity string names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasskeyIdentity {
    /// The WebAuthn credential ID (`rawId`).
    pub credential_id: Vec<u8>,
    /// The relying-party ID the credential is scoped to (a domain).
    pub rp_id: String,
    /// The authenticator's transports (`usb`, `nfc`, `ble`, `hybrid`, `internal`, …).
    pub transports: Vec<String>,
}

fn bad(why: impl std::fmt::Display) -> Error {
    Error::InvalidKey(format!("passkey identity: {why}"))
}

impl PasskeyIdentity {
    /// Whether `s` has the shape of this identity (its prefix, any case).
    pub fn is_identity(s: &str) -> bool {
        s.len() > PREFIX.len()
            && s.is_char_boundary(PREFIX.len())
            && s[..PREFIX.len()].eq_ignore_ascii_case(PREFIX)
    }

    /// Parses `AGE-PLUGIN-FIDO2PRF-1…`.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let s = s.trim();
        // The largest valid identity is well under this; longer input is refused unread.
        if s.len() > 4096 {
            return Err(bad("longer than any valid identity"));
        }
        let (hrp, data) = bech32_long::decode(s).map_err(bad)?;
        if hrp != HRP {
            return Err(bad(format!("wrong type (expected {PREFIX}1…)")));
        }
        let mut r = Reader(&data);
        if r.head(0)? != VERSION {
            return Err(bad("unsupported version (this build reads version 1)"));
        }
        let credential_id = r.bytes(2, MAX_CREDENTIAL_ID, "credential ID")?.to_vec();
        let rp_id = r.text(MAX_RP_ID, "relying-party ID")?;
        let n = r.head(4)? as usize;
        if n > MAX_TRANSPORTS {
            return Err(bad(format!("more than {MAX_TRANSPORTS} transports")));
        }
        let transports = (0..n).map(|_| r.text(MAX_TRANSPORT, "transport")).collect::<Result<_, _>>()?;
        if !r.0.is_empty() {
            return Err(bad("trailing bytes"));
        }
        if credential_id.is_empty() || rp_id.is_empty() {
            return Err(bad("empty credential ID or relying-party ID"));
        }
        Ok(PasskeyIdentity { credential_id, rp_id, transports })
    }

    /// The identity string (upper case, as typage and the plugin write it).
    pub fn encode(&self) -> Result<String, Error> {
        let checks = [
            (self.credential_id.is_empty() || self.credential_id.len() > MAX_CREDENTIAL_ID, "credential ID"),
            (self.rp_id.is_empty() || self.rp_id.len() > MAX_RP_ID, "relying-party ID"),
            (self.transports.len() > MAX_TRANSPORTS, "transports"),
            (self.transports.iter().any(|t| t.len() > MAX_TRANSPORT), "transport"),
        ];
        if let Some((_, what)) = checks.iter().find(|(b, _)| *b) {
            return Err(bad(format!("the {what} is empty or too long")));
        }
        let mut out = Vec::new();
        head(&mut out, 0, VERSION);
        head(&mut out, 2, self.credential_id.len() as u64);
        out.extend_from_slice(&self.credential_id);
        head(&mut out, 3, self.rp_id.len() as u64);
        out.extend_from_slice(self.rp_id.as_bytes());
        head(&mut out, 4, self.transports.len() as u64);
        for t in &self.transports {
            head(&mut out, 3, t.len() as u64);
            out.extend_from_slice(t.as_bytes());
        }
        Ok(bech32_long::encode(HRP, &out).to_ascii_uppercase())
    }
}

/// Appends a CBOR item head in its shortest form (arguments below 2^16: every bound above).
fn head(out: &mut Vec<u8>, major: u8, n: u64) {
    let m = major << 5;
    match n {
        0..=23 => out.push(m | n as u8),
        24..=0xff => out.extend_from_slice(&[m | 24, n as u8]),
        _ => out.extend_from_slice(&[m | 25, (n >> 8) as u8, n as u8]),
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.0.len() < n {
            return Err(bad("truncated"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }

    /// An item head of major type `major`: its argument (shortest form only).
    fn head(&mut self, major: u8) -> Result<u64, Error> {
        let b = self.take(1)?[0];
        if b >> 5 != major {
            return Err(bad("unexpected item"));
        }
        let n = match b & 0x1f {
            n @ 0..=23 => return Ok(u64::from(n)),
            24 => u64::from(self.take(1)?[0]),
            25 => u64::from(u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes"))),
            _ => return Err(bad("unsupported item size")),
        };
        let shortest = match b & 0x1f {
            24 => n >= 24,
            _ => n > 0xff,
        };
        if !shortest {
            return Err(bad("non-canonical item"));
        }
        Ok(n)
    }

    fn bytes(&mut self, major: u8, max: usize, what: &str) -> Result<&'a [u8], Error> {
        let n = self.head(major)? as usize;
        if n > max {
            return Err(bad(format!("the {what} is longer than {max} bytes")));
        }
        self.take(n)
    }

    fn text(&mut self, max: usize, what: &str) -> Result<String, Error> {
        let b = self.bytes(3, max, what)?;
        String::from_utf8(b.to_vec()).map_err(|_| bad(format!("the {what} is not UTF-8")))
    }
}
