//! ML-KEM (FIPS 203) as the hybrid and ML-KEM-1024 recipients use it: checked encapsulation keys
//! and seed-derived decapsulation keys. The arithmetic is the backend's (`crate::crypto`: aws-lc
//! natively, RustCrypto `ml-kem` on the portable build); public keys are always checked by
//! `ml-kem` (the FIPS 203 §7.2 modulus check) when parsed. Both backends are checked against
//! Wycheproof (below, through whichever is in use) and against each other (`crypto/tests.rs`).

use ml_kem::TryKeyInit;
use zeroize::Zeroizing;

pub(crate) use crate::crypto::MlkemLevel as Level;
use crate::crypto::{mlkem_encapsulate_derand, MlkemDecaps};
use crate::error::Error;

/// FIPS 203 §7.2 input check (length, and every coefficient reduced mod q).
fn check_ek(level: Level, bytes: &[u8]) -> bool {
    match level {
        Level::L768 => ml_kem::ml_kem_768::EncapsulationKey::new_from_slice(bytes).is_ok(),
        Level::L1024 => ml_kem::ml_kem_1024::EncapsulationKey::new_from_slice(bytes).is_ok(),
    }
}

/// A checked encapsulation key.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct EncapsKey {
    level: Level,
    bytes: Vec<u8>,
}

impl EncapsKey {
    /// `None` if `bytes` is not a valid key of this level.
    pub(crate) fn new(level: Level, bytes: &[u8]) -> Option<Self> {
        check_ek(level, bytes).then(|| EncapsKey { level, bytes: bytes.to_vec() })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Encapsulates with fresh randomness from the OS RNG: (ciphertext, shared secret).
    pub(crate) fn encapsulate(&self) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
        let mut m = Zeroizing::new([0u8; 32]);
        crate::rng::fill(&mut m[..])?;
        self.encapsulate_derand(&m)
    }

    /// FIPS 203 `ML-KEM.Encaps_internal(ek, m)`. `m` must be fresh uniform randomness, used once.
    pub(crate) fn encapsulate_derand(&self, m: &[u8; 32]) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
        mlkem_encapsulate_derand(self.level, &self.bytes, m)
    }
}

/// A decapsulation key, expanded once from its seed (the backend zeroizes it on drop).
pub(crate) struct DecapsKey {
    dk: MlkemDecaps,
    ek: EncapsKey,
}

impl DecapsKey {
    /// FIPS 203 `ML-KEM.KeyGen_internal(d, z)` with `seed` = d ‖ z.
    pub(crate) fn from_seed(level: Level, seed: &[u8; 64]) -> Result<Self, Error> {
        let (dk, ek) = MlkemDecaps::from_seed(level, seed)?;
        Ok(DecapsKey { dk, ek: EncapsKey { level, bytes: ek } })
    }

    pub(crate) fn encapsulation_key(&self) -> &EncapsKey {
        &self.ek
    }

