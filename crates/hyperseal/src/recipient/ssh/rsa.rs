//! `ssh-rsa` identities, exactly as age's `agessh` package opens them: RSA-OAEP-SHA-256
//! (MGF1-SHA-256) with the label `age-encryption.org/v1/ssh-rsa` (the recipient side is
//! `rsa_recipient.rs`, re-exported here). Native only: the private-key operation runs on aws-lc,
//! which is constant time; the portable build refuses these keys (`../common/unavailable.rs`).
//!
//! OpenSSH private keys carry n, e, d, p, q and q⁻¹ mod p but not the CRT exponents d mod (p−1)
//! and d mod (q−1) that aws-lc-rs needs, so [`crt_exponents`] asks aws-lc's bignum code for them:
//! the one unsafe block of this file (see its SAFETY note).
#![allow(unsafe_code)]

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{
    KeyPair, KeyPairComponents, OaepPrivateDecryptingKey, PrivateDecryptingKey, PublicKeyComponents,
    OAEP_SHA256_MGF1SHA256,
};
use zeroize::Zeroizing;

use super::openssh::SshPublicKey;
use super::openssh_key::RsaComponents;
pub use super::rsa_recipient::SshRsaRecipient;
use super::rsa_recipient::{LABEL, TAG};
use crate::format::Stanza;
use crate::recipient::pem::der_take;
use crate::recipient::traits::Identity;
use crate::{error::Error, file_key::FileKey};

fn size_error(e: aws_lc_rs::error::KeyRejected) -> String {
    match e.description_() {
        "TooSmall" => "ssh-rsa keys must have at least 2048 bits".into(),
        "TooLarge" => "ssh-rsa keys over 8192 bits are not supported".into(),
        other => format!("ssh-rsa key rejected ({other})"),
    }
}

/// An `ssh-rsa` private key as an age identity. aws-lc-rs holds the key in C memory and clears
/// it on free; `Debug` is redacted.
pub struct SshRsaIdentity {
    key: OaepPrivateDecryptingKey,
    tag: String,
}

impl std::fmt::Debug for SshRsaIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SshRsaIdentity({} bits, {}, redacted)", self.key.key_size_bits(), self.tag)
    }
}

impl SshRsaIdentity {
    /// From the components of an OpenSSH RSA private key; aws-lc checks they are consistent.
    pub fn new(c: &RsaComponents) -> Result<Self, Error> {
        super::openssh::check_rsa_exponent(&c.e).map_err(Error::InvalidKey)?;
        let (dp, dq) = crt_exponents(&c.d, &c.p, &c.q)?;
        let components = KeyPairComponents {
            public_key: PublicKeyComponents { n: &c.n[..], e: &c.e[..] },
            d: &c.d[..],
            p: &c.p[..],
            q: &c.q[..],
            dP: &dp[..],
            dQ: &dq[..],
            qInv: &c.iqmp[..],
        };
        let pair = KeyPair::from_components(&components).map_err(|e| Error::InvalidKey(size_error(e)))?;
        Self::from_key_pair(&pair)
    }

    /// From an RSA key pair however it was stored (OpenSSH, PKCS#1 or PKCS#8 PEM, as age's
    /// `agessh` takes them all). The public exponent follows OpenSSH's rule.
    pub fn from_key_pair(pair: &KeyPair) -> Result<Self, Error> {
        let public = rsa_public(pair)?;
        let SshPublicKey::Rsa { e, .. } = &public else { unreachable!("rsa_public gives RSA keys") };
        super::openssh::check_rsa_exponent(e).map_err(Error::InvalidKey)?;
        let rejected = || Error::InvalidKey("ssh-rsa private key rejected".into());
        let pkcs8 = pair.as_der().map_err(|_| rejected())?;
        let pkcs8 = Zeroizing::new(pkcs8.as_ref().to_vec());
        let private =
            PrivateDecryptingKey::from_pkcs8(&pkcs8).map_err(|e| Error::InvalidKey(size_error(e)))?;
        let key = OaepPrivateDecryptingKey::new(private).map_err(|_| rejected())?;
        Ok(SshRsaIdentity { key, tag: public.fingerprint_tag() })
    }

    fn unwrap_own(&self, stanza: &Stanza) -> Result<FileKey, Error> {
        if stanza.body.len() != self.key.key_size_bytes() {
            return Err(Error::InvalidStanza(format!(
                "ssh-rsa body is {} bytes, expected {}",
                stanza.body.len(),
                self.key.key_size_bytes()
            )));
        }
        let mut pt = Zeroizing::new(vec![0u8; self.key.min_output_size()]);
        let pt = self
            .key
            .decrypt(&OAEP_SHA256_MGF1SHA256, &stanza.body, &mut pt, Some(LABEL))
            .map_err(|_| Error::InvalidStanza("ssh-rsa: failed to decrypt the file key".into()))?;
        FileKey::from_slice(pt)
            .ok_or_else(|| Error::InvalidStanza("ssh-rsa file key must be 16 or 32 bytes".into()))
    }
}

