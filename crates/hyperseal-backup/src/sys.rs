//! The one place that names a platform: file modes, inode numbers, links. Elsewhere the crate
//! asks these functions, so a port is this file.

use std::fs::{File, Metadata};
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

/// A new folder only its owner may enter (where the platform has modes): a restore gives it
/// its own mode last, and until then nobody else sees what is being written in it.
pub(crate) fn create_dir_private(path: &Path) -> io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(path)
}

/// What a name that was listed (or made) is now not: the same file or folder.
fn replaced() -> io::Error {
    io::Error::other("replaced since it was listed")
}

/// Opens the file the walk listed as `seen`, to read it: only if it is still that regular file.
/// A link put at the name since is not followed (`O_NOFOLLOW`), a FIFO or device put there
/// does not block the open (`O_NONBLOCK`), and what was opened must have `seen`'s device and
/// inode: whatever was swapped in after the `lstat` is never read under this name.
#[cfg(unix)]
pub(crate) fn open_listed_file(path: &Path, seen: &Stat) -> io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| if e.raw_os_error() == Some(libc::ELOOP) { replaced() } else { e })?;
    let m = f.metadata()?;
    if !m.is_file() || m.dev() != seen.dev || m.ino() != seen.ino {
        return Err(replaced());
    }
    set_blocking(&f)?;
    Ok(f)
}

#[cfg(not(unix))]
pub(crate) fn open_listed_file(path: &Path, _seen: &Stat) -> io::Result<File> {
    let f = File::open(path)?;
    match f.metadata()?.is_file() {
        true => Ok(f),
        false => Err(replaced()),
    }
}

/// Clears `O_NONBLOCK` on a regular file: most file systems ignore it there, but a network or
/// FUSE one may honour it and fail a read with "would block", skipping a readable file.
#[cfg(unix)]
#[allow(unsafe_code)]
fn set_blocking(f: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: F_GETFL and F_SETFL take and return plain integers, on a descriptor `f` holds open
    // for the whole call; no memory changes hands. std has no call for a descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags == -1 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens a folder a restore made or checked as `made`, to set its mode and times through the
/// handle: never through a link at the name (`O_NOFOLLOW`), and only if it is still that
/// folder (device and inode), so a folder swapped since, for a link or for another folder, is
/// refused and never changed.
#[cfg(unix)]
pub(crate) fn open_made_dir(path: &Path, made: &Stat) -> io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f =
        File::options().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(path).map_err(
            |e| match e.raw_os_error() {
                Some(libc::ELOOP | libc::ENOTDIR) => replaced(),
                _ => e,
            },
        )?;
    let m = f.metadata()?;
    if !m.is_dir() || m.dev() != made.dev || m.ino() != made.ino {
        return Err(replaced());
    }
    Ok(f)
}

/// Windows: the handle may write attributes (times), and a reparse point (a link or junction)
/// at the name is opened as itself, so it is no folder and refused.
#[cfg(not(unix))]
pub(crate) fn open_made_dir(path: &Path, _made: &Stat) -> io::Result<File> {
    let mut opts = File::options();
    opts.read(true);
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const FILE_READ_ATTRIBUTES: u32 = 0x80;
        const FILE_WRITE_ATTRIBUTES: u32 = 0x100;
        const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
        const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        opts.access_mode(FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT);
    }
    let f = opts.open(path)?;
    match f.metadata()?.is_dir() {
        true => Ok(f),
        false => Err(replaced()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::symlink;
    use std::sync::mpsc;
    use std::time::Duration;

    fn seen(path: &Path) -> Stat {
        stat(&std::fs::symlink_metadata(path).unwrap())
    }

    #[test]
    fn a_listed_file_is_read_only_if_it_is_still_that_file() {
        let t = tempfile::tempdir().unwrap();
        let (file, other) = (t.path().join("file"), t.path().join("other"));
        std::fs::write(&file, "mine").unwrap();
        std::fs::write(&other, "root's only").unwrap();
        let mut text = String::new();
        open_listed_file(&file, &seen(&file)).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "mine");
        // Another file put at the name since it was listed.
        assert!(open_listed_file(&file, &seen(&other)).is_err());
        // A link put there, to the very file that was listed: not followed either.
        let link = t.path().join("link");
        symlink(&other, &link).unwrap();
        let e = open_listed_file(&link, &seen(&other)).unwrap_err();
        assert!(e.to_string().contains("replaced"), "{e}");
    }

    #[test]
    fn a_fifo_swapped_in_for_a_file_is_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        let (file, fifo) = (t.path().join("file"), t.path().join("fifo"));
        std::fs::write(&file, "x").unwrap();
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        #[allow(unsafe_code)]
        // SAFETY: mkfifo reads a NUL-terminated path that lives across the call.
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert_eq!(made, 0);
        let listed = seen(&file);
        let (tx, rx) = mpsc::channel();
        let at = fifo.clone();
        std::thread::spawn(move || tx.send(open_listed_file(&at, &listed).map(|_| ())));
        let got = rx.recv_timeout(Duration::from_secs(10));
        if got.is_err() {
            // Free the blocked open: a writer lets it return.
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        }
        let got = got.expect("opening a FIFO as the listed file blocked");
        assert!(got.is_err(), "a FIFO was opened as a file");
    }

    #[test]
    fn a_made_folder_is_opened_only_if_it_is_still_that_folder() {
        let t = tempfile::tempdir().unwrap();
        let (dir, outside, link) = (t.path().join("d"), t.path().join("outside"), t.path().join("l"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::create_dir(&outside).unwrap();
        symlink(&outside, &link).unwrap();
        assert!(open_made_dir(&dir, &seen(&dir)).is_ok());
        assert!(open_made_dir(&dir, &seen(&outside)).is_err());
        assert!(open_made_dir(&link, &seen(&outside)).is_err(), "followed a link");
    }
}
