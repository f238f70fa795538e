//! What a test that runs as another user (`nobody`, when the tests run as root) hands that
//! user. The checkout may lie under a private folder (a `mktemp -d` of mode 0700) that no other
//! user can enter, so nothing under it (the built binary, cargo's target/tmp) can be given to
//! that user by its path: the binary is linked (or copied) into a folder everyone may enter.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The built `hyperseal`, where every user may run it: a hard link to it (a copy where the
/// temporary folder is another file system) in a folder of this user's under `/tmp`, named by
/// the binary's identity, so each build is placed there once and reused by later runs.
pub fn binary() -> &'static Path {
    static PLACED: OnceLock<PathBuf> = OnceLock::new();
    PLACED.get_or_init(|| {
        let built = Path::new(env!("CARGO_BIN_EXE_hyperseal"));
        let m = std::fs::metadata(built).unwrap();
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        let dir = PathBuf::from(format!("/tmp/hyperseal-tests-{me}"));
        let _ = std::fs::create_dir(&dir);
        let d = std::fs::symlink_metadata(&dir).unwrap();
        assert!(d.is_dir() && d.uid() == me, "{} is not this user's folder", dir.display());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let placed = dir.join(format!("hyperseal-{}-{}-{}", m.dev(), m.ino(), m.mtime()));
        if !placed.exists() {
            forget_old_builds(&dir);
            // Linked or copied under a name of this process's, then renamed: tests running at
            // once never see half a copy.
            let part = dir.join(format!(".part-{}", std::process::id()));
            let _ = std::fs::remove_file(&part);
            if std::fs::hard_link(built, &part).is_err() {
                std::fs::copy(built, &part).unwrap();
            }
            std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::rename(&part, &placed).unwrap();
        }
        placed
    })
}

/// Removes the places of builds older than a day: each holds its build's inode on disk.
fn forget_old_builds(dir: &Path) {
    let day = std::time::Duration::from_secs(24 * 3600);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let old = e.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
        if e.file_name().to_string_lossy().starts_with("hyperseal-") && old.is_some_and(|o| o > day) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
