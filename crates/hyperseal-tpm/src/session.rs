//! Salted sessions with parameter encryption (TCG TPM 2.0 Library, Part 1 §19 and §21): what
//! keeps the PIN, the ML-KEM seed and the ECDH result off the bus between CPU and TPM.
//!
//! The session is salted to an ECC key of the TPM (the salt is agreed by ECDH with an ephemeral
//! key, KDFe): to the key being used, whose point the identity file holds, or at key creation to
//! the storage primary. Its session key is then unknown to anyone on the bus, as long as the
//! point is the TPM's: hence the key's own point from the file (see `identity.rs`). Each
//! command then carries an HMAC under session key ‖ authValue instead of the PIN, and the first
//! parameter that holds a secret travels AES-128-CFB encrypted (the `inSensitive` of `Create`,
//! the `outData` of `Unseal`, the `outPoint` of `ECDH_ZGen`). The TPM's answers are
//! authenticated with the same HMAC, so a forged answer is refused.
//!
//! Every primitive is aws-lc's (the core's build): P-256 ECDH, HMAC-SHA-256, AES-128-CFB128.

use aws_lc_rs::{agreement, cipher, hmac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::error::TpmError;
use crate::marshal::{In, Out};

/// `sessionAttributes`: keep the session, decrypt the command's first parameter, encrypt the
/// response's.
pub(crate) const CONTINUE: u8 = 0x01;
pub(crate) const DECRYPT: u8 = 0x20;
pub(crate) const ENCRYPT: u8 = 0x40;
const NONCE_LEN: usize = 16;

/// A session being started: its salt and the caller's first nonce.
pub(crate) struct Salting {
    salt: Zeroizing<[u8; 32]>,
    caller: [u8; NONCE_LEN],
}

impl Salting {
    /// The session from `StartAuthSession`'s answer: sessionKey = KDFa(salt, "ATH", nonceTPM,
    /// nonceCaller) (unbound: no authValue in the key).
    pub(crate) fn finish(self, handle: u32, params: &[u8]) -> Result<Session, TpmError> {
        let nonce_tpm = In::new(params).b(64)?.to_vec();
        let key = kdfa(&self.salt[..], "ATH", &nonce_tpm, &self.caller);
        Ok(Session { handle, key, nonce_tpm })
    }
}

/// A started salted session (HMAC or policy).
pub(crate) struct Session {
    pub handle: u32,
    key: Zeroizing<[u8; 32]>,
    nonce_tpm: Vec<u8>,
}

fn crypto(what: &str) -> TpmError {
    TpmError::Protocol(format!("session {what} failed"))
}

fn nonce() -> Result<[u8; NONCE_LEN], TpmError> {
    let mut n = [0u8; NONCE_LEN];
    hyperseal::fill_random(&mut n).map_err(|_| crypto("randomness"))?;
    Ok(n)
}

/// The session's salt from the ECDH result `z`: KDFe (Part 1 §11.4.10.3), one SHA-256 block
/// over counter ‖ Z ‖ "SECRET\0" ‖ the ephemeral key's x ‖ the salting key's x.
pub(crate) fn kdfe(z: &[u8], eph_x: &[u8], key_x: &[u8]) -> Zeroizing<[u8; 32]> {
    let h = Sha256::new().chain_update(1u32.to_be_bytes()).chain_update(z).chain_update(b"SECRET\0");
    Zeroizing::new(h.chain_update(eph_x).chain_update(key_x).finalize().into())
}

/// `KDFa(SHA-256, key, label, contextU, contextV, 256)`, Part 1 §11.4.10.2: one HMAC block.
pub(crate) fn kdfa(key: &[u8], label: &str, u: &[u8], v: &[u8]) -> Zeroizing<[u8; 32]> {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key);
    let mut c = hmac::Context::with_key(&k);
    for part in [&1u32.to_be_bytes()[..], label.as_bytes(), &[0], u, v, &256u32.to_be_bytes()] {
        c.update(part);
    }
    Zeroizing::new(c.sign().as_ref().try_into().expect("32 bytes"))
}

/// AES-128-CFB over `data` in place, key and IV from `KDFa(sessionValue, "CFB", newer, older)`.
fn cfb(value: &[u8], newer: &[u8], older: &[u8], data: &mut [u8], encrypt: bool) -> Result<(), TpmError> {
    let ki = kdfa(value, "CFB", newer, older);
    let key = || cipher::UnboundCipherKey::new(&cipher::AES_128, &ki[..16]).map_err(|_| crypto("key"));
    let iv: [u8; 16] = ki[16..].try_into().expect("16 bytes");
    if encrypt {
        let k = cipher::EncryptingKey::cfb128(key()?).map_err(|_| crypto("key"))?;
        let ctx = cipher::EncryptionContext::Iv128(iv.into());
        k.less_safe_encrypt(data, ctx).map_err(|_| crypto("encryption"))?;
    } else {
        let k = cipher::DecryptingKey::cfb128(key()?).map_err(|_| crypto("key"))?;
        k.decrypt(data, cipher::DecryptionContext::Iv128(iv.into())).map_err(|_| crypto("decryption"))?;
    }
    Ok(())
}