impl Identity for SshRsaIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        if stanza.tag != TAG {
            return None;
        }
        // Same order of checks as agessh: shape first, then "is it mine" by tag.
        match stanza.args.as_slice() {
            [tag] if *tag == self.tag => Some(self.unwrap_own(stanza)),
            [_] => None,
            _ => Some(Err(Error::InvalidStanza("ssh-rsa stanza must have exactly one argument".into()))),
        }
    }
}

/// The SSH public key of an RSA key pair, read from its PKCS#1 `RSAPublicKey` DER
/// (SEQUENCE { INTEGER n, INTEGER e }).
pub fn rsa_public(pair: &KeyPair) -> Result<SshPublicKey, Error> {
    use aws_lc_rs::signature::KeyPair as _;
    let bad = || Error::InvalidKey("malformed RSA public key".into());
    let der = pair.public_key().as_ref();
    let (body, rest) = der_take(der, 0x30).ok_or_else(bad)?;
    let (n, body) = der_take(body, 0x02).ok_or_else(bad)?;
    let (e, body) = der_take(body, 0x02).ok_or_else(bad)?;
    if !rest.is_empty() || !body.is_empty() {
        return Err(bad());
    }
    let strip = |v: &[u8]| v[v.iter().take_while(|&&b| b == 0).count()..].to_vec();
    Ok(SshPublicKey::Rsa { n: strip(n), e: strip(e) })
}

/// A secret big-endian integer.
type Secret = Zeroizing<Vec<u8>>;

/// d mod (p−1) and d mod (q−1), each padded to the length of its prime, computed by aws-lc.
fn crt_exponents(d: &[u8], p: &[u8], q: &[u8]) -> Result<(Secret, Secret), Error> {
    use aws_lc_sys::{
        BN_CTX_free, BN_CTX_new, BN_bin2bn, BN_bn2bin_padded, BN_clear_free, BN_div, BN_sub_word,
    };
    let (mut dp, mut dq) = (Zeroizing::new(vec![0u8; p.len()]), Zeroizing::new(vec![0u8; q.len()]));
    // SAFETY: BN_bin2bn reads exactly `len` bytes from each slice; every BIGNUM and the BN_CTX
    // are created here, null-checked before any use, and freed exactly once on every path
    // (BN_clear_free wipes them: they hold secrets); BN_bn2bin_padded writes at most the length
    // passed, the length of the output buffer. aws-lc's BN_div treats the operands' sizes, not
    // their values, as public, which holds here (the sizes are in the key file).
    let ok = unsafe {
        let ctx = BN_CTX_new();
        let bn = |b: &[u8]| BN_bin2bn(b.as_ptr(), b.len(), std::ptr::null_mut());
        let (bd, bp, bq, rp, rq) = (bn(d), bn(p), bn(q), bn(&[]), bn(&[]));
        let all = [bd, bp, bq, rp, rq];
        let ok = !ctx.is_null()
            && all.iter().all(|x| !x.is_null())
            && BN_sub_word(bp, 1) == 1
            && BN_sub_word(bq, 1) == 1
            && BN_div(std::ptr::null_mut(), rp, bd, bp, ctx) == 1
            && BN_div(std::ptr::null_mut(), rq, bd, bq, ctx) == 1
            && BN_bn2bin_padded(dp.as_mut_ptr(), dp.len(), rp) == 1
            && BN_bn2bin_padded(dq.as_mut_ptr(), dq.len(), rq) == 1;
        for x in all {
            if !x.is_null() {
                BN_clear_free(x);
            }
        }
        if !ctx.is_null() {
            BN_CTX_free(ctx);
        }
        ok
    };
    if !ok {
        return Err(Error::InvalidKey("malformed ssh-rsa private key".into()));
    }
    Ok((dp, dq))
}

#[cfg(test)]
mod tests {
    use super::super::openssh_key::{OpensshKeyFile, RsaComponents, SshPrivateKey};
    use super::*;
    use crate::recipient::contract::{Damaged, Pair};

