//! Message digests.
//!
//! SHA-2, SHA-3 and (legacy) SHA-1 come from aws-lc-rs (RustCrypto on wasm32); BLAKE2b-512, SM3 and (legacy) MD5
//! from RustCrypto because aws-lc-rs has none of them; BLAKE3 from the official crate, whose
//! SIMD and tree structure (hashed on all cores, `blake3_file.rs`) make it the fastest choice for
//! whole files.
//!
//! MD5 and SHA-1 are broken for collision resistance. They exist only so that hyperseal can
//! check old checksum lists, and they are reachable only under the explicit names
//! `legacy-md5` and `legacy-sha1` (enum variants [`Algorithm::LegacyMd5`] and
//! [`Algorithm::LegacySha1`]): nobody should pick them by accident.

#[cfg(not(target_arch = "wasm32"))]
use std::fs::File;
use std::io::Read;
#[cfg(not(target_arch = "wasm32"))]
use std::path::Path;

use crate::backend::digest;
use blake2::Digest as _;

use crate::{Error, Result};

/// Files larger than this are hashed with BLAKE3 on all cores, in 1 MiB subtrees.
///
/// Below it the thread hand-off costs more than it saves (BLAKE3's own docs put the
/// break-even near 128 KiB), and a file of one piece has nothing to split.
pub const BLAKE3_PARALLEL_THRESHOLD: u64 = (1 << 20) + 1;

/// A digest algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// SHA-256 (aws-lc-rs).
    Sha256,
    /// SHA-384 (aws-lc-rs).
    Sha384,
    /// SHA-512 (aws-lc-rs).
    Sha512,
    /// SHA3-256 (aws-lc-rs).
    Sha3_256,
    /// SHA3-512 (aws-lc-rs).
    Sha3_512,
    /// BLAKE2b with 512-bit output, as printed by `b2sum` (RustCrypto).
    Blake2b512,
    /// BLAKE3 with 256-bit output (official crate).
    Blake3,
    /// SM3, the Chinese national standard hash (RustCrypto).
    Sm3,
    /// **Legacy, collision-broken.** MD5, only for checking old checksums.
    LegacyMd5,
    /// **Legacy, collision-broken.** SHA-1, only for checking old checksums.
    LegacySha1,
}

const NAMES: &str =
    "sha256, sha384, sha512, sha3-256, sha3-512, blake2b512, blake3, sm3, legacy-md5, legacy-sha1";

impl Algorithm {
    /// Every algorithm, in display order.
    pub const ALL: [Algorithm; 10] = [
        Algorithm::Sha256,
        Algorithm::Sha384,
        Algorithm::Sha512,
        Algorithm::Sha3_256,
        Algorithm::Sha3_512,
        Algorithm::Blake2b512,
        Algorithm::Blake3,
        Algorithm::Sm3,
        Algorithm::LegacyMd5,
        Algorithm::LegacySha1,
    ];

    /// The canonical name (what [`Algorithm::parse`] accepts).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha384 => "sha384",
            Algorithm::Sha512 => "sha512",
            Algorithm::Sha3_256 => "sha3-256",
            Algorithm::Sha3_512 => "sha3-512",
            Algorithm::Blake2b512 => "blake2b512",
            Algorithm::Blake3 => "blake3",
            Algorithm::Sm3 => "sm3",
            Algorithm::LegacyMd5 => "legacy-md5",
            Algorithm::LegacySha1 => "legacy-sha1",
        }
    }

    /// Parses a name. Bare `md5`/`sha1` are refused on purpose: use `legacy-md5`/`legacy-sha1`.
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "sha256" | "sha-256" => Algorithm::Sha256,
            "sha384" | "sha-384" => Algorithm::Sha384,
            "sha512" | "sha-512" => Algorithm::Sha512,
            "sha3-256" | "sha3_256" => Algorithm::Sha3_256,
            "sha3-512" | "sha3_512" => Algorithm::Sha3_512,
            "blake2b512" | "blake2b" | "blake2b-512" => Algorithm::Blake2b512,
            "blake3" => Algorithm::Blake3,
            "sm3" => Algorithm::Sm3,
            "legacy-md5" => Algorithm::LegacyMd5,
            "legacy-sha1" => Algorithm::LegacySha1,
            _ => return Err(Error::unknown(name, NAMES)),
        })
    }

    /// The tag of a BSD-style (`--tag`) checksum line, as coreutils writes it (`SHA256`,
    /// `BLAKE2b`, `SHA3-256`, `SM3`, `MD5`, …).
    pub fn tag(self) -> &'static str {
        match self {
            Algorithm::Sha256 => "SHA256",
            Algorithm::Sha384 => "SHA384",
            Algorithm::Sha512 => "SHA512",
            Algorithm::Sha3_256 => "SHA3-256",
            Algorithm::Sha3_512 => "SHA3-512",
            Algorithm::Blake2b512 => "BLAKE2b",
            Algorithm::Blake3 => "BLAKE3",
            Algorithm::Sm3 => "SM3",
            Algorithm::LegacyMd5 => "MD5",
            Algorithm::LegacySha1 => "SHA1",
        }
    }

    /// Output length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            Algorithm::LegacyMd5 => 16,
            Algorithm::LegacySha1 => 20,
            Algorithm::Sha256 | Algorithm::Sha3_256 | Algorithm::Blake3 | Algorithm::Sm3 => 32,
            Algorithm::Sha384 => 48,
            Algorithm::Sha512 | Algorithm::Sha3_512 | Algorithm::Blake2b512 => 64,
        }
    }

    /// Whether the algorithm is collision-broken and kept only for compatibility.
    pub fn is_legacy(self) -> bool {
        matches!(self, Algorithm::LegacyMd5 | Algorithm::LegacySha1)
    }

    fn aws(self) -> Option<&'static digest::Algorithm> {
        Some(match self {
            Algorithm::Sha256 => &digest::SHA256,
            Algorithm::Sha384 => &digest::SHA384,
            Algorithm::Sha512 => &digest::SHA512,
            Algorithm::Sha3_256 => &digest::SHA3_256,
            Algorithm::Sha3_512 => &digest::SHA3_512,
            Algorithm::LegacySha1 => &digest::SHA1_FOR_LEGACY_USE_ONLY,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Algorithm::parse(s)
    }
}

