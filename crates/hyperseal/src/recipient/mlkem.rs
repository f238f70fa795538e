//! ML-KEM (FIPS 203) as the hybrid and ML-KEM-1024 recipients use it: keys from their 64-byte
//! seeds with RustCrypto `ml-kem`, encapsulation and decapsulation in aws-lc.
//!
//! Why two libraries: RustCrypto `ml-kem` derives keys from seeds (FIPS 203
//! `ML-KEM.KeyGen_internal(d, z)`, the form age and hyperseal store), which aws-lc-rs cannot;
//! aws-lc is 7–8× faster at the per-file operations (ML-KEM-768 on the development machine,
//! one core: encapsulate 12 µs vs 89 µs, decapsulate 15 µs vs 122 µs; most of a 1 KiB hybrid
//! encrypt + decrypt). So an identity is expanded once by `ml-kem` into the FIPS 203 decapsulation
//! key bytes and loaded into aws-lc, and public keys are checked by `ml-kem` (the FIPS 203 §7.2
//! modulus check) when parsed.
//!
//! Encapsulation draws its 32 random bytes from the OS RNG ([`crate::rng`]) and hands them to
//! aws-lc's deterministic encapsulation (`EVP_PKEY_encapsulate_deterministic`), through
//! `aws-lc-sys`: aws-lc-rs's safe `encapsulate` would use aws-lc's DRBG, whose first use in a
//! process seeds itself from CPU jitter (~35 ms, measured). That call and the huge-page hint in
//! `mem.rs` are this crate's only unsafe code. Both paths are checked against Wycheproof and
//! against `ml-kem` on random inputs.

#![allow(unsafe_code)]

use aws_lc_rs::kem::{self, AlgorithmId};
use ml_kem::{KeyExport, TryKeyInit};
use zeroize::{Zeroize, Zeroizing};

use crate::Error;

/// The two parameter sets hyperseal uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// ML-KEM-768 (inside X-Wing).
    L768,
    /// ML-KEM-1024 (alone).
    L1024,
}

impl Level {
    pub(crate) const fn ek_len(self) -> usize {
        match self {
            Level::L768 => 1184,
            Level::L1024 => 1568,
        }
    }

    pub(crate) const fn ct_len(self) -> usize {
        match self {
            Level::L768 => 1088,
            Level::L1024 => 1568,
        }
    }

    fn algorithm(self) -> &'static kem::Algorithm<AlgorithmId> {
        match self {
            Level::L768 => &kem::ML_KEM_768,
            Level::L1024 => &kem::ML_KEM_1024,
        }
    }

    fn nid(self) -> i32 {
        match self {
            Level::L768 => aws_lc_sys::NID_MLKEM768,
            Level::L1024 => aws_lc_sys::NID_MLKEM1024,
        }
    }

    /// FIPS 203 §7.2 input check (length, and every coefficient reduced mod q).
    fn check_ek(self, bytes: &[u8]) -> bool {
        match self {
            Level::L768 => ml_kem::ml_kem_768::EncapsulationKey::new_from_slice(bytes).is_ok(),
            Level::L1024 => ml_kem::ml_kem_1024::EncapsulationKey::new_from_slice(bytes).is_ok(),
        }
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
        level.check_ek(bytes).then(|| EncapsKey { level, bytes: bytes.to_vec() })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Encapsulates with fresh randomness: (ciphertext, shared secret).
    pub(crate) fn encapsulate(&self) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
        let mut m = Zeroizing::new([0u8; 32]);
        crate::rng::fill(&mut m[..])?;
        self.encapsulate_derand(&m)
    }

    /// FIPS 203 `ML-KEM.Encaps_internal(ek, m)`. `m` must be fresh uniform randomness, used once.
    pub(crate) fn encapsulate_derand(&self, m: &[u8; 32]) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>), Error> {
        use aws_lc_sys::{
            EVP_PKEY_CTX_free, EVP_PKEY_CTX_new, EVP_PKEY_encapsulate_deterministic, EVP_PKEY_free,
            EVP_PKEY_kem_new_raw_public_key,
        };
        let mut ct = vec![0u8; self.level.ct_len()];
        let mut ss = Zeroizing::new([0u8; 32]);
        let (mut ct_len, mut ss_len, mut m_len) = (ct.len(), ss.len(), m.len());
        // SAFETY: every pointer passed is valid for the length passed with it (the key bytes,
        // and the output buffers sized for this level, whose lengths aws-lc checks and updates);
        // the key and the context are freed exactly once, on every path (the context holds its
        // own reference to the key, so freeing our reference first is allowed and frees nothing
        // early), and a null from either constructor is checked before use.
        let ok = unsafe {
            let pkey =
                EVP_PKEY_kem_new_raw_public_key(self.level.nid(), self.bytes.as_ptr(), self.bytes.len());
            if pkey.is_null() {
                return Err(Error::Crypto);
            }
            let ctx = EVP_PKEY_CTX_new(pkey, std::ptr::null_mut());
            EVP_PKEY_free(pkey);
            if ctx.is_null() {
                return Err(Error::Crypto);
            }
            let ok = EVP_PKEY_encapsulate_deterministic(
                ctx,
                ct.as_mut_ptr(),
                &mut ct_len,
                ss.as_mut_ptr(),
                &mut ss_len,
                m.as_ptr(),
                &mut m_len,
            );
            EVP_PKEY_CTX_free(ctx);
            ok
        };
        if ok != 1 || ct_len != ct.len() || ss_len != ss.len() {
            return Err(Error::Crypto);
        }
        Ok((ct, ss))
    }
}

/// A decapsulation key, expanded once from its seed. aws-lc frees (and zeroes) its copy on drop;
/// the expanded bytes we pass it are zeroized here.
pub(crate) struct DecapsKey {
    dk: kem::DecapsulationKey<AlgorithmId>,
    ek: EncapsKey,
}

impl DecapsKey {
    /// FIPS 203 `ML-KEM.KeyGen_internal(d, z)` with `seed` = d ‖ z.
    pub(crate) fn from_seed(level: Level, seed: &[u8; 64]) -> Result<Self, Error> {
        // The expanded form (FIPS 203 dk = dk_PKE ‖ ek ‖ H(ek) ‖ z) is exactly what aws-lc loads.
        macro_rules! expand {
            ($m:ident) => {{
                #[allow(deprecated)]
                use ml_kem::ExpandedKeyEncoding;
                let dk = ml_kem::$m::DecapsulationKey::from_seed(ml_kem::Seed::from(*seed));
                #[allow(deprecated)]
                let mut expanded = dk.to_expanded_bytes();
                let bytes = Zeroizing::new(expanded.to_vec());
                expanded.as_mut_slice().zeroize();
                (bytes, dk.encapsulation_key().to_bytes().to_vec())
            }};
        }
        let (expanded, ek) = match level {
            Level::L768 => expand!(ml_kem_768),
            Level::L1024 => expand!(ml_kem_1024),
        };
        let dk = kem::DecapsulationKey::new(level.algorithm(), &expanded).map_err(|_| Error::Crypto)?;
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
        let ss = self.dk.decapsulate(ct.into()).map_err(|_| Error::Crypto)?;
        let mut out = Zeroizing::new([0u8; 32]);
        out.copy_from_slice(ss.as_ref());
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ml_kem::Decapsulate;

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

    /// aws-lc and RustCrypto agree on random seeds and randomness, both ways.
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
                    // Fresh randomness each time, and RustCrypto opens what aws-lc sealed.
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
