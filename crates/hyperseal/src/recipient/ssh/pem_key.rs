//! PEM private keys as age reads them: age's `agessh` goes through Go's
//! `ssh.ParseRawPrivateKey`, which takes PKCS#1 `RSA PRIVATE KEY`, PKCS#8 `PRIVATE KEY` (RSA
//! and Ed25519, as `openssl genpkey -algorithm ed25519` writes it) besides OpenSSH's own format
//! (`openssh_key.rs`). An RSA key becomes an `ssh-rsa` identity and an Ed25519 key an
//! `ssh-ed25519` identity, whatever file they came in: the stanzas are those of the SSH key.
//!
//! A PKCS#8 RSA key is also hyperseal's own `rsa-oaep` identity (`../rsa.rs`); the caller decides
//! which it is (`parse_identities_with` in `../parse.rs`). Keys age refuses are refused here too:
//! ECDSA and DSA keys, PKCS#8 of other algorithms, encrypted PKCS#8. A key under PEM's legacy
//! encryption (`Proc-Type: 4,ENCRYPTED`, `pem_legacy.rs`) is read by [`parse_encrypted`] and
//! opened with its passphrase ([`EncryptedPemKey::decrypt`]); [`parse`] refuses it, having no
//! passphrase to give.
//!
//! ```
//! # use hyperseal::recipient::ssh::pem_key;
//! // The Ed25519 key of RFC 8410 §10.3, as OpenSSL writes it.
//! let pem = "-----BEGIN PRIVATE KEY-----\n\
//!            MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
//!            -----END PRIVATE KEY-----\n";
//! let key = pem_key::parse(pem).unwrap().unwrap();
//! assert!(key.public().to_authorized_key().starts_with("ssh-ed25519 "));
//! ```

use aws_lc_rs::rsa::KeyPair;
use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair as _};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use zeroize::Zeroizing;

use super::ed25519::SshEd25519Identity;
use super::openssh::SshPublicKey;
use super::pem_legacy::{self, LegacyEncryption};
use super::rsa::{rsa_public, SshRsaIdentity};
use crate::error::Error;
use crate::recipient::pem::der_take;
use crate::recipient::traits::Identity;

/// `id-Ed25519` (1.3.101.112) and `rsaEncryption` (1.2.840.113549.1.1.1), DER contents.
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];

/// A private key read from a PEM file.
pub enum PemKey {
    /// An Ed25519 seed and its public key.
    Ed25519 {
        /// RFC 8032's private key.
        seed: Zeroizing<[u8; 32]>,
        /// The public key derived from it.
        public: [u8; 32],
    },
    /// An RSA key pair (aws-lc holds it and clears it on free).
    Rsa {
        /// The key pair.
        pair: KeyPair,
        /// Whether it came as PKCS#8 (then it is also a hyperseal `rsa-oaep` key).
        pkcs8: bool,
    },
}

impl PemKey {
    /// The SSH public key (for `-e -i` and the stanza tag).
    pub fn public(&self) -> SshPublicKey {
        match self {
            PemKey::Ed25519 { public, .. } => SshPublicKey::Ed25519(*public),
            PemKey::Rsa { pair, .. } => rsa_public(pair).expect("aws-lc encodes its own public keys"),
        }
    }

    /// The SSH identity of the key (`ssh-ed25519` or `ssh-rsa` stanzas).
    pub fn ssh_identity(&self) -> Result<Box<dyn Identity>, Error> {
        Ok(match self {
            PemKey::Ed25519 { seed, public } => Box::new(SshEd25519Identity::new(seed, public)?),
            PemKey::Rsa { pair, .. } => Box::new(SshRsaIdentity::from_key_pair(pair)?),
        })
    }

    /// Whether this is a PKCS#8 RSA key (also a hyperseal `rsa-oaep` key).
    pub fn is_pkcs8_rsa(&self) -> bool {
        matches!(self, PemKey::Rsa { pkcs8: true, .. })
    }

    /// Whether the key came as PKCS#8 (`PRIVATE KEY`), not PKCS#1.
    pub fn is_pkcs8(&self) -> bool {
        !matches!(self, PemKey::Rsa { pkcs8: false, .. })
    }
}

/// The label of a PEM text's first block (`RSA PRIVATE KEY`), if it starts with one.
fn label(text: &str) -> Option<&str> {
    let first = text.trim_start().lines().next()?.trim_end();
    first.strip_prefix("-----BEGIN ")?.strip_suffix("-----")
}

/// Reads a PEM private key. `Ok(None)`: not a PEM private key this module reads (an OpenSSH
/// key, an age file, a public key…). A PEM private key age refuses is an error saying why.
pub fn parse(text: &str) -> Result<Option<PemKey>, Error> {
    let Some(label) = label(text) else { return Ok(None) };
    let refuse = |why: &str| Err(Error::InvalidKey(why.into()));
    match label {
        "RSA PRIVATE KEY" | "PRIVATE KEY" => {}
        "EC PRIVATE KEY" | "DSA PRIVATE KEY" => {
            return refuse(&format!(
                "unsupported SSH identity type ({label}): age takes Ed25519 and RSA keys only"
            ))
        }
        "ENCRYPTED PRIVATE KEY" => {
            return refuse(
                "encrypted PKCS#8 keys are not supported (as in age): convert the key to the \
                 OpenSSH format with `ssh-keygen -p -f KEY`",
            )
        }
        _ => return Ok(None),
    }
    let (headers, der) = decode(text, label)?;
    if pem_legacy::is_encrypted(&headers) {
        return refuse(
            "this PEM key is passphrase-protected (Proc-Type: 4,ENCRYPTED): read it with its \
             passphrase (recipient::ssh::parse_legacy_identity)",
        );
    }
    from_der(label, &der).map(Some)
}

