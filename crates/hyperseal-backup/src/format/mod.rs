//! The codecs: bytes in, structs out, every count and length checked against a bound before
//! anything is allocated. docs/BACKUP.md is the normative description.

pub mod config;
pub mod snapshot;
pub mod table;

/// Most bytes of a snapshot's plaintext (its JSON).
pub const MAX_SNAPSHOT: u64 = 256 << 20;
/// Most bytes of an index's or id list's plaintext.
pub const MAX_TABLE: u64 = 64 << 20;
/// Most bytes of the config's plaintext.
pub const MAX_CONFIG: u64 = 64 << 10;
/// Most bytes of a run mark or lock.
pub const MAX_MARK: u64 = 4 << 10;
/// The chunker's largest chunk: the most any chunk decompresses to.
pub const MAX_CHUNK: usize = 8 << 20;
/// The most a stored (compressed) chunk may take: zstd's bound for `MAX_CHUNK` bytes that do
/// not compress (`n + n/256` and a little), rounded up, so that a table cannot make a reader
/// allocate gigabytes for one chunk.
pub const MAX_STORED: usize = MAX_CHUNK + (MAX_CHUNK >> 7);
