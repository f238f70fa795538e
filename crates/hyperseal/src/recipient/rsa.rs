//! RSA-OAEP recipients: RSA-OAEP with SHA-256 and MGF1-SHA-256, empty label (RFC 8017).
//!
//! Keys are standard PEM files (SPKI `PUBLIC KEY` / PKCS#8 `PRIVATE KEY`) so that existing PKI
//! keys work and `openssl pkey` can read what we write. Stanza
//! `-> rsa-oaep <b64 key id>`, body = the OAEP ciphertext of the file key, where key id = the
//! first 8 bytes of SHA-256(SPKI DER). The key id makes this recipient non-anonymous (a file
//! shows which key it is for), a deliberate trade: without it every identity would run a
//! ~ms RSA private-key operation on every rsa-oaep stanza, and an OAEP failure could not be told
//! apart from "not mine", so a broken stanza would silently become "no identity matched".

use aws_lc_rs::digest::{digest, SHA256};
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{
    KeySize, OaepPrivateDecryptingKey, OaepPublicEncryptingKey, PrivateDecryptingKey, PublicEncryptingKey,
    OAEP_SHA256_MGF1SHA256,
};
use zeroize::Zeroizing;

use super::pem;
use super::primitives::single_arg;
use super::traits::{GeneratedKey, Identity, Labels, Recipient};
use crate::format::{encode_b64, Stanza};
use crate::{error::Error, file_key::FileKey};

/// RSA keys are PEM, not bech32; this is the PEM line that introduces a recipient.
pub const RECIPIENT_HRP: &str = "-----BEGIN PUBLIC KEY-----";
/// The PEM line that introduces an identity.
pub const IDENTITY_HRP: &str = "-----BEGIN PRIVATE KEY-----";

const TAG: &str = "rsa-oaep";
const KEY_ID_LEN: usize = 8;
/// Below 3072 bits RSA falls short of the 128-bit level the rest of the format targets
/// (NIST SP 800-57 Part 1, table 2).
const MIN_BITS: usize = 3072;

/// An RSA public key (SPKI).
pub struct RsaRecipient {
    key: OaepPublicEncryptingKey,
    spki: Vec<u8>,
    key_id: [u8; KEY_ID_LEN],
}

impl std::fmt::Debug for RsaRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RsaRecipient({} bits, id {})", self.key.key_size_bits(), encode_b64(&self.key_id))
    }
}

fn key_id(spki_der: &[u8]) -> [u8; KEY_ID_LEN] {
    let mut id = [0u8; KEY_ID_LEN];
    id.copy_from_slice(&digest(&SHA256, spki_der).as_ref()[..KEY_ID_LEN]);
    id
}

/// The SPKI DER as aws-lc-rs re-encodes it, so sender and identity hash the same bytes even if
/// the input PEM used an equivalent but different encoding.
fn spki_der(public: &PublicEncryptingKey) -> Result<Vec<u8>, Error> {
    Ok(public.as_der().map_err(|_| Error::Crypto)?.as_ref().to_vec())
}

impl RsaRecipient {
    fn from_public(public: PublicEncryptingKey) -> Result<Self, Error> {
        if public.key_size_bits() < MIN_BITS {
            return Err(Error::InvalidRecipient(format!(
                "RSA key of {} bits is too small (minimum {MIN_BITS})",
                public.key_size_bits()
            )));
        }
        let spki = spki_der(&public)?;
        let key = OaepPublicEncryptingKey::new(public).map_err(|_| Error::Crypto)?;
        Ok(RsaRecipient { key, key_id: key_id(&spki), spki })
    }

    /// Parses a `-----BEGIN PUBLIC KEY-----` (SPKI) PEM.
    pub fn from_spki_pem(pem: &str) -> Result<Self, Error> {
        let der = pem::decode(pem, "PUBLIC KEY").map_err(Error::InvalidRecipient)?;
        let public = PublicEncryptingKey::from_der(&der)
            .map_err(|e| Error::InvalidRecipient(format!("not an RSA public key: {e}")))?;
        Self::from_public(public)
    }

