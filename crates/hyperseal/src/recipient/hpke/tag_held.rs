//! age's tag stanzas (`p256tag`, `mlkem768p256tag`) opened with a key held elsewhere: a P-256
//! scalar that never enters this process (a TPM does the ECDH, `TPM2_ECDH_ZGen`) and, for the
//! post-quantum kind, an ML-KEM-768 seed (d ‖ z) that its holder releases for one
//! decapsulation.
//!
//! The holder answers two questions through closures; everything else (the tag check, the
//! stanza's shape, the DHKEM and MLKEM768-P256 key schedules, the HPKE open) is the same code
//! the software keys use (`tag.rs`, `kem.rs`). A closure is called only after the stanza's tag
//! named this key, so a file addressed to others costs the holder nothing.

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use super::base::{self, KEM_MLKEM768_P256, KEM_P256};
use super::kem::{self, HybridPublic, HYBRID_ENC_LEN, POINT_LEN};
use super::tag::{self, TagRecipient, CLASSIC_LABEL, CLASSIC_TYPE, HYBRID_LABEL, HYBRID_TYPE};
use crate::format::Stanza;
use crate::recipient::mlkem::Level;
use crate::{error::Error, file_key::FileKey};

/// An uncompressed P-256 point: 0x04 ‖ x ‖ y.
pub const POINT_BYTES: usize = POINT_LEN;
/// An ML-KEM-768 seed, d ‖ z (FIPS 203 `KeyGen_internal`).
pub const MLKEM_SEED_BYTES: usize = 64;

/// The recipient (`age1tag1…`, or `age1tagpq1…` with an ML-KEM seed) of a held P-256 key whose
/// public point is `point`.
pub fn recipient(
    point: &[u8; POINT_LEN],
    mlkem_seed: Option<&[u8; MLKEM_SEED_BYTES]>,
) -> Result<TagRecipient, Error> {
    let point = kem::check_point(point)?;
    let hybrid = mlkem_seed.map(|s| HybridPublic::held(s, &point)).transpose()?;
    Ok(TagRecipient::from_held(point, hybrid))
}

/// The peer's share of a stanza this key's tag names, as an uncompressed curve point: what the
/// holder is asked to multiply by its scalar.
fn share(enc: &[u8]) -> Result<[u8; POINT_LEN], Error> {
    kem::check_point(&enc[enc.len() - POINT_LEN..])
}

/// A `p256tag` stanza for the held key `point`: `None` when it is another kind or another key's
/// tag. `ecdh(peer)` returns the x-coordinate of scalar·peer (`peer` is on the curve).
pub fn unwrap_classic(
    point: &[u8; POINT_LEN],
    stanza: &Stanza,
    ecdh: impl FnOnce(&[u8; POINT_LEN]) -> Result<Zeroizing<[u8; 32]>, Error>,
) -> Option<Result<FileKey, Error>> {
    if stanza.tag != CLASSIC_TYPE {
        return None;
    }
    let run = || -> Result<Option<FileKey>, Error> {
        let (t, enc) = tag::args(stanza, POINT_LEN)?;
        if !bool::from(t.ct_eq(&tag::tag(CLASSIC_LABEL, &enc, &tag::compress(point)))) {
            return Ok(None);
        }
        let dh = ecdh(&share(&enc)?)?;
        let shared = kem::p256_decap_held(&dh, &enc, point);
        tag::opened(CLASSIC_TYPE, base::open(KEM_P256, &shared, CLASSIC_LABEL, &stanza.body)).map(Some)
    };
    run().transpose()
}