    /// Decapsulates a ciphertext of the right length. Never fails otherwise: a foreign or
    /// tampered ciphertext yields a pseudorandom secret (implicit rejection).
    pub(crate) fn decapsulate(&self, ct: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
        if ct.len() != self.ek.level.ct_len() {
            return Err(Error::Crypto);
        }
        self.dk.decapsulate(ct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ml_kem::{Decapsulate, KeyExport};

    fn wycheproof(file: &str) -> serde_json::Value {
        let path = format!("{}/../../vectors/wycheproof/{file}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn h(t: &serde_json::Value, k: &str) -> Vec<u8> {
        hex::decode(t[k].as_str().unwrap_or("")).unwrap()
    }

    /// Wycheproof `MLKEMTest`: key generation from the 64-byte seed must give `ek`, and
    /// decapsulating `c` must give `K`. The invalid cases are wrong-length seeds or ciphertexts.
    fn keygen_decaps(level: Level, file: &str) {
        let json = wycheproof(file);
        let (mut valid, mut invalid) = (0, 0);
        for t in json["testGroups"].as_array().unwrap().iter().flat_map(|g| g["tests"].as_array().unwrap()) {
            let run = || -> Option<(Vec<u8>, Vec<u8>)> {
                let seed: [u8; 64] = h(t, "seed").try_into().ok()?;
                let dk = DecapsKey::from_seed(level, &seed).unwrap();
                let k = dk.decapsulate(&h(t, "c")).ok()?;
                Some((dk.encapsulation_key().bytes().to_vec(), k.to_vec()))
            };
            match (run(), t["result"].as_str().unwrap()) {
                (Some((ek, k)), "valid") => {
                    if t.get("ek").is_some() {
                        assert_eq!(ek, h(t, "ek"), "tcId {}", t["tcId"]);
                    }
                    assert_eq!(k, h(t, "K"), "tcId {}", t["tcId"]);
                    valid += 1;
                }
                (None, "invalid") => invalid += 1,
                (got, r) => panic!("tcId {}: expected {r}, got {:?}", t["tcId"], got.is_some()),
            }
        }
        println!("wycheproof {file}: {valid} valid matched, {invalid} invalid refused");
        assert!(valid > 0);
        assert_eq!(valid + invalid, json["numberOfTests"].as_u64().unwrap() as usize);
    }

    #[test]
    fn wycheproof_mlkem_768() {
        keygen_decaps(Level::L768, "mlkem_768_test.json");
    }

    #[test]
    fn wycheproof_mlkem_1024() {
        keygen_decaps(Level::L1024, "mlkem_1024_test.json");
    }

    /// Wycheproof `MLKEMEncapsTest` (ML-KEM-768): deterministic encapsulation with the given `m`
    /// must give `c` and `K`; keys not reduced mod q or of the wrong length are refused.
    #[test]
    fn wycheproof_mlkem_768_encaps() {
        let json = wycheproof("mlkem_768_encaps_test.json");
        let (mut valid, mut invalid) = (0, 0);
        for t in json["testGroups"].as_array().unwrap().iter().flat_map(|g| g["tests"].as_array().unwrap()) {
            match (EncapsKey::new(Level::L768, &h(t, "ek")), t["result"].as_str().unwrap()) {
                (Some(ek), "valid") => {
                    let m: [u8; 32] = h(t, "m").try_into().unwrap();
                    let (c, k) = ek.encapsulate_derand(&m).unwrap();
                    assert_eq!((c, k.to_vec()), (h(t, "c"), h(t, "K")), "tcId {}", t["tcId"]);
                    valid += 1;
                }
                (None, "invalid") => invalid += 1,
                (got, r) => panic!("tcId {}: expected {r}, parse ok = {}", t["tcId"], got.is_some()),
            }
        }
        println!("wycheproof mlkem_768_encaps_test.json: {valid} valid matched, {invalid} invalid refused");
        assert!(valid > 0 && invalid > 0);
        assert_eq!(valid + invalid, json["numberOfTests"].as_u64().unwrap() as usize);
    }

    /// The backend in use and RustCrypto's `ml-kem` (its own decapsulation, not the seam's)
    /// agree on random seeds and randomness, both ways.
    macro_rules! differential {
        ($name:ident, $level:expr, $m:ident) => {
            #[test]
            fn $name() {
                use ml_kem::$m::{Ciphertext, DecapsulationKey};
                let level = $level;
                for _ in 0..32 {
                    let seed: [u8; 64] = crate::recipient::primitives::random().unwrap();
                    let m: [u8; 32] = crate::recipient::primitives::random().unwrap();
                    let ours = DecapsKey::from_seed(level, &seed).unwrap();
                    let theirs = DecapsulationKey::from_seed(ml_kem::Seed::from(seed));
                    let their_ek = theirs.encapsulation_key();
                    assert_eq!(ours.encapsulation_key().bytes(), &their_ek.to_bytes()[..]);
                    let (c, k) = ours.encapsulation_key().encapsulate_derand(&m).unwrap();
                    let (c2, k2) = their_ek.encapsulate_deterministic(&ml_kem::B32::from(m));
                    assert_eq!((&c[..], &k[..]), (&c2[..], &k2[..]));
                    // A random (foreign) ciphertext: implicit rejection must agree too.
                    let mut junk = vec![0u8; level.ct_len()];
                    crate::rng::fill(&mut junk).unwrap();
                    let junk_rc = Ciphertext::try_from(&junk[..]).unwrap();
                    assert_eq!(&ours.decapsulate(&junk).unwrap()[..], &theirs.decapsulate(&junk_rc)[..]);
                    // Fresh randomness each time, and RustCrypto opens what the backend sealed.
                    let (c3, _) = ours.encapsulation_key().encapsulate().unwrap();
                    let (c4, k4) = ours.encapsulation_key().encapsulate().unwrap();
                    assert_ne!(c3, c4);
                    assert_eq!(&theirs.decapsulate(&Ciphertext::try_from(&c4[..]).unwrap())[..], &k4[..]);
                }
                assert!(ours_rejects_wrong_lengths(level));
            }
        };
    }

    differential!(agrees_with_rustcrypto_768, Level::L768, ml_kem_768);
    differential!(agrees_with_rustcrypto_1024, Level::L1024, ml_kem_1024);

    fn ours_rejects_wrong_lengths(level: Level) -> bool {
        let dk = DecapsKey::from_seed(level, &[7; 64]).unwrap();
        let short = vec![0u8; level.ct_len() - 1];
        dk.decapsulate(&short).is_err()
            && EncapsKey::new(level, &dk.encapsulation_key().bytes()[1..]).is_none()
    }
}