/// The key in a PEM body: PKCS#1 for `RSA PRIVATE KEY`, PKCS#8 for `PRIVATE KEY`.
fn from_der(label: &str, der: &[u8]) -> Result<PemKey, Error> {
    if label == "RSA PRIVATE KEY" {
        let pair = KeyPair::from_der(der)
            .map_err(|_| Error::InvalidKey("malformed RSA PRIVATE KEY (PKCS#1) PEM".into()))?;
        return Ok(PemKey::Rsa { pair, pkcs8: false });
    }
    pkcs8(der)
}

/// A PEM private key under legacy encryption, still encrypted: only its kind is known (the
/// public key is inside the encrypted body, so it comes from elsewhere, a `.pub` file, or from
/// the decrypted key).
pub struct EncryptedPemKey {
    label: &'static str,
    encryption: LegacyEncryption,
    body: Vec<u8>,
}

impl EncryptedPemKey {
    /// Opens the key with `passphrase`. A wrong passphrase is [`Error::WrongPassphrase`], also
    /// in the one case in about 256 where it yields good padding over garbage: then the
    /// plaintext is not a key (a correct passphrase over a damaged body looks the same).
    pub fn decrypt(&self, passphrase: &[u8]) -> Result<PemKey, Error> {
        let der = self.encryption.decrypt(&self.body, passphrase)?;
        let whole_sequence = der_take(&der, 0x30).is_some_and(|(_, rest)| rest.is_empty());
        if !whole_sequence {
            return Err(Error::WrongPassphrase);
        }
        match from_der(self.label, &der) {
            // Only a well-formed PKCS#8 structure gets as far as naming its algorithm.
            Err(Error::InvalidKey(m)) if m.starts_with(UNSUPPORTED_PKCS8) => Err(Error::InvalidKey(m)),
            Err(_) => Err(Error::WrongPassphrase),
            Ok(key) => Ok(key),
        }
    }
}

impl std::fmt::Debug for EncryptedPemKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EncryptedPemKey({}, {:?})", self.label, self.encryption.cipher())
    }
}

/// Reads a PEM private key under legacy encryption (`RSA PRIVATE KEY` or `PRIVATE KEY` with
/// `Proc-Type: 4,ENCRYPTED`). `Ok(None)`: anything else. Every size is bounded by the text's
/// (the caller holds it to [`limits::KEY_TEXT`](crate::limits::KEY_TEXT)) and the headers are
/// checked exactly.
pub fn parse_encrypted(text: &str) -> Result<Option<EncryptedPemKey>, Error> {
    let label = match label(text) {
        Some("RSA PRIVATE KEY") => "RSA PRIVATE KEY",
        Some("PRIVATE KEY") => "PRIVATE KEY",
        _ => return Ok(None),
    };
    let (headers, body) = decode(text, label)?;
    if !pem_legacy::is_encrypted(&headers) {
        return Ok(None);
    }
    let encryption = LegacyEncryption::from_headers(&headers)?;
    Ok(Some(EncryptedPemKey { label, encryption, body: body.to_vec() }))
}

const UNSUPPORTED_PKCS8: &str = "unsupported key type in the PKCS#8 PEM";

/// A PKCS#8 `PrivateKeyInfo` (RFC 5208; RFC 5958's v2 with its optional public key too).
fn pkcs8(der: &[u8]) -> Result<PemKey, Error> {
    let bad = || Error::InvalidKey("malformed PKCS#8 PRIVATE KEY PEM".into());
    let (info, rest) = der_take(der, 0x30).ok_or_else(bad)?;
    if !rest.is_empty() {
        return Err(bad());
    }
    let (version, info) = der_take(info, 0x02).ok_or_else(bad)?;
    if version != [0] && version != [1] {
        return Err(bad());
    }
    let (algorithm, info) = der_take(info, 0x30).ok_or_else(bad)?;
    let (oid, params) = der_take(algorithm, 0x06).ok_or_else(bad)?;
    let (key, _attributes_and_public_key) = der_take(info, 0x04).ok_or_else(bad)?;
    match oid {
        OID_ED25519 => {
            // RFC 8410: no parameters, and the key is an OCTET STRING of the 32-byte seed.
            let (seed, rest) = der_take(key, 0x04).ok_or_else(bad)?;
            if !params.is_empty() || !rest.is_empty() || seed.len() != 32 {
                return Err(bad());
            }
            let mut s = Zeroizing::new([0u8; 32]);
            s.copy_from_slice(seed);
            let pair = Ed25519KeyPair::from_seed_unchecked(&s[..]).map_err(|_| bad())?;
            let public = pair.public_key().as_ref().try_into().map_err(|_| bad())?;
            Ok(PemKey::Ed25519 { seed: s, public })
        }
        OID_RSA => {
            let pair =
                KeyPair::from_pkcs8(der).map_err(|_| Error::InvalidKey("malformed RSA PKCS#8 key".into()))?;
            Ok(PemKey::Rsa { pair, pkcs8: true })
        }
        _ => Err(Error::InvalidKey(format!("{UNSUPPORTED_PKCS8}: age takes Ed25519 and RSA keys only"))),
    }
}

