//! The in-place rewrite kit the tree re-key is built on, public for the other programs that
//! rewrite files in place (the sops files' re-key, `hyperseal-sops`), so each of them walks and
//! writes with the same guarantees instead of its own copy:
//!
//! * [`Walk`]: folders listed through their handles, no link followed unless asked, each file
//!   recorded by its [`Place`] under a held directory and its identity (`walk.rs`,
//!   `beneath.rs`), so a file or folder swapped for a link while a run goes on fails for that
//!   name and nothing outside the tree is touched;
//! * [`read_beneath`]: a walked file's bytes, reached again as the walk found it, bounded;
//! * [`rewrite_in_place`]: a walked file replaced by new bytes as the tree re-key rewrites one:
//!   locked, checked to hold the very bytes the new ones were made from, a new file with its
//!   owner, mode and attributes renamed over it under a lease after a last check (`file.rs`,
//!   `guard.rs`), so another program's save since the read wins;
//! * [`leftovers`] and [`clear_leftovers`]: what a run killed while it replaced a file left
//!   beside it, and its removal under the file's lock.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use super::beneath;
use super::file::{changed_by_another, commit_over, keep_attributes, old_copy_path, open_locked};
use super::guard::Snapshot;
use crate::error::{Error, Outcome};
use crate::output::OutputOptions;
use crate::sys::Stamp;

pub use super::beneath::Place;
pub use super::tree::same_files_once;
pub use super::walk::{Entry, Walk, WalkOptions};

/// The walked file at `place` (`display` to the caller), reached again as the walk found it
/// (no link followed, the same file), and its bytes, refused past `limit` bytes (`what` names
/// the file's kind in that error) before more is read.
pub fn read_beneath(
    place: &Place,
    display: &Path,
    limit: usize,
    what: &str,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let reached = place.reach(display)?;
    let f = beneath::open_checked(&reached.path, false, place.id, display)?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let cap = limit as u64 + 1;
    let mut buf = Zeroizing::new(Vec::with_capacity(size.saturating_add(1).min(cap) as usize));
    (&f).take(cap).read_to_end(&mut buf).map_err(Error::Io)?;
    if buf.len() > limit {
        return Err(crate::limits::too_long(what, limit));
    }
    Ok(buf)
}

/// Replaces the walked file at `place` with `new`, which was made from `old` (module docs).
/// Errors name the file as `display`; where nothing was written the error is the cause itself.
pub fn rewrite_in_place(place: &Place, display: &Path, old: &[u8], new: &[u8]) -> Result<(), Error> {
    let reached = place.reach(display)?;
    let path = &reached.path;
    written(path, place, old, new).map_err(|e| match super::tree::relabel(e, path, display) {
        // Nothing written: the file is as it was, which the caller's outcome says already.
        Error::Rekey { outcome: Outcome::Unchanged, source } => *source,
        e => e,
    })
}

fn written(path: &Path, place: &Place, old: &[u8], new: &[u8]) -> Result<(), Error> {
    let (file, _) = open_locked(path, true, Some(place.id))?;
    let snapshot = Snapshot::take(&file, Stamp::of(&file)?, old.len())?;
    if snapshot.len() != old.len() as u64 || snapshot.header() != old {
        return Err(changed_by_another(path));
    }
    let mut out = OutputOptions::new().force(true).create(path).map_err(|e| Error::Io(e.into()))?;
    keep_attributes(&mut out, &file)?;
    out.write_all(new).map_err(Error::Io)?;
    out.flush().map_err(Error::Io)?;
    commit_over(out, &file, path, &snapshot)
}

/// The names a run killed while it replaced the walked file left beside it (the old version's
/// second name, `.NAME.hyperseal-old`, which still opens for the recipients it had, or the new
/// version under its temporary name), named within `display`'s folder.
pub fn leftovers(place: &Place, display: &Path) -> Vec<PathBuf> {
    let Ok(r) = place.reach(display) else { return Vec::new() };
    let old = old_copy_path(&r.path);
    let found = [std::fs::symlink_metadata(&old).is_ok().then_some(old), crate::output::stale_links(&r.path)];
    let folder = display.parent().unwrap_or(Path::new(""));
    found.into_iter().flatten().filter_map(|p| p.file_name().map(|n| folder.join(n))).collect()
}

/// Removes what [`leftovers`] finds, by opening the file as a rewrite does: under the file's
/// lock, so a name another rewrite is using right now is never taken from it. A file an
/// interrupted run had already rewritten is unchanged now and would never be opened so.
pub fn clear_leftovers(place: &Place, display: &Path) -> Result<(), Error> {
    let r = place.reach(display)?;
    let left = std::fs::symlink_metadata(old_copy_path(&r.path)).is_ok()
        || crate::output::stale_links(&r.path).is_some();
    match left {
        true => open_locked(&r.path, true, Some(place.id)).map(drop),
        false => Ok(()),
    }
}
