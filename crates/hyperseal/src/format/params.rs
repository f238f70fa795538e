//! The header's parameters as plain values: the payload suite, the chunk size and the profile.
//! Pure data, so the codec can name them; keying a suite lives in `suite/`, deriving keys in
//! `keys.rs`.

use crate::error::Error;

/// Smallest selectable chunk size (16 KiB).
pub const MIN_CHUNK: usize = 16 << 10;
/// Largest selectable chunk size (16 MiB).
pub const MAX_CHUNK: usize = 16 << 20;
/// Default chunk size (64 KiB, as age).
pub const DEFAULT_CHUNK: usize = 64 << 10;

/// Checks that a chunk size is a power of two in [`MIN_CHUNK`, `MAX_CHUNK`].
pub fn check_chunk_size(n: usize) -> Result<(), Error> {
    if n.is_power_of_two() && (MIN_CHUNK..=MAX_CHUNK).contains(&n) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!("chunk size {n} must be a power of two from 16 KiB to 16 MiB")))
    }
}

/// Which header dialect a file uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `hyperseal/v1`: any suite and chunk size, 256-bit file keys.
    Hyperseal,
    /// `age-encryption.org/v1`: ChaCha20-Poly1305, 64 KiB chunks, 128-bit file keys.
    Age,
}

/// Version line of the hyperseal profile.
pub const HYPERSEAL_V1: &str = "hyperseal/v1";
/// Version line of the age profile.
pub const AGE_V1: &str = "age-encryption.org/v1";

impl Profile {
    /// The version line.
    pub fn version_line(self) -> &'static str {
        match self {
            Profile::Hyperseal => HYPERSEAL_V1,
            Profile::Age => AGE_V1,
        }
    }

    /// File key bytes.
    pub fn file_key_len(self) -> usize {
        match self {
            Profile::Hyperseal => 32,
            Profile::Age => 16,
        }
    }
}

/// An AEAD suite for the payload, as named in the header and bound into the payload key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Suite {
    /// AES-256-GCM (aws-lc-rs or ring, whichever is faster on the CPU). The default on CPUs with
    /// AES instructions.
    Aes256Gcm,
    /// ChaCha20-Poly1305 (aws-lc-rs). The default elsewhere, and age's payload cipher.
    ChaCha20Poly1305,
    /// SM4-GCM (GB/T 32907 block cipher in GCM), on the project's SIMD SM4 (`sm4-simd`) with
    /// GHASH on carry-less multiply. Keyed with the first 16 bytes of the payload key.
    Sm4Gcm,
}

impl Suite {
    /// Every suite, in documentation order.
    pub const ALL: [Suite; 3] = [Suite::Aes256Gcm, Suite::ChaCha20Poly1305, Suite::Sm4Gcm];

    /// The name used in headers and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Aes256Gcm => "aes-256-gcm",
            Suite::ChaCha20Poly1305 => "chacha20-poly1305",
            Suite::Sm4Gcm => "sm4-gcm",
        }
    }

    /// Parses a header or CLI name.
    pub fn from_name(s: &str) -> Option<Suite> {
        Suite::ALL.into_iter().find(|x| x.name() == s)
    }

    /// AES-256-GCM where the CPU has AES and carry-less multiply instructions (where it is
    /// several times faster than ChaCha20-Poly1305), ChaCha20-Poly1305 elsewhere.
    pub fn default_for_cpu() -> Suite {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("pclmulqdq")
            {
                return Suite::Aes256Gcm;
            }
            Suite::ChaCha20Poly1305
        }
        #[cfg(target_arch = "aarch64")]
        {
            if std::arch::is_aarch64_feature_detected!("aes")
                && std::arch::is_aarch64_feature_detected!("pmull")
            {
                return Suite::Aes256Gcm;
            }
            Suite::ChaCha20Poly1305
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        Suite::ChaCha20Poly1305
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes() {
        assert!(check_chunk_size(64 << 10).is_ok());
        assert!(check_chunk_size(16 << 10).is_ok());
        assert!(check_chunk_size(16 << 20).is_ok());
        for bad in [0, 1000, 8 << 10, 32 << 20, (64 << 10) + 1] {
            assert!(check_chunk_size(bad).is_err());
        }
    }

    #[test]
    fn suite_names_round_trip() {
        for s in Suite::ALL {
            assert_eq!(Suite::from_name(s.name()), Some(s));
        }
        assert_eq!(Suite::from_name("aes-128-gcm"), None);
    }
}
