//! Two HPKE KEMs over P-256, shared by hyperseal's `p256` / `mlkem768p256` stanzas and age's
//! tag stanzas (`p256tag` / `mlkem768p256tag`):
//!
//! * DHKEM(P-256, HKDF-SHA256), RFC 9180 §4.1 and §7.1 (KEM id 0x0010): enc = the ephemeral
//!   point uncompressed (65 bytes); shared secret = ExtractAndExpand(x-coordinate of the ECDH,
//!   enc ‖ pkR uncompressed).
//! * MLKEM768-P256, draft-ietf-hpke-pq (KEM id 0x0050), as `filippo.io/hpke` v0.4.0 (`pq.go`)
//!   builds it for age v1.3.1: secret = a 32-byte seed; SHAKE-256(seed) gives the 64-byte ML-KEM
//!   seed d ‖ z, then 32-byte candidates until one is a valid P-256 scalar. Public = ML-KEM-768
//!   ek (1184) ‖ P-256 point uncompressed (65); enc = ML-KEM ciphertext (1088) ‖ ephemeral point
//!   (65); shared secret = SHA3-256(ss_PQ ‖ ss_T ‖ ct_T ‖ ek_T ‖ "MLKEM768-P256").
//!
//! ECDH, ML-KEM and the hashes are the backend's (`crate::crypto`, `mlkem.rs`); the portable
//! build has no P-256, so every constructor there fails with "not available in this build".

use zeroize::Zeroizing;

use super::base::{kem_suite_id, labeled_expand, labeled_extract, KEM_MLKEM768_P256, KEM_P256};
use crate::crypto::{p256_compress, p256_decompress, P256Secret, P256_AVAILABLE, P256_UNAVAILABLE};
use crate::error::Error;
use crate::recipient::mlkem::{DecapsKey, EncapsKey, Level};
use crate::recipient::primitives::random;

/// An uncompressed P-256 point.
pub(crate) const POINT_LEN: usize = 65;
/// A compressed P-256 point.
pub(crate) const COMPRESSED_LEN: usize = 33;
/// MLKEM768-P256 public key: ML-KEM-768 ek ‖ P-256 point.
pub(crate) const HYBRID_PUBLIC_LEN: usize = Level::L768.ek_len() + POINT_LEN;
/// MLKEM768-P256 enc: ML-KEM-768 ciphertext ‖ ephemeral P-256 point.
pub(crate) const HYBRID_ENC_LEN: usize = Level::L768.ct_len() + POINT_LEN;

/// Candidates tried for a scalar: each is refused with probability < 2^-32, so 8 failures never
/// happen with a real KDF; the bound only stops a backend without P-256 from looping.
const SCALAR_TRIES: usize = 8;

/// A P-256 key pair: the scalar (zeroized on drop; the backend clears its own copy) and its
/// public point, uncompressed.
pub(crate) struct P256Key {
    scalar: Zeroizing<[u8; 32]>,
    secret: P256Secret,
    public: [u8; POINT_LEN],
}

impl P256Key {
    /// From a big-endian scalar in [1, n).
    pub(crate) fn from_scalar(scalar: &[u8; 32]) -> Result<Self, Error> {
        let secret = P256Secret::new(scalar)?;
        let public = secret.public()?;
        Ok(P256Key { scalar: Zeroizing::new(*scalar), secret, public })
    }

