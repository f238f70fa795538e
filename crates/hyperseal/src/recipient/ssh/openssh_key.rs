//! OpenSSH private key files (`-----BEGIN OPENSSH PRIVATE KEY-----`, OpenSSH's PROTOCOL.key),
//! unencrypted or protected with a passphrase as `ssh-keygen` writes them: bcrypt-pbkdf
//! (RustCrypto's `bcrypt-pbkdf`) and aes256-ctr (the default) or aes256-gcm@openssh.com
//! (`crate::crypto`: aws-lc natively, RustCrypto in the portable build). No primitive is written
//! here, only the container.
//!
//! The public key sits in the clear before the encrypted part, so a protected key can tell
//! whether a stanza is addressed to it without asking for the passphrase (age asks only then).

use zeroize::Zeroizing;

use super::openssh::{Reader, SshPublicKey, ED25519, RSA};
use crate::error::Error;

const MAGIC: &[u8] = b"openssh-key-v1\0";
const PEM_LABEL: &str = "OPENSSH PRIVATE KEY";
/// The PEM line that introduces an OpenSSH private key.
pub const BEGIN: &str = "-----BEGIN OPENSSH PRIVATE KEY-----";
const GCM_TAG_LEN: usize = 16;

/// A secret key taken out of the file.
pub enum SshPrivateKey {
    /// The 32-byte Ed25519 seed and the public key stored with it.
    Ed25519 {
        /// The seed (RFC 8032's private key).
        seed: Zeroizing<[u8; 32]>,
        /// The public key.
        public: [u8; 32],
    },
    /// RSA components as OpenSSH stores them, big-endian without leading zeros.
    Rsa(RsaComponents),
}

/// The components of an OpenSSH RSA private key (no CRT exponents: OpenSSH does not store them).
pub struct RsaComponents {
    /// The modulus.
    pub n: Vec<u8>,
    /// The public exponent.
    pub e: Vec<u8>,
    /// The private exponent.
    pub d: Zeroizing<Vec<u8>>,
    /// q⁻¹ mod p.
    pub iqmp: Zeroizing<Vec<u8>>,
    /// The first prime.
    pub p: Zeroizing<Vec<u8>>,
    /// The second prime.
    pub q: Zeroizing<Vec<u8>>,
}

/// How the private section is protected.
enum Protection {
    None,
    /// bcrypt-pbkdf parameters and the cipher.
    Bcrypt {
        salt: Vec<u8>,
        rounds: u32,
        cipher: Cipher,
    },
}

#[derive(Clone, Copy)]
enum Cipher {
    Aes256Ctr,
    Aes256Gcm,
}

impl Cipher {
    fn iv_len(self) -> usize {
        match self {
            Cipher::Aes256Ctr => 16,
            Cipher::Aes256Gcm => 12,
        }
    }
}

/// A parsed key file whose private section may still be encrypted.
pub struct OpensshKeyFile {
    public: SshPublicKey,
    protection: Protection,
    /// The private section, still encrypted if protected (GCM: without its tag).
    private: Zeroizing<Vec<u8>>,
    gcm_tag: Option<[u8; GCM_TAG_LEN]>,
}

impl std::fmt::Debug for OpensshKeyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpensshKeyFile({:?}, encrypted: {}, redacted)", self.public, self.is_encrypted())
    }
}

fn bad(why: impl std::fmt::Display) -> Error {
    Error::InvalidKey(format!("OpenSSH private key: {why}"))
}

