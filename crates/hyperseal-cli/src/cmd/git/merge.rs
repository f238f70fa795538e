//! `hyperseal git merge-driver O A B L P`: git's merge driver for marked paths
//! (`merge.hyperseal.driver`). git writes the three stored blobs (base, ours, theirs: age
//! files) to temporary files and stores whatever the driver leaves in A as an object, even
//! when it reports a conflict. So the driver opens the three with the unlocked identities,
//! merges the plaintexts in this process's memory (the library's diff3; `git merge-file`
//! would need them in named files), and leaves in A an age file of the merged text, conflict
//! markers included, sealed to the path's `.age-recipients`. The smudge filter then puts the
//! plaintext, markers and all, into the unlocked work tree.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use hyperseal_git::recipients;

use crate::errors::hint;

/// Largest stored blob the driver merges: all three plaintexts are held in memory.
const MAX_BLOB: u64 = 256 << 20;

/// Runs the driver: `Ok` for a clean merge, an error (exit status 1, as `git merge-file`'s
/// non-zero) for a conflict or anything that stopped it. On an error before the result is
/// written, A keeps our side's age file as git wrote it, and git reports the path in conflict.
pub fn merge_driver(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    marker_len: Option<usize>,
    path: &str,
) -> Result<()> {
    let ids = super::filter::unlocked()?;
    if ids.is_empty() {
        return Err(hint(
            format!("cannot merge {path}: the repository is locked, so its versions cannot be opened"),
            "run `hyperseal git unlock` and merge again (`git merge --abort` first)",
        ));
    }
    let root = super::work_tree()?;
    let found = recipients::nearest(&root, path)?.ok_or_else(|| {
        hint(
            format!("cannot merge {path}: no {} in its folder or any folder above it", recipients::FILE_NAME),
            "put the recipients in a .age-recipients file in its folder or one above",
        )
    })?;
    let list = crate::cmd::identity::parse_recipients_text(&found.text, Path::new(&found.path))
        .with_context(|| found.path.clone())?;
    let blobs = [read(base)?, read(ours)?, read(theirs)?];
    let (sealed, conflicts) = hyperseal_git::merge::merge_sealed(
        [&blobs[0], &blobs[1], &blobs[2]],
        &ids,
        &list,
        ["ours", "theirs"],
        marker_len.unwrap_or(7).clamp(1, 64),
    )
    .with_context(|| format!("cannot merge {path}"))?;
    replace(ours, &sealed)?;
    if conflicts > 0 {
        return Err(hint(
            format!("{conflicts} conflict(s) in {path}"),
            "edit the marked lines in the work tree, then `git add` it",
        ));
    }
    Ok(())
}

fn read(file: &Path) -> Result<Vec<u8>> {
    let len = std::fs::metadata(file).with_context(|| file.display().to_string())?.len();
    if len > MAX_BLOB {
        return Err(hint(
            format!("{} is larger than 256 MiB: too large to merge in memory", file.display()),
            "merge it by hand (`git checkout --ours` or `--theirs`, then edit)",
        ));
    }
    std::fs::read(file).with_context(|| file.display().to_string())
}

/// Replaces `file` with `data` whole: written beside it, then renamed over it, so a failure
/// leaves git's copy of our side, never a cut age file.
fn replace(file: &Path, data: &[u8]) -> Result<()> {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".hyperseal-merge");
    let tmp: PathBuf = file.with_file_name(name);
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(data)?;
        f.sync_all()
    });
    let done = written.and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow::Error::new(e).context(file.display().to_string()));
    }
    Ok(())
}