    /// The first acceptable scalar among `next()`'s candidates.
    fn first_valid(mut next: impl FnMut() -> Result<Zeroizing<[u8; 32]>, Error>) -> Result<Self, Error> {
        let mut last = Error::Crypto;
        for _ in 0..SCALAR_TRIES {
            match Self::from_scalar(&*next()?) {
                Ok(k) => return Ok(k),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// A fresh key from the OS RNG (rejection sampling, like Go's `crypto/ecdh`).
    pub(crate) fn generate() -> Result<Self, Error> {
        Self::first_valid(|| Ok(Zeroizing::new(random::<32>()?)))
    }

    /// RFC 9180 §7.1.3 `DeriveKeyPair(ikm)` for DHKEM(P-256, HKDF-SHA256). Used for age's test
    /// keys (`age-plugin-tagtest`) and the RFC vectors.
    pub(crate) fn derive(ikm: &[u8]) -> Result<Self, Error> {
        let suite = kem_suite_id(KEM_P256);
        let prk = labeled_extract(&suite, b"", b"dkp_prk", ikm);
        let mut counter = 0u8;
        Self::first_valid(|| {
            let mut candidate = Zeroizing::new([0u8; 32]);
            labeled_expand(&suite, &prk[..], b"candidate", &[counter], &mut candidate[..]);
            counter += 1;
            Ok(candidate)
        })
    }

    /// The scalar, 32 bytes big-endian.
    pub(crate) fn scalar(&self) -> &[u8; 32] {
        &self.scalar
    }

    pub(crate) fn public(&self) -> &[u8; POINT_LEN] {
        &self.public
    }

    pub(crate) fn public_compressed(&self) -> [u8; COMPRESSED_LEN] {
        p256_compress(&self.public).expect("our own point is on the curve")
    }
}

/// Fails with "not available in this build" where there is no P-256 (the portable backend), as
/// a recipient or a key error: called first by every parser, so no key is reported as malformed
/// merely because the build cannot check it.
pub(crate) fn require_p256(recipient: bool) -> Result<(), Error> {
    match (P256_AVAILABLE, recipient) {
        (true, _) => Ok(()),
        (false, true) => Err(Error::InvalidRecipient(P256_UNAVAILABLE.into())),
        (false, false) => Err(Error::InvalidKey(P256_UNAVAILABLE.into())),
    }
}

/// A recipient's P-256 point from its compressed form (33 bytes), checked to be on the curve.
pub(crate) fn decompress(compressed: &[u8]) -> Result<[u8; POINT_LEN], Error> {
    require_p256(true)?;
    p256_decompress(compressed).ok_or_else(|| Error::InvalidRecipient("not a P-256 point".into()))
}

/// ECDH that fails as a broken stanza when the peer point is not an uncompressed curve point.
fn ecdh(key: &P256Key, peer: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
    key.secret.agree(peer).ok_or_else(|| Error::InvalidStanza("the P-256 share is not a curve point".into()))
}

/// DHKEM `ExtractAndExpand(dh, kem_context)`.
fn extract_and_expand(dh: &[u8; 32], enc: &[u8], pk_r: &[u8]) -> Zeroizing<[u8; 32]> {
    let suite = kem_suite_id(KEM_P256);
    let eae_prk = labeled_extract(&suite, b"", b"eae_prk", dh);
    let mut shared = Zeroizing::new([0u8; 32]);
    labeled_expand(&suite, &eae_prk[..], b"shared_secret", &[enc, pk_r].concat(), &mut shared[..]);
    shared
}

/// DHKEM(P-256) `Encap(pkR)` with a given ephemeral key: (enc, shared secret).
pub(crate) fn p256_encap_with(
    pk_r: &[u8; POINT_LEN],
    eph: &P256Key,
) -> Result<([u8; POINT_LEN], Zeroizing<[u8; 32]>), Error> {
    let dh = ecdh(eph, pk_r)?;
    Ok((eph.public, extract_and_expand(&dh, &eph.public, pk_r)))
}

/// DHKEM(P-256) `Encap(pkR)` with a fresh ephemeral key.
pub(crate) fn p256_encap(pk_r: &[u8; POINT_LEN]) -> Result<([u8; POINT_LEN], Zeroizing<[u8; 32]>), Error> {
    p256_encap_with(pk_r, &P256Key::generate()?)
}

/// DHKEM(P-256) `Decap(enc, skR)`.
pub(crate) fn p256_decap(key: &P256Key, enc: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
    let dh = ecdh(key, enc)?;
    Ok(extract_and_expand(&dh, enc, &key.public))
}

/// DHKEM(P-256) `Decap` for a key held elsewhere (a TPM): `dh` is the x-coordinate its holder
/// computed, `pk_r` its public point.
pub(crate) fn p256_decap_held(dh: &[u8; 32], enc: &[u8], pk_r: &[u8; POINT_LEN]) -> Zeroizing<[u8; 32]> {
    extract_and_expand(dh, enc, pk_r)
}

/// A P-256 share that is an uncompressed curve point, or a broken-stanza error: checked here
/// before it is handed to a key's holder.
pub(crate) fn check_point(peer: &[u8]) -> Result<[u8; POINT_LEN], Error> {
    require_p256(false)?;
    match p256_compress(peer) {
        Some(_) => Ok(peer.try_into().expect("a compressible point is 65 bytes")),
        None => Err(Error::InvalidStanza("the P-256 share is not a curve point".into())),
    }
}

/// The MLKEM768-P256 combiner.
fn combiner(ss_pq: &[u8], ss_t: &[u8], ct_t: &[u8], ek_t: &[u8]) -> Zeroizing<[u8; 32]> {
    use sha3::Digest;
    let mut h = sha3::Sha3_256::new();
    for part in [ss_pq, ss_t, ct_t, ek_t, b"MLKEM768-P256"] {
        Digest::update(&mut h, part);
    }
    Zeroizing::new(h.finalize().into())
}

/// An MLKEM768-P256 public key.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct HybridPublic {
    ek_m: EncapsKey,
    pk_t: [u8; POINT_LEN],
}

impl HybridPublic {
    /// Parses ek ‖ point (1249 bytes), checking both halves (FIPS 203 §7.2; on the curve).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, Error> {
        require_p256(true)?;
        let bad = |why: &str| Error::InvalidRecipient(format!("ML-KEM-768 + P-256 key: {why}"));
        if bytes.len() != HYBRID_PUBLIC_LEN {
            return Err(bad("wrong length"));
        }
        let (m, t) = bytes.split_at(Level::L768.ek_len());
        let ek_m = EncapsKey::new(Level::L768, m).ok_or_else(|| bad("invalid ML-KEM-768 key"))?;
        if p256_compress(t).is_none() {
            return Err(bad("P-256 part is not a curve point"));
        }
        Ok(HybridPublic { ek_m, pk_t: t.try_into().expect("65 bytes") })
    }

    pub(crate) fn bytes(&self) -> Vec<u8> {
        [self.ek_m.bytes(), &self.pk_t[..]].concat()
    }

    /// The P-256 half, uncompressed.
    pub(crate) fn point(&self) -> &[u8; POINT_LEN] {
        &self.pk_t
    }

    /// `Encap`: (enc, shared secret), fresh randomness for both halves.
    pub(crate) fn encap(&self) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
        let eph = P256Key::generate()?;
        let ss_t = ecdh(&eph, &self.pk_t)?;
        let (mut enc, ss_pq) = self.ek_m.encapsulate()?;
        let ss = combiner(&ss_pq[..], &ss_t[..], &eph.public, &self.pk_t);
        enc.extend_from_slice(&eph.public);
        Ok((enc, ss))
    }
}