/// The PEM block's header lines (RFC 1421 `Name: value`) and its decoded body.
fn decode(text: &str, label: &str) -> Result<(Vec<String>, Zeroizing<Vec<u8>>), Error> {
    let end = format!("-----END {label}-----");
    let mut lines = text.trim_start().lines().skip(1);
    let (mut headers, mut body) = (Vec::new(), Zeroizing::new(String::new()));
    let mut ended = false;
    for line in lines.by_ref() {
        let line = line.trim();
        if line == end {
            ended = true;
            break;
        }
        if line.contains(':') {
            headers.push(line.to_string());
        } else {
            body.push_str(line);
        }
    }
    if !ended {
        return Err(Error::InvalidKey(format!("the {label} PEM block has no {end} line")));
    }
    let der = STANDARD
        .decode(body.as_bytes())
        .map_err(|_| Error::InvalidKey(format!("invalid base64 in the {label} PEM block")))?;
    Ok((headers, Zeroizing::new(der)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_key::FileKey;
    use crate::recipient::{ssh, Recipient};

    const ED25519_PKCS8: &str = "-----BEGIN PRIVATE KEY-----\n\
        MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
        -----END PRIVATE KEY-----\n";

    #[test]
    fn ed25519_pkcs8_is_an_ssh_ed25519_key() {
        let key = parse(ED25519_PKCS8).unwrap().unwrap();
        // RFC 8410 §10.3's public key.
        let PemKey::Ed25519 { public, .. } = &key else { panic!() };
        assert_eq!(hex::encode(public), "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1");
        let r: Box<dyn Recipient> = ssh::recipient_of(&key.public()).unwrap();
        let fk = FileKey::generate(16);
        let (stanzas, _) = r.wrap_file_key(&fk).unwrap();
        assert_eq!(stanzas[0].tag, "ssh-ed25519");
        let id = key.ssh_identity().unwrap();
        assert_eq!(id.unwrap_stanzas(&stanzas).unwrap().unwrap().expose(), fk.expose());
    }

    /// A wrong passphrase that happens to leave good PKCS#7 padding (about one in 256) yields
    /// garbage, refused as a wrong passphrase, not as a malformed key.
    #[test]
    fn wrong_passphrase_with_good_padding_is_a_wrong_passphrase() {
        let pem = std::fs::read_to_string(format!(
            "{}/../../vectors/ssh/rsa2048_pem_des3",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let key = parse_encrypted(&pem).unwrap().unwrap();
        assert!(key.decrypt(b"hyperseal test").is_ok());
        let lucky = (0..20_000)
            .map(|i| format!("guess {i}"))
            .find(|p| key.encryption.decrypt(&key.body, p.as_bytes()).is_ok())
            .expect("one in about 256 guesses pads well");
        assert!(matches!(key.decrypt(lucky.as_bytes()), Err(Error::WrongPassphrase)), "{lucky}");
        assert!(matches!(key.decrypt(b"hyperseal tesT"), Err(Error::WrongPassphrase)));
    }

    #[test]
    fn refused_kinds_say_why() {
        for (label, word) in [
            ("EC PRIVATE KEY", "unsupported SSH identity type"),
            ("DSA PRIVATE KEY", "unsupported SSH identity type"),
            ("ENCRYPTED PRIVATE KEY", "encrypted PKCS#8"),
        ] {
            let pem = format!("-----BEGIN {label}-----\nAAAA\n-----END {label}-----\n");
            let err = parse(&pem).err().unwrap().to_string();
            assert!(err.contains(word), "{label}: {err}");
        }
        let legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        assert!(parse(legacy).err().unwrap().to_string().contains("passphrase-protected"));
        assert!(parse_encrypted(legacy).err().unwrap().to_string().contains("IV"));
        assert!(parse_encrypted(ED25519_PKCS8).unwrap().is_none());
        // Other PKCS#8 algorithms (X25519 here) and junk.
        let x25519 = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VuBCIEIHBgJSkzrG56SpsOsmMsWgQKhyV624aaPszD0WtyTyZH\n-----END PRIVATE KEY-----\n";
        assert!(parse(x25519).err().unwrap().to_string().contains("unsupported key type"));
        assert!(parse("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n").is_err());
        assert!(parse("-----BEGIN PRIVATE KEY-----\nMC4C\n").is_err(), "no END line");
        assert!(parse("-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap().is_none());
        assert!(parse("AGE-SECRET-KEY-1").unwrap().is_none());
    }
}
