//! The per-file symmetric key that every recipient stanza wraps.

use zeroize::{Zeroize, ZeroizeOnDrop};

/// A random 128-bit (age profile) or 256-bit (hyperseal profile) file key.
///
/// Zeroized on drop; `Debug` never shows the bytes.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct FileKey {
    bytes: [u8; 32],
    len: u8,
}

impl FileKey {
    /// Draws a fresh key of `len` bytes (16 or 32) from the system CSPRNG.
    pub fn generate(len: usize) -> Self {
        assert!(len == 16 || len == 32, "file keys are 16 or 32 bytes");
        let mut bytes = [0u8; 32];
        aws_lc_rs::rand::fill(&mut bytes[..len]).expect("system RNG failed");
        FileKey { bytes, len: len as u8 }
    }

    /// Wraps existing key material (as unwrapped from a stanza). `None` unless 16 or 32 bytes.
    pub fn from_slice(b: &[u8]) -> Option<Self> {
        if b.len() != 16 && b.len() != 32 {
            return None;
        }
        let mut bytes = [0u8; 32];
        bytes[..b.len()].copy_from_slice(b);
        Some(FileKey { bytes, len: b.len() as u8 })
    }

    /// The key bytes.
    pub fn expose(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl std::fmt::Debug for FileKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileKey({} bits, redacted)", self.len as usize * 8)
    }
}
