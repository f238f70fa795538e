//! The one place that names a platform: file modes, inode numbers, links. Elsewhere the crate
//! asks these functions, so a port is this file.

use std::fs::Metadata;
use std::io;
use std::path::Path;

/// Permission bits, modification time (seconds), device, inode and link count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stat {
    pub mode: u32,
    pub mtime: i64,
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    /// Change detection: a file whose length, times and inode are all as cached is not read.
    pub size: u64,
    pub mtime_ns: u32,
    pub ctime: i64,
    pub ctime_ns: u32,
}

#[cfg(unix)]
pub(crate) fn stat(m: &Metadata) -> Stat {
    use std::os::unix::fs::MetadataExt;
    Stat {
        mode: m.mode() & 0o7777,
        mtime: m.mtime(),
        dev: m.dev(),
        ino: m.ino(),
        nlink: m.nlink(),
        size: m.size(),
        mtime_ns: m.mtime_nsec() as u32,
        ctime: m.ctime(),
        ctime_ns: m.ctime_nsec() as u32,
    }
}

#[cfg(not(unix))]
pub(crate) fn stat(m: &Metadata) -> Stat {
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    let mode = if m.permissions().readonly() { 0o444 } else { 0o644 };
    // No inode or change time here: the cache never matches, and every file is read.
    Stat { mode, mtime, dev: 0, ino: 0, nlink: 1, size: m.len(), mtime_ns: 0, ctime: 0, ctime_ns: u32::MAX }
}

/// Creates a symbolic link (fails where the name exists).
#[cfg(unix)]
pub(crate) fn symlink(target: &str, at: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
pub(crate) fn symlink(_target: &str, _at: &Path) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "symbolic links are restored on Unix only"))
}

/// Sets permission bits (never set-id bits: a restore does not hand out privileges).
#[cfg(unix)]
pub(crate) fn set_mode(f: &std::fs::File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(std::fs::Permissions::from_mode(mode & 0o1777))
}

#[cfg(not(unix))]
pub(crate) fn set_mode(_f: &std::fs::File, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Sets a file's modification time (and access time to the same).
pub(crate) fn set_mtime(f: &std::fs::File, mtime: i64) -> io::Result<()> {
    let t = match u64::try_from(mtime) {
        Ok(s) => std::time::UNIX_EPOCH + std::time::Duration::from_secs(s),
        Err(_) => return Ok(()),
    };
    f.set_times(std::fs::FileTimes::new().set_modified(t).set_accessed(t))
}

/// A new file readable and writable by its owner only (where the platform has modes).
pub(crate) fn create_private(path: &Path) -> io::Result<std::fs::File> {
    let mut opts = std::fs::File::options();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}
