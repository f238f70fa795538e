//! Key derivation: password hashing (PBKDF2, Argon2id, scrypt) and HKDF.
//!
//! PBKDF2 and HKDF run on aws-lc-rs; Argon2id and scrypt on RustCrypto (aws-lc-rs has
//! neither). Parameters have OWASP-2025-level defaults and hard caps: the caps exist
//! because these parameters often arrive from files or the command line, and an attacker
//! who can choose `m_cost = 2^32` or `iterations = 2^32` gets a free denial of service.
//!
//! Salts are always supplied by the caller (16 random bytes is the norm) and must be at
//! least [`MIN_SALT_LEN`] bytes for password KDFs; nothing here derives a salt from the
//! password, which would make equal passwords yield equal keys.

mod cache;

pub use cache::DerivationCache;

use std::num::NonZeroU32;

use crate::backend::{hkdf, pbkdf2};
use zeroize::Zeroizing;

use crate::{Error, Result};

/// Shortest salt accepted by the password KDFs.
pub const MIN_SALT_LEN: usize = 8;
/// Longest derived output accepted by any KDF here.
pub const MAX_OUTPUT_LEN: usize = 1024;

/// Hash underlying PBKDF2 or HKDF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashFn {
    /// SHA-256.
    Sha256,
    /// SHA-512.
    Sha512,
}

/// PBKDF2-HMAC parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pbkdf2Params {
    /// Underlying hash.
    pub hash: HashFn,
    /// Iteration count, 1 ..= [`Pbkdf2Params::MAX_ITERATIONS`].
    pub iterations: u32,
}

impl Pbkdf2Params {
    /// Upper bound on iterations (a few seconds on one core).
    pub const MAX_ITERATIONS: u32 = 10_000_000;
}

impl Default for Pbkdf2Params {
    /// OWASP's 2023+ figure for PBKDF2-HMAC-SHA-256.
    fn default() -> Self {
        Pbkdf2Params { hash: HashFn::Sha256, iterations: 600_000 }
    }
}

/// Argon2id parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Argon2Params {
    /// Memory in KiB, 8 ..= [`Argon2Params::MAX_M_COST_KIB`].
    pub m_cost_kib: u32,
    /// Passes, 1 ..= [`Argon2Params::MAX_T_COST`].
    pub t_cost: u32,
    /// Lanes, 1 ..= [`Argon2Params::MAX_P_COST`].
    pub p_cost: u32,
}

impl Argon2Params {
    /// 4 GiB.
    pub const MAX_M_COST_KIB: u32 = 4 * 1024 * 1024;
    /// Upper bound on passes.
    pub const MAX_T_COST: u32 = 64;
    /// Upper bound on lanes.
    pub const MAX_P_COST: u32 = 64;
}

impl Default for Argon2Params {
    /// RFC 9106's second recommended option scaled to OWASP's minimum: 19 MiB, 2 passes.
    fn default() -> Self {
        Argon2Params { m_cost_kib: 19 * 1024, t_cost: 2, p_cost: 1 }
    }
}

/// scrypt parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScryptParams {
    /// log2(N), 1 ..= [`ScryptParams::MAX_LOG_N`].
    pub log_n: u8,
    /// Block size r.
    pub r: u32,
    /// Parallelism p.
    pub p: u32,
}

impl ScryptParams {
    /// N = 2^22 with r = 8 is 4 GiB of memory.
    pub const MAX_LOG_N: u8 = 22;
    /// Upper bound on memory, 128·r·N bytes.
    pub const MAX_MEMORY: u64 = 4 << 30;
}

impl Default for ScryptParams {
    /// N = 2^17, r = 8, p = 1 (128 MiB; OWASP's first scrypt option).
    fn default() -> Self {
        ScryptParams { log_n: 17, r: 8, p: 1 }
    }
}

/// A password-based KDF with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PasswordKdf {
    /// PBKDF2-HMAC.
    Pbkdf2(Pbkdf2Params),
    /// Argon2id v1.3.
    Argon2id(Argon2Params),
    /// scrypt.
    Scrypt(ScryptParams),
}