/// An `mlkem768p256tag` stanza for the held key: `ecdh` as in [`unwrap_classic`], and
/// `mlkem_seed()` releases the ML-KEM seed for this one decapsulation (it is dropped, and so
/// zeroized, before this returns).
pub fn unwrap_hybrid(
    point: &[u8; POINT_LEN],
    stanza: &Stanza,
    ecdh: impl FnOnce(&[u8; POINT_LEN]) -> Result<Zeroizing<[u8; 32]>, Error>,
    mlkem_seed: impl FnOnce() -> Result<Zeroizing<[u8; MLKEM_SEED_BYTES]>, Error>,
) -> Option<Result<FileKey, Error>> {
    if stanza.tag != HYBRID_TYPE {
        return None;
    }
    let run = || -> Result<Option<FileKey>, Error> {
        let (t, enc) = tag::args(stanza, HYBRID_ENC_LEN)?;
        if !bool::from(t.ct_eq(&tag::tag(HYBRID_LABEL, &enc, point))) {
            return Ok(None);
        }
        debug_assert_eq!(enc.len(), Level::L768.ct_len() + POINT_LEN);
        let ss_t = ecdh(&share(&enc)?)?;
        let seed = mlkem_seed()?;
        let shared = kem::hybrid_decap_held(&seed, point, &enc, &ss_t)?;
        drop(seed);
        tag::opened(HYBRID_TYPE, base::open(KEM_MLKEM768_P256, &shared, HYBRID_LABEL, &stanza.body)).map(Some)
    };
    run().transpose()
}

#[cfg(all(test, not(portable_backend)))]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::crypto::P256Secret;
    use crate::recipient::Recipient;

    /// A software stand-in for the TPM: the scalar, and its ECDH as the holder computes it.
    fn holder() -> ([u8; 32], [u8; POINT_LEN]) {
        let key = kem::P256Key::derive(b"held key").unwrap();
        (*key.scalar(), *key.public())
    }

    fn agree(scalar: &[u8; 32], peer: &[u8; POINT_LEN]) -> Result<Zeroizing<[u8; 32]>, Error> {
        P256Secret::new(scalar)?.agree(peer).ok_or(Error::Crypto)
    }

    fn wrap(r: &TagRecipient) -> (FileKey, Stanza) {
        let fk = FileKey::generate(16);
        let (mut s, _) = r.wrap_file_key(&fk).unwrap();
        (fk, s.remove(0))
    }

    #[test]
    fn classic_round_trip_through_a_holder() {
        let (scalar, point) = holder();
        let r = recipient(&point, None).unwrap();
        assert!(r.to_bech32().starts_with("age1tag1"));
        let (fk, stanza) = wrap(&r);
        let got = unwrap_classic(&point, &stanza, |peer| agree(&scalar, peer)).unwrap().unwrap();
        assert_eq!(got.expose(), fk.expose());
    }

    #[test]
    fn hybrid_round_trip_releases_the_seed_once() {
        let (scalar, point) = holder();
        let seed = [7u8; MLKEM_SEED_BYTES];
        let r = recipient(&point, Some(&seed)).unwrap();
        assert!(r.is_postquantum() && r.to_bech32().starts_with("age1tagpq1"));
        let (fk, stanza) = wrap(&r);
        let asked = Cell::new(0);
        let seed_of = || {
            asked.set(asked.get() + 1);
            Ok(Zeroizing::new(seed))
        };
        let got = unwrap_hybrid(&point, &stanza, |p| agree(&scalar, p), seed_of).unwrap().unwrap();
        assert_eq!(got.expose(), fk.expose());
        assert_eq!(asked.get(), 1);
        // Another seed under the same point: the tag still names this key, so it is an error.
        let wrong = unwrap_hybrid(&point, &stanza, |p| agree(&scalar, p), || Ok(Zeroizing::new([8u8; 64])));
        assert!(matches!(wrong, Some(Err(Error::InvalidStanza(_)))));
    }

    #[test]
    fn another_keys_stanza_never_asks_the_holder() {
        let (_, point) = holder();
        let other = kem::P256Key::derive(b"another key").unwrap();
        let (_, stanza) = wrap(&recipient(other.public(), None).unwrap());
        let never = |_: &[u8; POINT_LEN]| -> Result<Zeroizing<[u8; 32]>, Error> { panic!("asked") };
        assert!(unwrap_classic(&point, &stanza, never).is_none());
        let (_, pq) = wrap(&recipient(other.public(), Some(&[1u8; 64])).unwrap());
        assert!(unwrap_hybrid(&point, &pq, never, || panic!("seed asked")).is_none());
        assert!(unwrap_classic(&point, &pq, never).is_none(), "another kind");
    }

    #[test]
    fn a_point_off_the_curve_is_refused() {
        let mut bad = holder().1;
        bad[64] ^= 1;
        assert!(recipient(&bad, None).is_err());
    }
}
