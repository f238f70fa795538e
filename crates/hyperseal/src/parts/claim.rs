//! Claims: every part of a file sealed at most once per key, whatever drives the workers.
//!
//! A part's chunks always get the same nonces, so a driver that seals a part twice — a task
//! rerun after its worker died, a second job handed the same key — must seal the same bytes both
//! times, or one key and nonce seal two plaintexts (C1 ⊕ C2 = P1 ⊕ P2; with GCM the
//! authentication key leaks too). A driver cannot see that from outside: the source may change
//! without any visible stamp change. So the library makes sealing go through a *claim store*
//! the driver provides — something that can create a small record under a name only if the name
//! is new (`O_CREAT | O_EXCL` on a filesystem, `If-None-Match: *` on an object store):
//!
//! 1. **The plan** (`plan`): a record of the part size. Parts of one plan never overlap; a
//!    second plan with another part size would put other bytes under the same nonces, so every
//!    claimed seal first stores the plan's record or finds the same one there.
//! 2. **The part** (`part-<first chunk>`): sealed into memory the caller owns, then a record of
//!    exactly what was sealed is stored *before* the sealed bytes are returned — before they can
//!    reach storage. A record already there must be the same one: the same bytes sealed again
//!    (the same ciphertext) pass; other bytes are refused, and the output is wiped.
//!
//! **What a record is.** `HMAC-SHA256(K_claim, layout ‖ part size ‖ first chunk ‖ length ‖ the
//! part's AEAD tags)` with `K_claim = HKDF-SHA256(payload key, "hyperseal/v1 part claim")`: a
//! key used for nothing else, so a record reveals nothing about the plaintext (a PRF output; it
//! differs between files of the same bytes) and nobody without the payload key can make one
//! that matches. It is taken from the *sealed output*, not read again from the input, so there
//! is no window in which the input can change between what was hashed and what was sealed (a
//! memory-mapped source being rewritten under the cipher included). The tags stand for the whole
//! part: under one key and nonce, every suite's tag is a Carter–Wegman MAC of the ciphertext
//! (GHASH for AES-GCM and SM4-GCM, Poly1305 for ChaCha20) masked by a value fixed by the nonce,
//! so two different ciphertexts of one length share a tag with probability at most
//! ⌈len/16⌉ / 2^106 — and equal ciphertexts under one nonce are equal plaintexts. Hashing 16
//! bytes per chunk instead of the whole part keeps the claim's cost near zero.
//!
//! **What it does not cover.** The store is the driver's: claims protect exactly as well as its
//! "create only if new" is atomic, and records must outlive every worker that holds the key
//! (delete them only once the job has ended and the key is gone). A holder of the key can seal
//! anything without asking the store; claims stop mistakes and retries, not the key's holder.

use super::PartKey;
use crate::error::Error;
use crate::format::TAG_LEN;

mod memory;
pub use memory::MemoryClaims;

/// HKDF info of the key that makes claim records.
const CLAIM_INFO: &[u8] = b"hyperseal/v1 part claim";

/// The store of a job's claims: one small record per name, created at most once.
pub trait ClaimStore {
    /// Stores `record` under `name` only if nothing is stored under that name yet, atomically
    /// (two callers racing for one name: exactly one stores). Returns `None` when this call
    /// stored it, or the record already there.
    fn put_new(&self, name: &str, record: &[u8]) -> Result<Option<Vec<u8>>, Error>;
}

/// A claim: the name it is stored under and its record (not secret: see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    name: String,
    record: [u8; 32],
    what: What,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    Plan(u64),
    Part(u64),
}

impl Claim {
    /// The name to store the record under (`plan`, `part-<first chunk, 20 digits>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The record.
    pub fn record(&self) -> &[u8] {
        &self.record
    }

    /// Compares with the record `existing` already stored under this claim's name (in constant
    /// time): the same record passes, any other is refused — sealing would reuse a nonce.
    pub fn check(&self, existing: &[u8]) -> Result<(), Error> {
        use subtle::ConstantTimeEq;
        if existing.len() == self.record.len() && bool::from(existing.ct_eq(&self.record)) {
            return Ok(());
        }
        Err(Error::InvalidArgument(match self.what {
            What::Plan(size) => format!(
                "this part key was already used with another part size than {size}: sealing would reuse nonces (nothing was sealed; start over with a fresh key)"
            ),
            What::Part(first) => format!(
                "the part at chunk {first} was already sealed with other bytes: sealing it again would reuse a nonce (the source changed during the job; nothing was released; start over with a fresh key)"
            ),
        }))
    }

    /// Stores this claim in `store`, or checks it against the record already there.
    pub fn settle(&self, store: &dyn ClaimStore) -> Result<(), Error> {
        match store.put_new(&self.name, &self.record)? {
            None => Ok(()),
            Some(existing) => self.check(&existing),
        }
    }
}

impl PartKey {
    /// The claim of the plan of `part_size` plaintext bytes per part (see the module docs).
    pub fn plan_claim(&self, part_size: u64) -> Result<Claim, Error> {
        self.plan_geometry(part_size)?;
        let record = self.claim_record(&[b"plan", &part_size.to_be_bytes()]);
        Ok(Claim { name: "plan".into(), record, what: What::Plan(part_size) })
    }