    fn vector(name: &str) -> String {
        std::fs::read_to_string(format!("{}/../../vectors/ssh/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn pair(name: &str) -> (SshRsaRecipient, SshRsaIdentity) {
        let f = OpensshKeyFile::parse(&vector(name)).unwrap();
        let r = SshRsaRecipient::new(f.public()).unwrap();
        let SshPrivateKey::Rsa(c) = f.decrypt(Some(b"hyperseal test")).unwrap() else { panic!() };
        (r, SshRsaIdentity::new(&c).unwrap())
    }

    #[test]
    fn round_trip_and_stanza_shape() {
        for (name, bytes) in [("rsa2048", 256), ("rsa3072_ctr", 384)] {
            let (r, id) = pair(name);
            Pair { recipient: &r, identity: &id }.round_trip(&[16, 32], |_, s, labels| {
                assert!(labels.is_empty());
                assert_eq!(s.tag, "ssh-rsa");
                assert_eq!(s.args, [r.tag()]);
                assert_eq!(s.body.len(), bytes);
            });
            assert!(format!("{id:?}").contains("redacted"));
        }
    }

    #[test]
    fn not_mine_and_broken() {
        let (r, id) = pair("rsa2048");
        let (_, other) = pair("rsa3072_ctr");
        let pair = Pair { recipient: &r, identity: &id };
        let s = pair.stanza(16);
        // `other` sees another key's tag
        pair.not_mine(&s, &[&other], &[]);
        // The label matters: hyperseal's own rsa-oaep (empty label) does not open as ssh-rsa.
        let ct = r.encrypt_with_label(&[7; 16], b"");
        pair.damaged(
            &s,
            Damaged::Invalid,
            &[
                &|b| b.args.push("x".into()),
                &|b| b.args.clear(),
                &|b| {
                    b.body.pop();
                },
                &|b| b.body[10] ^= 1,
                &|b| b.body = ct.clone(),
            ],
        );
    }

    #[test]
    fn small_keys_refused() {
        let text = vector("rsa1024.pub");
        let super::super::openssh::AuthorizedKey::Supported(k) =
            super::super::openssh::parse_authorized_key(&text).unwrap()
        else {
            panic!()
        };
        let err = SshRsaRecipient::new(&k).unwrap_err().to_string();
        assert!(err.contains("2048"), "{err}");
        let f = OpensshKeyFile::parse(&vector("rsa1024")).unwrap();
        let SshPrivateKey::Rsa(c) = f.decrypt(None).unwrap() else { panic!() };
        assert!(SshRsaIdentity::new(&c).is_err());
    }

    /// Exponents OpenSSH and age refuse (1, even, over 24 bits) are bad keys, said as such: not
    /// "internal cryptographic failure".
    #[test]
    fn bad_exponents_are_bad_keys() {
        let f = OpensshKeyFile::parse(&vector("rsa2048")).unwrap();
        let SshPrivateKey::Rsa(c) = f.decrypt(None).unwrap() else { panic!() };
        for e in [vec![1u8], vec![2], vec![0x01, 0x00, 0x00], vec![0x02, 0x00, 0x00, 0x01]] {
            let public = SshPublicKey::Rsa { n: c.n.clone(), e: e.clone() };
            let blob = public.to_blob();
            let err = SshPublicKey::from_blob(&blob).unwrap_err();
            assert!(err.contains("public exponent"), "{e:?}: {err}");
            let line = format!(
                "ssh-rsa {}",
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &blob)
            );
            match super::super::parse_recipient(&line) {
                Err(Error::InvalidRecipient(m)) => assert!(m.contains("public exponent"), "{m}"),
                other => panic!("{e:?}: {:?}", other.map(|_| ())),
            }
            match SshRsaRecipient::new(&public) {
                Err(Error::InvalidRecipient(m)) => assert!(m.contains("public exponent"), "{m}"),
                other => panic!("{e:?}: {:?}", other.map(|_| ())),
            }
            let bad = RsaComponents {
                n: c.n.clone(),
                e: e.clone(),
                d: c.d.clone(),
                iqmp: c.iqmp.clone(),
                p: c.p.clone(),
                q: c.q.clone(),
            };
            match SshRsaIdentity::new(&bad) {
                Err(Error::InvalidKey(m)) => assert!(m.contains("public exponent"), "{m}"),
                other => panic!("{e:?}: {:?}", other.map(|_| ())),
            }
        }
    }

    #[test]
    fn inconsistent_components_refused() {
        let f = OpensshKeyFile::parse(&vector("rsa2048")).unwrap();
        let SshPrivateKey::Rsa(mut c) = f.decrypt(None).unwrap() else { panic!() };
        let last = c.d.len() - 1;
        c.d[last] ^= 2;
        assert!(SshRsaIdentity::new(&c).is_err(), "aws-lc's RSA_check_key catches a wrong d");
    }
}