    /// The SPKI PEM.
    pub fn to_spki_pem(&self) -> String {
        pem::encode("PUBLIC KEY", &self.spki)
    }
}

impl Recipient for RsaRecipient {
    fn wraps_offline(&self) -> bool {
        true
    }

    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let mut ct = vec![0u8; self.key.ciphertext_size()];
        let n = self.key.encrypt(&OAEP_SHA256_MGF1SHA256, file_key.expose(), &mut ct, None)?.len();
        ct.truncate(n);
        Ok((vec![Stanza::new(TAG, vec![encode_b64(&self.key_id)], ct)], Labels::new()))
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        Some([TAG.as_bytes(), b" ", &self.spki].concat())
    }

    fn names_stanza(&self, stanza: &Stanza) -> Option<bool> {
        Some(stanza.tag == TAG && stanza.args.first() == Some(&encode_b64(&self.key_id)))
    }
}

/// An RSA private key (PKCS#8). aws-lc-rs holds it in C memory and frees it with
/// `EVP_PKEY_free`, which clears it; `Debug` is redacted.
pub struct RsaIdentity {
    key: OaepPrivateDecryptingKey,
    key_id: [u8; KEY_ID_LEN],
}

impl std::fmt::Debug for RsaIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RsaIdentity({} bits, id {}, redacted)", self.key.key_size_bits(), encode_b64(&self.key_id))
    }
}

impl RsaIdentity {
    /// Parses a `-----BEGIN PRIVATE KEY-----` (PKCS#8) PEM.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, Error> {
        let der = Zeroizing::new(pem::decode(pem, "PRIVATE KEY").map_err(Error::InvalidKey)?);
        let private = PrivateDecryptingKey::from_pkcs8(&der)
            .map_err(|e| Error::InvalidKey(format!("not an RSA PKCS#8 private key: {e}")))?;
        if private.key_size_bits() < MIN_BITS {
            return Err(Error::InvalidKey(format!(
                "RSA key of {} bits is too small (minimum {MIN_BITS})",
                private.key_size_bits()
            )));
        }
        let key_id = key_id(&spki_der(&private.public_key())?);
        let key = OaepPrivateDecryptingKey::new(private).map_err(|_| Error::Crypto)?;
        Ok(RsaIdentity { key, key_id })
    }

    fn unwrap_own(&self, stanza: &Stanza) -> Result<FileKey, Error> {
        if stanza.body.len() != self.key.key_size_bytes() {
            return Err(Error::InvalidStanza(format!(
                "rsa-oaep body is {} bytes, expected {}",
                stanza.body.len(),
                self.key.key_size_bytes()
            )));
        }
        let mut pt = Zeroizing::new(vec![0u8; self.key.min_output_size()]);
        let pt = self
            .key
            .decrypt(&OAEP_SHA256_MGF1SHA256, &stanza.body, &mut pt, None)
            .map_err(|_| Error::InvalidStanza("rsa-oaep decryption failed".into()))?;
        FileKey::from_slice(pt)
            .ok_or_else(|| Error::InvalidStanza("rsa-oaep file key must be 16 or 32 bytes".into()))
    }
}

impl Identity for RsaIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != TAG {
            return None;
        }
        match single_arg(stanza, KEY_ID_LEN, "rsa-oaep key id") {
            Err(e) => Some(Err(e)),
            // Another key's stanza: answered without touching the private key.
            Ok(id) if id[..] != self.key_id[..] => None,
            Ok(_) => Some(self.unwrap_own(stanza)),
        }
    }
}

/// The SPKI PEM of a PKCS#8 PEM private key (`hyperseal pubkey`).
pub fn public_pem_from_pkcs8_pem(pem: &str) -> Result<String, Error> {
    let der = Zeroizing::new(pem::decode(pem, "PRIVATE KEY").map_err(Error::InvalidKey)?);
    let private = PrivateDecryptingKey::from_pkcs8(&der)
        .map_err(|e| Error::InvalidKey(format!("not an RSA PKCS#8 private key: {e}")))?;
    Ok(pem::encode("PUBLIC KEY", &spki_der(&private.public_key())?))
}