enum State {
    Aws(digest::Context),
    // Boxed: these states are a few hundred bytes to ~2 KiB and would bloat every `Hasher`.
    Blake2b(Box<blake2::Blake2b512>),
    Blake3(Box<blake3::Hasher>),
    Sm3(Box<sm3::Sm3>),
    Md5(Box<md5::Md5>),
}

/// A streaming hasher: `new`, any number of `update`s, then `finalize`.
pub struct Hasher {
    algorithm: Algorithm,
    state: State,
}

impl std::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hasher").field("algorithm", &self.algorithm).finish_non_exhaustive()
    }
}

impl Hasher {
    /// Starts a new hash computation.
    pub fn new(algorithm: Algorithm) -> Self {
        let state = match algorithm.aws() {
            Some(alg) => State::Aws(digest::Context::new(alg)),
            None => match algorithm {
                Algorithm::Blake2b512 => State::Blake2b(Box::default()),
                Algorithm::Blake3 => State::Blake3(Box::default()),
                Algorithm::Sm3 => State::Sm3(Box::default()),
                Algorithm::LegacyMd5 => State::Md5(Box::default()),
                _ => unreachable!("every non-aws-lc algorithm is listed"),
            },
        };
        Hasher { algorithm, state }
    }

    /// The algorithm being computed.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Absorbs more input.
    pub fn update(&mut self, data: &[u8]) {
        match &mut self.state {
            State::Aws(c) => c.update(data),
            State::Blake2b(h) => h.update(data),
            State::Blake3(h) => {
                h.update(data);
            }
            State::Sm3(h) => h.update(data),
            State::Md5(h) => h.update(data),
        }
    }

    /// Absorbs everything a reader yields.
    pub fn update_reader(&mut self, mut reader: impl Read) -> Result<()> {
        if let State::Blake3(h) = &mut self.state {
            h.update_reader(reader)?;
            return Ok(());
        }
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => self.update(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Finishes and returns the digest.
    pub fn finalize(self) -> Vec<u8> {
        match self.state {
            State::Aws(c) => c.finish().as_ref().to_vec(),
            State::Blake2b(h) => h.finalize().to_vec(),
            State::Blake3(h) => h.finalize().as_bytes().to_vec(),
            State::Sm3(h) => h.finalize().to_vec(),
            State::Md5(h) => h.finalize().to_vec(),
        }
    }
}

/// Hashes a byte string in one call.
pub fn hash(algorithm: Algorithm, data: &[u8]) -> Vec<u8> {
    if let Some(alg) = algorithm.aws() {
        // aws-lc-rs one-shot: no streaming context to set up and copy.
        return digest::digest(alg, data).as_ref().to_vec();
    }
    let mut h = Hasher::new(algorithm);
    h.update(data);
    h.finalize()
}

/// Hashes everything a reader yields.
pub fn hash_reader(algorithm: Algorithm, reader: impl Read) -> Result<Vec<u8>> {
    let mut h = Hasher::new(algorithm);
    h.update_reader(reader)?;
    Ok(h.finalize())
}

/// Hashes a file (native only: files and threads).
///
/// For BLAKE3 and files of at least [`BLAKE3_PARALLEL_THRESHOLD`] bytes the file is hashed in
/// 1 MiB subtrees on all cores (`blake3_file.rs`); everything else streams in 64 KiB reads.
#[cfg(not(target_arch = "wasm32"))]
pub fn hash_file(algorithm: Algorithm, path: impl AsRef<Path>) -> Result<Vec<u8>> {
    let file = File::open(path.as_ref())?;
    if algorithm == Algorithm::Blake3 {
        let meta = file.metadata()?;
        if meta.is_file() && meta.len() >= BLAKE3_PARALLEL_THRESHOLD {
            return Ok(crate::blake3_file::hash(&file, meta.len())?.to_vec());
        }
    }
    hash_reader(algorithm, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_legacy_needs_prefix() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::parse(a.name()).unwrap(), a);
            assert_eq!(hash(a, b"abc").len(), a.output_len());
        }
        assert!(Algorithm::parse("md5").is_err());
        assert!(Algorithm::parse("sha1").is_err());
    }

    #[test]
    fn streaming_equals_one_shot() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for a in Algorithm::ALL {
            let mut h = Hasher::new(a);
            for chunk in data.chunks(777) {
                h.update(chunk);
            }
            assert_eq!(h.finalize(), hash(a, &data), "{a}");
        }
    }

    #[test]
    fn known_answers() {
        let hx = |a, m: &[u8]| hex::encode(hash(a, m));
        assert_eq!(
            hx(Algorithm::Sha256, b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hx(Algorithm::Sm3, b"abc"),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
        );
        assert_eq!(hx(Algorithm::LegacyMd5, b""), "d41d8cd98f00b204e9800998ecf8427e");
    }
}