/// The first parameter's bytes (a `TPM2B`'s contents), where parameter encryption applies.
fn first_b(params: &mut [u8]) -> Result<&mut [u8], TpmError> {
    let n = usize::from(In::new(params).u16()?);
    params.get_mut(2..2 + n).ok_or_else(|| TpmError::Protocol("a parameter past the end".into()))
}

impl Session {
    /// `StartAuthSession`'s parameters for a session salted to the key whose uncompressed
    /// point is `point`, and the salt that makes the session from the answer.
    pub(crate) fn start_params(point: &[u8; 65], policy: bool) -> Result<(Vec<u8>, Salting), TpmError> {
        let eph = agreement::PrivateKey::generate(&agreement::ECDH_P256).map_err(|_| crypto("key"))?;
        let eph_pub = eph.compute_public_key().map_err(|_| crypto("key"))?;
        let eph_pub: [u8; 65] = eph_pub.as_ref().try_into().map_err(|_| crypto("key"))?;
        let peer = agreement::UnparsedPublicKey::new(&agreement::ECDH_P256, &point[..]);
        let z = agreement::agree(&eph, peer, crypto("agreement"), |z| Ok(Zeroizing::new(z.to_vec())))?;
        let salt = kdfe(&z, &eph_pub[1..33], &point[1..33]);
        let caller = nonce()?;
        let mut p = Out::default();
        p.b(&caller).sized(|s| {
            s.b(&eph_pub[1..33]).b(&eph_pub[33..]);
        });
        p.u8(u8::from(policy)).u16(0x0006).u16(128).u16(0x0043).u16(crate::marshal::ALG_SHA256);
        Ok((p.take(), Salting { salt, caller }))
    }

    /// The auth area entry for a command, with its first parameter encrypted when `attrs` say:
    /// (entry, caller's nonce). `names` are the command's handles' names, `value` the
    /// authorized object's authValue.
    pub(crate) fn authorize(
        &self,
        code: u32,
        names: &[&[u8]],
        value: &[u8],
        attrs: u8,
        params: &mut [u8],
    ) -> Result<(Zeroizing<Vec<u8>>, [u8; NONCE_LEN]), TpmError> {
        let caller = nonce()?;
        let sv = Zeroizing::new([&self.key[..], value].concat());
        if attrs & DECRYPT != 0 {
            cfb(&sv, &caller, &self.nonce_tpm, first_b(params)?, true)?;
        }
        let mut cp = Sha256::new().chain_update(code.to_be_bytes());
        for n in names {
            cp.update(n);
        }
        let cp_hash = cp.chain_update(&*params).finalize();
        let tag = self.mac(&sv, &[&cp_hash, &caller, &self.nonce_tpm, &[attrs]]);
        let mut o = Out::default();
        o.u32(self.handle).b(&caller).u8(attrs).b(&tag);
        Ok((Zeroizing::new(o.take()), caller))
    }

    fn mac(&self, key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
        let k = hmac::Key::new(hmac::HMAC_SHA256, key);
        let mut c = hmac::Context::with_key(&k);
        parts.iter().for_each(|p| c.update(p));
        c.sign().as_ref().try_into().expect("32 bytes")
    }

    /// Checks the answer's HMAC, takes the TPM's new nonce and decrypts the first parameter
    /// when `attrs` asked for it.
    pub(crate) fn verify(
        &mut self,
        command: &str,
        code: u32,
        value: &[u8],
        caller: &[u8],
        params: &mut [u8],
        auth: &[u8],
    ) -> Result<(), TpmError> {
        let mut i = In::new(auth);
        let nonce_tpm = i.b(64)?.to_vec();
        let attrs = i.u8()?;
        let tag = i.b(64)?;
        let sv = Zeroizing::new([&self.key[..], value].concat());
        let rp_hash = Sha256::new().chain_update(0u32.to_be_bytes()).chain_update(code.to_be_bytes());
        let rp_hash = rp_hash.chain_update(&*params).finalize();
        let want = self.mac(&sv, &[&rp_hash, &nonce_tpm, caller, &[attrs]]);
        if !bool::from(want.ct_eq(tag)) {
            return Err(TpmError::Altered(format!("the answer to {command} fails its session HMAC")));
        }
        self.nonce_tpm = nonce_tpm;
        if attrs & ENCRYPT != 0 {
            cfb(&sv, &self.nonce_tpm, caller, first_b(params)?, false)?;
        }
        Ok(())
    }
}

/// A TPM object's name: nameAlg (SHA-256) ‖ SHA-256 of its public area.
pub(crate) fn name_of(public: &[u8]) -> Vec<u8> {
    [&crate::marshal::ALG_SHA256.to_be_bytes()[..], &Sha256::digest(public)[..]].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfb_round_trips_and_depends_on_both_nonces() {
        let mut data = *b"the seed travels encrypted";
        cfb(b"key", b"n1", b"n2", &mut data, true).unwrap();
        assert_ne!(&data, b"the seed travels encrypted");
        let mut other = data;
        cfb(b"key", b"n2", b"n1", &mut other, false).unwrap();
        assert_ne!(&other, b"the seed travels encrypted");
        cfb(b"key", b"n1", b"n2", &mut data, false).unwrap();
        assert_eq!(&data, b"the seed travels encrypted");
    }

    #[test]
    fn kdfa_separates_labels() {
        assert_ne!(*kdfa(b"k", "ATH", b"u", b"v"), *kdfa(b"k", "CFB", b"u", b"v"));
    }
}