impl HybridPublic {
    /// The public key of an ML-KEM-768 seed (d ‖ z) and a P-256 point held apart from it (the
    /// seed sealed to a TPM, the point's scalar inside it).
    pub(crate) fn held(m_seed: &[u8; 64], pk_t: &[u8; POINT_LEN]) -> Result<Self, Error> {
        check_point(pk_t)?;
        let dk_m = DecapsKey::from_seed(Level::L768, m_seed)?;
        Ok(HybridPublic { ek_m: dk_m.encapsulation_key().clone(), pk_t: *pk_t })
    }
}

/// MLKEM768-P256 `Decap(enc)` for such a held key: `ss_t` is the ECDH x-coordinate its holder
/// computed with the share `enc` ends with; the ML-KEM half is expanded from `m_seed` for this
/// one call and dropped (the backend zeroizes it).
pub(crate) fn hybrid_decap_held(
    m_seed: &[u8; 64],
    pk_t: &[u8; POINT_LEN],
    enc: &[u8],
    ss_t: &[u8; 32],
) -> Result<Zeroizing<[u8; 32]>, Error> {
    let (ct_m, ct_t) = enc.split_at(Level::L768.ct_len());
    let ss_pq = DecapsKey::from_seed(Level::L768, m_seed)?.decapsulate(ct_m)?;
    Ok(combiner(&ss_pq[..], ss_t, ct_t, pk_t))
}