impl OpensshKeyFile {
    /// Parses the PEM-armored file; decrypts nothing.
    pub fn parse(pem: &str) -> Result<Self, Error> {
        let der = Zeroizing::new(crate::recipient::pem::decode(pem, PEM_LABEL).map_err(bad)?);
        let mut r = Reader::new(der.as_slice());
        if r.bytes(MAGIC.len()).map_err(bad)? != MAGIC {
            return Err(bad("not an openssh-key-v1 file"));
        }
        let cipher = r.string().map_err(bad)?;
        let kdf = r.string().map_err(bad)?;
        let kdf_options = r.string().map_err(bad)?;
        let protection = match (cipher, kdf) {
            (b"none", b"none") if kdf_options.is_empty() => Protection::None,
            (c, b"bcrypt") => {
                let cipher = match c {
                    b"aes256-ctr" => Cipher::Aes256Ctr,
                    b"aes256-gcm@openssh.com" => Cipher::Aes256Gcm,
                    other => {
                        return Err(bad(format_args!(
                            "cipher {:?} is not supported (re-encrypt the key with `ssh-keygen -p -f KEY -Z aes256-ctr`)",
                            String::from_utf8_lossy(other)
                        )))
                    }
                };
                let mut o = Reader::new(kdf_options);
                let salt = o.string().map_err(bad)?.to_vec();
                let rounds = o.u32().map_err(bad)?;
                if !o.is_empty() || salt.is_empty() || rounds == 0 {
                    return Err(bad("malformed bcrypt parameters"));
                }
                // Each round costs milliseconds: a key asking for millions would hang the
                // reader for hours, so the count is bounded before any passphrase is asked for.
                if rounds as usize > crate::limits::SSH_KDF_ROUNDS {
                    return Err(crate::limits::too_many(
                        "bcrypt rounds in an OpenSSH key",
                        crate::limits::SSH_KDF_ROUNDS,
                    ));
                }
                Protection::Bcrypt { salt, rounds, cipher }
            }
            _ => return Err(bad("unknown cipher or key derivation")),
        };
        if r.u32().map_err(bad)? != 1 {
            return Err(bad("a file must hold exactly one key"));
        }
        let public = SshPublicKey::from_blob(r.string().map_err(bad)?).map_err(bad)?;
        let private = Zeroizing::new(r.string().map_err(bad)?.to_vec());
        let gcm_tag = match &protection {
            // The GCM tag follows the encrypted string, outside its length (sshkey.c).
            Protection::Bcrypt { cipher: Cipher::Aes256Gcm, .. } => {
                Some(r.bytes(GCM_TAG_LEN).map_err(bad)?.try_into().expect("16 bytes"))
            }
            _ => None,
        };
        if !r.is_empty() {
            return Err(bad("trailing data"));
        }
        Ok(OpensshKeyFile { public, protection, private, gcm_tag })
    }

    /// The public key from the file's clear part.
    pub fn public(&self) -> &SshPublicKey {
        &self.public
    }

    /// Whether a passphrase is needed.
    pub fn is_encrypted(&self) -> bool {
        matches!(self.protection, Protection::Bcrypt { .. })
    }

    /// Decrypts (when protected) and parses the private section. A wrong passphrase gives
    /// [`Error::WrongPassphrase`].
    pub fn decrypt(&self, passphrase: Option<&[u8]>) -> Result<SshPrivateKey, Error> {
        let plain = match &self.protection {
            Protection::None => self.private.clone(),
            Protection::Bcrypt { salt, rounds, cipher } => {
                let pass = passphrase.filter(|p| !p.is_empty()).ok_or_else(|| {
                    Error::InvalidKey("the OpenSSH private key is passphrase-protected".into())
                })?;
                self.decrypt_section(pass, salt, *rounds, *cipher)?
            }
        };
        let key = parse_private_section(&plain, self.is_encrypted())?;
        // The secret half must belong to the public key in the clear part.
        let public = match &key {
            SshPrivateKey::Ed25519 { public, .. } => SshPublicKey::Ed25519(*public),
            SshPrivateKey::Rsa(c) => SshPublicKey::Rsa { n: c.n.clone(), e: c.e.clone() },
        };
        if public != self.public {
            return Err(bad("the private key does not match the public key in the file"));
        }
        Ok(key)
    }