    /// The claim of the sealed part `sealed` at chunk `first_chunk` of the plan of `part_size`
    /// bytes per part: a record of exactly those bytes. For drivers that run the cipher
    /// themselves ([`chunk_calls`](Self::chunk_calls)): settle it before the sealed bytes leave
    /// memory you own. Others call [`seal_claimed`](Self::seal_claimed), which does all of it.
    pub fn part_claim(&self, part_size: u64, first_chunk: u64, sealed: &[u8]) -> Result<Claim, Error> {
        let len = self.part_of_plan(part_size, first_chunk)?;
        if self.sealed_len(first_chunk, len)? != sealed.len() {
            return Err(Error::InvalidArgument(format!(
                "{} sealed bytes are not the part at chunk {first_chunk} of this plan",
                sealed.len()
            )));
        }
        let full = self.cipher.full();
        let (first, size, count) =
            (first_chunk.to_be_bytes(), part_size.to_be_bytes(), (len as u64).to_be_bytes());
        let mut parts: Vec<&[u8]> = vec![b"part", &size, &first, &count];
        // Every chunk ends with its tag (the final one may be a tag alone).
        parts.extend(sealed.chunks(full).map(|c| &c[c.len() - TAG_LEN..]));
        let record = self.claim_record(&parts);
        Ok(Claim { name: format!("part-{first_chunk:020}"), record, what: What::Part(first_chunk) })
    }

    /// Seals the part at chunk `first_chunk` of the plan of `part_size` bytes per part, claiming
    /// the plan and the part in `store` first (see the module docs). Returns the sealed part;
    /// refuses — sealing nothing, or wiping what it sealed — when the store says this key's
    /// nonces already sealed other bytes.
    pub fn seal_claimed(
        &self,
        store: &dyn ClaimStore,
        part_size: u64,
        first_chunk: u64,
        plaintext: &[u8],
    ) -> Result<Vec<u8>, Error> {
        let mut out = vec![0u8; self.sealed_len(first_chunk, plaintext.len())?];
        self.seal_claimed_into(store, part_size, first_chunk, plaintext, &mut out)?;
        Ok(out)
    }

    /// [`seal_claimed`](Self::seal_claimed) into `out`
    /// ([`sealed_len`](Self::sealed_len) bytes). `out` must be memory the caller owns, not a
    /// mapping of a file others can read: until this returns `Ok` it may hold bytes that must
    /// never be stored (they are wiped on error).
    pub fn seal_claimed_into(
        &self,
        store: &dyn ClaimStore,
        part_size: u64,
        first_chunk: u64,
        plaintext: &[u8],
        out: &mut [u8],
    ) -> Result<(), Error> {
        if self.part_of_plan(part_size, first_chunk)? != plaintext.len() {
            return Err(Error::InvalidArgument(format!(
                "{} bytes are not the part at chunk {first_chunk} of a plan of {part_size}-byte parts",
                plaintext.len()
            )));
        }
        self.plan_claim(part_size)?.settle(store)?;
        self.seal_into(first_chunk, plaintext, out)?;
        let settled = self.part_claim(part_size, first_chunk, out).and_then(|c| c.settle(store));
        if settled.is_err() {
            out.fill(0);
        }
        settled
    }

    /// Chunks per part of a plan of `part_size` bytes (the checks of [`plan`](Self::plan)).
    fn plan_geometry(&self, part_size: u64) -> Result<u64, Error> {
        let chunk = self.cipher.chunk_size() as u64;
        if part_size == 0 || !part_size.is_multiple_of(chunk) {
            return Err(Error::InvalidArgument(format!(
                "part size {part_size} is not a positive multiple of the chunk size {chunk}"
            )));
        }
        Ok(part_size / chunk)
    }

    /// Plaintext bytes of the part at chunk `first_chunk` of the plan of `part_size` bytes per
    /// part: an error unless such a part exists (so parts of one plan never overlap).
    fn part_of_plan(&self, part_size: u64, first_chunk: u64) -> Result<usize, Error> {
        let (per, n) = (self.plan_geometry(part_size)?, self.chunks());
        if !first_chunk.is_multiple_of(per) || first_chunk >= n {
            return Err(Error::InvalidArgument(format!(
                "no part of a plan of {part_size}-byte parts starts at chunk {first_chunk}"
            )));
        }
        let part = self.part(first_chunk, first_chunk.saturating_add(per).min(n));
        usize::try_from(part.plaintext.end - part.plaintext.start)
            .map_err(|_| Error::InvalidArgument("part too large for this platform".into()))
    }

    /// HMAC under the claim key of the key's layout and `parts`.
    fn claim_record(&self, parts: &[&[u8]]) -> [u8; 32] {
        let key = crate::crypto::hkdf32(&[], &self.key[..], CLAIM_INFO);
        let layout = [
            self.suite.name().as_bytes(),
            &(self.cipher.chunk_size() as u64).to_be_bytes(),
            &self.payload_start.to_be_bytes(),
            &self.payload_len.to_be_bytes(),
        ]
        .concat();
        let mut all: Vec<&[u8]> = vec![&layout];
        all.extend_from_slice(parts);
        crate::crypto::hmac_sha256(&key[..], &all)
    }
}

#[cfg(test)]
mod tests;