/// Generates an RSA key pair of 3072 or 4096 bits: PKCS#8 PEM secret, SPKI PEM public.
pub fn generate(bits: usize) -> Result<GeneratedKey, Error> {
    let size = match bits {
        3072 => KeySize::Rsa3072,
        4096 => KeySize::Rsa4096,
        _ => return Err(Error::InvalidArgument(format!("RSA keys must be 3072 or 4096 bits, not {bits}"))),
    };
    let private = PrivateDecryptingKey::generate(size)?;
    let pkcs8 = private.as_der().map_err(|_| Error::Crypto)?;
    let secret = Zeroizing::new(pem::encode("PRIVATE KEY", pkcs8.as_ref()));
    Ok(GeneratedKey { secret, public: pem::encode("PUBLIC KEY", &spki_der(&private.public_key())?) })
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    /// RSA key generation takes a second or more in debug builds: make each size once.
    fn key(bits: usize) -> &'static GeneratedKey {
        static K3072: OnceLock<GeneratedKey> = OnceLock::new();
        static K4096: OnceLock<GeneratedKey> = OnceLock::new();
        let cell = if bits == 3072 { &K3072 } else { &K4096 };
        cell.get_or_init(|| generate(bits).unwrap())
    }

    #[test]
    fn round_trip_both_key_lengths_and_sizes() {
        for bits in [3072, 4096] {
            let k = key(bits);
            let r = RsaRecipient::from_spki_pem(&k.public).unwrap();
            let id = RsaIdentity::from_pkcs8_pem(&k.secret).unwrap();
            Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |_, s, labels| {
                assert!(labels.is_empty());
                assert_eq!(s.body.len(), bits / 8);
            });
            assert_eq!(public_pem_from_pkcs8_pem(&k.secret).unwrap(), k.public);
            assert_eq!(r.to_spki_pem(), k.public);
        }
    }

    #[test]
    fn not_mine_and_broken() {
        let r = RsaRecipient::from_spki_pem(&key(3072).public).unwrap();
        let id = RsaIdentity::from_pkcs8_pem(&key(3072).secret).unwrap();
        let other = RsaIdentity::from_pkcs8_pem(&key(4096).secret).unwrap();
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(16);
        // other key id: not mine, no RSA operation
        pair.not_mine(&s, &[&other], &[Stanza::new("X25519", vec!["AA".into()], vec![])]);
        // OAEP of a 20-byte key decrypts but is not a file key
        let mut ct = vec![0u8; 384];
        let n = r.key.encrypt(&OAEP_SHA256_MGF1SHA256, &[7; 20], &mut ct, None).unwrap().len();
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.push("x".into()),
                &|b| b.args[0] = encode_b64(&[0; 7]),
                &|b| b.body.pop().map(drop).unwrap_or(()),
                // tampered: our key id, so a definite error
                &|b| b.body[100] ^= 1,
                &|b| b.body = ct[..n].to_vec(),
            ],
        );
    }

    #[test]
    fn small_keys_and_bad_pem_refused() {
        let small = PrivateDecryptingKey::generate(KeySize::Rsa2048).unwrap();
        let pem = pem::encode("PUBLIC KEY", &spki_der(&small.public_key()).unwrap());
        assert!(matches!(RsaRecipient::from_spki_pem(&pem), Err(Error::InvalidRecipient(_))));
        let pem = pem::encode("PRIVATE KEY", small.as_der().unwrap().as_ref());
        assert!(RsaIdentity::from_pkcs8_pem(&pem).is_err());
        assert!(RsaRecipient::from_spki_pem(&key(3072).secret).is_err(), "a private PEM is not a recipient");
        assert!(RsaRecipient::from_spki_pem("-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----\n")
            .is_err());
        assert!(generate(2048).is_err());
        let id = RsaIdentity::from_pkcs8_pem(&key(3072).secret).unwrap();
        assert!(format!("{id:?}").contains("redacted"));
        // CRLF and explanatory text around the block are fine
        let crlf = format!("my key\r\n{}", key(3072).public.replace('\n', "\r\n"));
        assert!(RsaRecipient::from_spki_pem(&crlf).is_ok());
    }

    /// The PEMs we write must be readable by OpenSSL (skipped if `openssl` is not installed).
    #[test]
    fn openssl_reads_our_pems() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let run = |args: &[&str], input: &str| -> Option<String> {
            let mut child = Command::new("openssl")
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .ok()?;
            child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            Some(String::from_utf8(out.stdout).unwrap())
        };
        let k = key(3072);
        let Some(public) = run(&["pkey", "-pubout"], &k.secret) else {
            println!("NOTE: openssl not found; skipping the PEM interoperability test");
            // `make test` sets this: there a missing peer is a failure, never a quiet skip.
            assert!(
                std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(),
                "a peer is missing under make test"
            );
            return;
        };
        assert_eq!(public, k.public, "openssl derives the same SPKI PEM, byte for byte");
        assert_eq!(run(&["pkey", "-pubin"], &k.public).unwrap(), k.public);
        let text = run(&["pkey", "-noout", "-text"], &k.secret).unwrap();
        assert!(text.contains("3072 bit"), "{text}");
        // And OpenSSL's own PKCS#8 re-encoding is accepted back.
        let reencoded = run(&["pkey"], &k.secret).unwrap();
        assert!(RsaIdentity::from_pkcs8_pem(&reencoded).is_ok());
    }

    /// Wycheproof RSA-OAEP-SHA-256/MGF1-SHA-256 decryption through aws-lc-rs, every group,
    /// including the non-empty-label cases (aws-lc-rs takes the label as a parameter).
    #[test]
    fn wycheproof_rsa_oaep() {
        for bits in [2048, 3072, 4096] {
            let path = format!(
                "{}/../../vectors/wycheproof/rsa_oaep_{bits}_sha256_mgf1sha256_test.json",
                env!("CARGO_MANIFEST_DIR")
            );
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let (mut valid, mut invalid, mut labelled) = (0, 0, 0);
            for g in json["testGroups"].as_array().unwrap() {
                let der = hex::decode(g["privateKeyPkcs8"].as_str().unwrap()).unwrap();
                let key =
                    OaepPrivateDecryptingKey::new(PrivateDecryptingKey::from_pkcs8(&der).unwrap()).unwrap();
                for t in g["tests"].as_array().unwrap() {
                    let h = |k: &str| hex::decode(t[k].as_str().unwrap()).unwrap();
                    let (msg, ct, label) = (h("msg"), h("ct"), h("label"));
                    let mut out = vec![0u8; key.min_output_size()];
                    let got = key.decrypt(&OAEP_SHA256_MGF1SHA256, &ct, &mut out, Some(&label[..]));
                    match t["result"].as_str().unwrap() {
                        "valid" => {
                            assert_eq!(got.expect("valid case must decrypt"), &msg[..], "tcId {}", t["tcId"]);
                            valid += 1;
                        }
                        "invalid" => {
                            assert!(got.is_err(), "tcId {} must not decrypt", t["tcId"]);
                            invalid += 1;
                        }
                        r => panic!("tcId {}: unexpected result {r}", t["tcId"]),
                    }
                    labelled += usize::from(!label.is_empty());
                }
            }
            println!(
                "wycheproof rsa_oaep_{bits}_sha256_mgf1sha256_test.json: {valid} valid decrypted, {invalid} invalid refused ({labelled} with a non-empty label), 0 skipped"
            );
            assert_eq!(valid + invalid, json["numberOfTests"].as_u64().unwrap() as usize);
        }
    }
}