    fn decrypt_section(
        &self,
        pass: &[u8],
        salt: &[u8],
        rounds: u32,
        cipher: Cipher,
    ) -> Result<Zeroizing<Vec<u8>>, Error> {
        let mut km = Zeroizing::new(vec![0u8; 32 + cipher.iv_len()]);
        bcrypt_pbkdf::bcrypt_pbkdf(pass, salt, rounds, &mut km).map_err(|_| bad("bcrypt-pbkdf failed"))?;
        let (key, iv) = km.split_at(32);
        let key: &[u8; 32] = key.try_into().expect("32-byte key");
        let mut buf = self.private.clone();
        match cipher {
            Cipher::Aes256Ctr => {
                if !buf.len().is_multiple_of(16) {
                    return Err(bad("encrypted section is not a whole number of blocks"));
                }
                crate::crypto::aes256_ctr(key, iv.try_into().expect("16-byte IV"), &mut buf)?;
            }
            Cipher::Aes256Gcm => {
                let tag = self.gcm_tag.as_ref().expect("set for GCM");
                let nonce = iv.try_into().expect("12-byte IV");
                if !crate::crypto::aes256_gcm_open(key, nonce, &mut buf, tag) {
                    return Err(Error::WrongPassphrase);
                }
            }
        }
        Ok(buf)
    }
}

