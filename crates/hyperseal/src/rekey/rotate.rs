//! Rotation: a fresh file key and salt for a file, its payload re-encrypted at the engine's speed
//! from decryption into encryption in memory, never through plaintext at rest. The one change
//! that protects what is written from then on against a removed recipient who kept the old file
//! key, and the one way to move a post-quantum file to classical recipients (its old key stays
//! post-quantum only).
//!
//! It writes a new file, so it keeps every promise of a rewrite ([`super::file`]): the same lock
//! and journal resolution first, the lock-out guard (the new recipients must include one of the
//! identities the file was opened with, unless `remove_own`), the result keeping the file's
//! owner, mode and attributes, hard links refused unless allowed, and the rename only after a
//! last check, under a lease, that no other program saved the file meanwhile.

use std::io::Write;
use std::path::Path;

use super::file::{commit_over, keep_attributes, open_locked, refuse_split_links, FileOptions};
use super::guard::Snapshot;
use super::journal::Recovered;
use super::Outcome;
use crate::format::Header;
use crate::output::OutputOptions;
use crate::recipient::{Identity, Recipient};
use crate::stream::Progress;
use crate::{error::Error, Decryptor, Encryptor, Options};

/// What a rotation did.
pub struct Rotated {
    /// Bytes of the new file (0 for a dry run).
    pub bytes: u64,
    /// An interrupted re-key of this file found and resolved first.
    pub recovered: Option<Recovered>,
}

/// Rotates the file at `path` (opened with `identities`) to `recipients` under a fresh file
/// key, over the file or into [`FileOptions::output`]. `progress` gets the input bytes read.
pub fn rotate_file(
    path: &Path,
    identities: &[Box<dyn Identity>],
    recipients: &[Box<dyn Recipient>],
    remove_own: bool,
    opts: &FileOptions,
    progress: Option<Progress>,
) -> Result<Rotated, Error> {
    let over = opts.output.is_none() && !opts.dry_run;
    let (file, recovered) = open_locked(path, over, None)?;
    // Before the header is read (see `Snapshot::take`).
    let (meta, stamp) = (file.metadata()?, crate::sys::Stamp::of(&file)?);
    let dec = Decryptor::new(&file)?;
    let header = dec.header().clone();
    let snapshot = Snapshot::take(&file, stamp.clone(), header.encode_len())?;
    let armored = dec.is_armored();
    let opts_enc =
        Options { profile: header.profile, suite: header.suite, chunk_size: header.chunk_size, slack: true };
    let enc = Encryptor::with_recipients(recipients, opts_enc)?;
    // Opened first (the old key unwraps), so a wrong identity fails before anything else.
    let mut plain = dec.into_reader(identities)?;
    if !remove_own && !opens(&enc, identities) {
        return Err(Error::InvalidArgument(
            "the new recipients leave out every key this file was opened with: you could not open it again"
                .into(),
        ));
    }
    if opts.dry_run {
        return Ok(Rotated { bytes: 0, recovered });
    }
    let unchanged = |e: Error| match e {
        e @ Error::Rekey { .. } => e,
        e => Error::Rekey { outcome: Outcome::Unchanged, source: Box::new(e) },
    };
    if over {
        refuse_split_links(path, &stamp, opts.split_links).map_err(unchanged)?;
    }
    let dest = opts.output.as_deref().unwrap_or(path);
    let mut out = OutputOptions::new().force(opts.force || over);
    if !over {
        out = out.input(&meta);
    }
    let mut out = out.create(dest).map_err(|e| unchanged(std::io::Error::from(e).into()))?;
    (|| -> Result<(), Error> {
        if over {
            keep_attributes(&mut out, &file)?;
        }
        if armored {
            let mut w = crate::encrypt::armored(&mut out, header.profile);
            enc.encrypt_stream(&mut plain, &mut w, progress)?;
            w.finish()?;
        } else {
            enc.encrypt_stream(&mut plain, &mut out, progress)?;
        }
        Ok(out.flush()?)
    })()
    .map_err(unchanged)?;
    let bytes = out.bytes_written();
    match over {
        true => commit_over(out, &file, path, &snapshot),
        false => out.commit().map_err(|e| std::io::Error::from(e).into()),
    }
    .map_err(unchanged)?;
    Ok(Rotated { bytes, recovered })
}

/// Whether one of `identities` opens the header `enc` will write (the lock-out guard).
fn opens(enc: &Encryptor, identities: &[Box<dyn Identity>]) -> bool {
    let Ok(header) = Header::read_from(&mut enc.head()) else { return false };
    identities.iter().any(|id| matches!(id.unwrap_stanzas(&header.stanzas), Some(Ok(_))))
}