/// An MLKEM768-P256 private key: the 32-byte seed and the two keys expanded from it.
pub(crate) struct HybridKey {
    seed: Zeroizing<[u8; 32]>,
    dk_m: DecapsKey,
    t: P256Key,
}

impl HybridKey {
    /// `NewPrivateKey(seed)` as `filippo.io/hpke` v0.4.0 defines it (see the module docs).
    pub(crate) fn from_seed(seed: Zeroizing<[u8; 32]>) -> Result<Self, Error> {
        use sha3::digest::Update;
        use shake::{ExtendableOutput, Shake256, XofReader};
        let mut xof = Shake256::default();
        xof.update(&seed[..]);
        let mut reader = xof.finalize_xof();
        let mut m_seed = Zeroizing::new([0u8; 64]);
        reader.read(&mut m_seed[..]);
        let dk_m = DecapsKey::from_seed(Level::L768, &m_seed)?;
        let t = P256Key::first_valid(|| {
            let mut candidate = Zeroizing::new([0u8; 32]);
            reader.read(&mut candidate[..]);
            Ok(candidate)
        })?;
        Ok(HybridKey { seed, dk_m, t })
    }

    /// A fresh key.
    pub(crate) fn generate() -> Result<Self, Error> {
        Self::from_seed(Zeroizing::new(random::<32>()?))
    }

    /// `DeriveKeyPair(ikm)`: the seed is SHAKE-256 `LabeledDerive(ikm, "DeriveKeyPair", "", 32)`
    /// (draft-ietf-hpke-pq, one-stage KDF). Used for age's test keys and the draft's vectors.
    pub(crate) fn derive(ikm: &[u8]) -> Result<Self, Error> {
        use sha3::digest::Update;
        use shake::{ExtendableOutput, Shake256, XofReader};
        let label = b"DeriveKeyPair";
        let mut xof = Shake256::default();
        for part in
            [ikm, b"HPKE-v1", &kem_suite_id(KEM_MLKEM768_P256)[..], &(label.len() as u16).to_be_bytes()]
        {
            xof.update(part);
        }
        xof.update(label);
        xof.update(&32u16.to_be_bytes());
        let mut seed = Zeroizing::new([0u8; 32]);
        xof.finalize_xof().read(&mut seed[..]);
        Self::from_seed(seed)
    }

    pub(crate) fn seed(&self) -> &[u8; 32] {
        &self.seed
    }

    /// The P-256 half of the public key, uncompressed.
    pub(crate) fn point(&self) -> &[u8; POINT_LEN] {
        self.t.public()
    }

    pub(crate) fn public(&self) -> HybridPublic {
        HybridPublic { ek_m: self.dk_m.encapsulation_key().clone(), pk_t: self.t.public }
    }

    /// `Decap(enc)`: `enc` must be [`HYBRID_ENC_LEN`] bytes (checked by the caller). ML-KEM never
    /// fails (implicit rejection); a P-256 share off the curve is a broken stanza.
    pub(crate) fn decap(&self, enc: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
        let (ct_m, ct_t) = enc.split_at(Level::L768.ct_len());
        let ss_t = ecdh(&self.t, ct_t)?;
        let ss_pq = self.dk_m.decapsulate(ct_m)?;
        Ok(combiner(&ss_pq[..], &ss_t[..], ct_t, &self.t.public))
    }
}

#[cfg(all(test, not(portable_backend)))]
#[path = "kem_tests.rs"]
mod tests;