impl PasswordKdf {
    /// Short name, e.g. `argon2id`.
    pub fn name(&self) -> &'static str {
        match self {
            PasswordKdf::Pbkdf2(p) if p.hash == HashFn::Sha512 => "pbkdf2-sha512",
            PasswordKdf::Pbkdf2(_) => "pbkdf2-sha256",
            PasswordKdf::Argon2id(_) => "argon2id",
            PasswordKdf::Scrypt(_) => "scrypt",
        }
    }

    /// Checks the parameters against the caps.
    pub fn validate(&self) -> Result<()> {
        match *self {
            PasswordKdf::Pbkdf2(p) => {
                if p.iterations == 0 || p.iterations > Pbkdf2Params::MAX_ITERATIONS {
                    return Err(Error::param(format!(
                        "pbkdf2 iterations must be 1..={}",
                        Pbkdf2Params::MAX_ITERATIONS
                    )));
                }
            }
            PasswordKdf::Argon2id(p) => {
                if !(8..=Argon2Params::MAX_M_COST_KIB).contains(&p.m_cost_kib)
                    || !(1..=Argon2Params::MAX_T_COST).contains(&p.t_cost)
                    || !(1..=Argon2Params::MAX_P_COST).contains(&p.p_cost)
                    || p.m_cost_kib < 8 * p.p_cost
                {
                    return Err(Error::param("argon2id parameters out of range"));
                }
            }
            PasswordKdf::Scrypt(p) => {
                let mem = 128u64 * u64::from(p.r) * (1u64 << p.log_n.min(63)) * u64::from(p.p.max(1));
                if p.log_n == 0
                    || p.log_n > ScryptParams::MAX_LOG_N
                    || p.r == 0
                    || p.p == 0
                    || mem > ScryptParams::MAX_MEMORY
                {
                    return Err(Error::param("scrypt parameters out of range"));
                }
            }
        }
        Ok(())
    }

    /// Derives `out_len` bytes from `password` and `salt`.
    pub fn derive(&self, password: &[u8], salt: &[u8], out_len: usize) -> Result<Zeroizing<Vec<u8>>> {
        if salt.len() < MIN_SALT_LEN {
            return Err(Error::InvalidLength("salt must be at least 8 bytes"));
        }
        let mut out = Zeroizing::new(vec![0u8; out_len]);
        self.derive_into(password, salt, &mut out)?;
        Ok(out)
    }

    /// Like [`PasswordKdf::derive`] but without the salt-length floor, for standard
    /// test vectors that use short salts. Prefer `derive`.
    pub fn derive_into(&self, password: &[u8], salt: &[u8], out: &mut [u8]) -> Result<()> {
        self.validate()?;
        if out.is_empty() || out.len() > MAX_OUTPUT_LEN {
            return Err(Error::InvalidLength("output must be 1..=1024 bytes"));
        }
        match *self {
            PasswordKdf::Pbkdf2(p) => {
                let alg = match p.hash {
                    HashFn::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
                    HashFn::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
                };
                let iterations = NonZeroU32::new(p.iterations).expect("validated non-zero");
                pbkdf2::derive(alg, iterations, salt, password, out);
            }
            PasswordKdf::Argon2id(p) => {
                let params = argon2::Params::new(p.m_cost_kib, p.t_cost, p.p_cost, Some(out.len()))
                    .map_err(Error::param)?;
                argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
                    .hash_password_into(password, salt, out)
                    .map_err(Error::param)?;
            }
            PasswordKdf::Scrypt(p) => {
                let params = scrypt::Params::new(p.log_n, p.r, p.p).map_err(Error::param)?;
                scrypt::scrypt(password, salt, &params, out).map_err(Error::param)?;
            }
        }
        Ok(())
    }
}

/// HKDF (RFC 5869) extract-and-expand. `salt` may be empty; `out_len` ≤ 255·hash length.
pub fn hkdf(
    hash: HashFn,
    ikm: &[u8],
    salt: &[u8],
    info: &[u8],
    out_len: usize,
) -> Result<Zeroizing<Vec<u8>>> {
    let (alg, hlen) = match hash {
        HashFn::Sha256 => (hkdf::HKDF_SHA256, 32),
        HashFn::Sha512 => (hkdf::HKDF_SHA512, 64),
    };
    if out_len == 0 || out_len > 255 * hlen {
        return Err(Error::InvalidLength("hkdf output must be 1..=255*HashLen bytes"));
    }
    struct Len(usize);
    impl hkdf::KeyType for Len {
        fn len(&self) -> usize {
            self.0
        }
    }
    let mut out = Zeroizing::new(vec![0u8; out_len]);
    let info = [info];
    hkdf::Salt::new(alg, salt).extract(ikm).expand(&info, Len(out_len))?.fill(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_and_salt_floor() {
        let p = PasswordKdf::Pbkdf2(Pbkdf2Params { hash: HashFn::Sha256, iterations: 0 });
        assert!(p.derive(b"pw", b"saltsalt", 32).is_err());
        let p = PasswordKdf::Pbkdf2(Pbkdf2Params { hash: HashFn::Sha256, iterations: 1 });
        assert!(p.derive(b"pw", b"short", 32).is_err());
        let s = PasswordKdf::Scrypt(ScryptParams { log_n: 30, r: 8, p: 1 });
        assert!(s.validate().is_err());
        let a = PasswordKdf::Argon2id(Argon2Params { m_cost_kib: u32::MAX, t_cost: 1, p_cost: 1 });
        assert!(a.validate().is_err());
    }

    #[test]
    fn rfc7914_scrypt_and_rfc9106_shape() {
        // RFC 7914 §12, second vector.
        let s = PasswordKdf::Scrypt(ScryptParams { log_n: 10, r: 8, p: 16 });
        let mut out = [0u8; 64];
        s.derive_into(b"password", b"NaCl", &mut out).unwrap();
        assert_eq!(
            hex::encode(out),
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        );
        let a = PasswordKdf::Argon2id(Argon2Params { m_cost_kib: 64, t_cost: 1, p_cost: 1 });
        assert_eq!(a.derive(b"pw", b"saltsaltsalt", 32).unwrap().len(), 32);
    }

    #[test]
    fn hkdf_rfc5869_case1() {
        let ikm = [0x0bu8; 22];
        let salt = hex::decode("000102030405060708090a0b0c").unwrap();
        let info = hex::decode("f0f1f2f3f4f5f6f7f8f9").unwrap();
        let okm = hkdf(HashFn::Sha256, &ikm, &salt, &info, 42).unwrap();
        assert_eq!(
            hex::encode(&*okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        );
    }
}