/// The private section: two equal check integers (a wrong CTR passphrase shows up here), the one
/// key, a comment and padding bytes 1, 2, 3, ….
fn parse_private_section(plain: &[u8], encrypted: bool) -> Result<SshPrivateKey, Error> {
    let mut r = Reader::new(plain);
    let (c1, c2) = (r.u32().map_err(bad)?, r.u32().map_err(bad)?);
    if c1 != c2 {
        return Err(if encrypted { Error::WrongPassphrase } else { bad("check integers differ") });
    }
    let key = match r.string().map_err(bad)? {
        t if t == ED25519.as_bytes() => {
            let public: [u8; 32] = r.string().map_err(bad)?.try_into().map_err(|_| bad("bad Ed25519 key"))?;
            let both = r.string().map_err(bad)?;
            if both.len() != 64 || both[32..] != public {
                return Err(bad("bad Ed25519 private key"));
            }
            let mut seed = Zeroizing::new([0u8; 32]);
            seed.copy_from_slice(&both[..32]);
            SshPrivateKey::Ed25519 { seed, public }
        }
        t if t == RSA.as_bytes() => {
            let mut next = || r.mpint().map(|v| Zeroizing::new(v.to_vec())).map_err(bad);
            let (n, e, d, iqmp, p, q) = (next()?, next()?, next()?, next()?, next()?, next()?);
            SshPrivateKey::Rsa(RsaComponents { n: n.to_vec(), e: e.to_vec(), d, iqmp, p, q })
        }
        other => {
            return Err(bad(format_args!(
                "key type {:?} is not supported (age supports ssh-ed25519 and ssh-rsa)",
                String::from_utf8_lossy(other)
            )))
        }
    };
    let _comment = r.string().map_err(bad)?;
    let pad = r.rest();
    if pad.len() >= 16 || pad.iter().enumerate().any(|(i, &b)| b as usize != i + 1) {
        return Err(bad("bad padding"));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASS: &[u8] = b"hyperseal test";

    fn file(name: &str) -> OpensshKeyFile {
        let path = format!("{}/../../vectors/ssh/{name}", env!("CARGO_MANIFEST_DIR"));
        OpensshKeyFile::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn pub_of(name: &str) -> SshPublicKey {
        let path = format!("{}/../../vectors/ssh/{name}.pub", env!("CARGO_MANIFEST_DIR"));
        match super::super::openssh::parse_authorized_key(&std::fs::read_to_string(path).unwrap()).unwrap() {
            super::super::openssh::AuthorizedKey::Supported(k) => k,
            _ => panic!(),
        }
    }

    #[test]
    fn unencrypted_keys() {
        for name in ["ed25519", "rsa2048"] {
            let f = file(name);
            assert!(!f.is_encrypted());
            assert_eq!(f.public(), &pub_of(name));
            let k = f.decrypt(None).unwrap();
            match (name, k) {
                ("ed25519", SshPrivateKey::Ed25519 { .. }) => {}
                ("rsa2048", SshPrivateKey::Rsa(c)) => assert_eq!(c.n.len(), 256),
                _ => panic!("{name}: wrong kind"),
            }
        }
    }

    #[test]
    fn passphrase_protected_keys() {
        for name in ["ed25519_ctr", "ed25519_gcm", "rsa3072_ctr"] {
            let f = file(name);
            assert!(f.is_encrypted(), "{name}");
            assert_eq!(f.public(), &pub_of(name), "public key readable without the passphrase");
            assert!(f.decrypt(Some(PASS)).is_ok(), "{name}");
            assert!(matches!(f.decrypt(Some(b"wrong")), Err(Error::WrongPassphrase)), "{name}");
            assert!(matches!(f.decrypt(None), Err(Error::InvalidKey(_))), "{name}");
            assert!(format!("{f:?}").contains("redacted"));
        }
    }

    /// A protected key asking for more bcrypt rounds than the budget is refused when parsed,
    /// before any passphrase is asked for or any round is run.
    #[test]
    fn absurd_bcrypt_rounds_are_refused() {
        let path = format!("{}/../../vectors/ssh/ed25519_ctr", env!("CARGO_MANIFEST_DIR"));
        let der = crate::recipient::pem::decode(&std::fs::read_to_string(path).unwrap(), PEM_LABEL).unwrap();
        let mut r = Reader::new(&der);
        r.bytes(MAGIC.len()).unwrap();
        r.string().unwrap(); // cipher
        r.string().unwrap(); // kdf name
        let options_end = der.len() - r.rest().len() + 4 + r.string().unwrap().len();
        let with_rounds = |n: u32| {
            use base64::Engine;
            let mut d = der.clone();
            d[options_end - 4..options_end].copy_from_slice(&n.to_be_bytes());
            let b = base64::engine::general_purpose::STANDARD.encode(&d);
            OpensshKeyFile::parse(&format!("{BEGIN}\n{b}\n-----END {PEM_LABEL}-----\n"))
        };
        assert!(with_rounds(16).is_ok());
        assert!(with_rounds(crate::limits::SSH_KDF_ROUNDS as u32).is_ok());
        let r = with_rounds(1 << 20);
        assert!(matches!(&r, Err(Error::Limit(m)) if m.contains("bcrypt rounds")), "{:?}", r.err());
    }

    #[test]
    fn tampering_is_refused() {
        let path = format!("{}/../../vectors/ssh/ed25519", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let der = crate::recipient::pem::decode(&text, PEM_LABEL).unwrap();
        let rewrap = |d: &[u8]| {
            use base64::Engine;
            let b = base64::engine::general_purpose::STANDARD.encode(d);
            OpensshKeyFile::parse(&format!("{BEGIN}\n{b}\n-----END {PEM_LABEL}-----\n"))
        };
        assert!(rewrap(&der).is_ok());
        assert!(rewrap(&der[..der.len() - 1]).is_err(), "truncated");
        let mut extra = der.clone();
        extra.push(0);
        assert!(rewrap(&extra).is_err(), "trailing data");
        let mut magic = der.clone();
        magic[0] ^= 1;
        assert!(rewrap(&magic).is_err(), "magic");
        // Locate the private section (the last string) and flip its first check integer, then
        // the public key stored inside it: both parse, neither decrypts.
        let mut r = Reader::new(&der);
        r.bytes(MAGIC.len()).unwrap();
        for _ in 0..3 {
            r.string().unwrap(); // cipher, kdf, kdf options
        }
        assert_eq!(r.u32().unwrap(), 1);
        r.string().unwrap(); // the public key
        let section = der.len() - r.rest().len() + 4;
        for (at, what) in [(section, "check integer"), (section + 8 + 15 + 4, "inner public key")] {
            let mut flipped = der.clone();
            flipped[at] ^= 0x40;
            let f = rewrap(&flipped).unwrap();
            assert!(matches!(f.decrypt(None), Err(Error::InvalidKey(_))), "{what}");
        }
        assert!(
            OpensshKeyFile::parse("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").is_err()
        );
    }
}
