//! The one place that names a platform: file modes, inode numbers, links. Elsewhere the crate
//! asks these functions, so a port is this file.

use std::ffi::OsStr;
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
    #[cfg_attr(not(unix), allow(unused_mut))]
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
    use std::os::unix::fs::OpenOptionsExt;
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(not_followed)?;
    same(&f, seen, Kind::File)?;
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

/// What `lstat` says a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    Symlink,
    /// A FIFO, socket or device: never read.
    Other,
}

pub(crate) fn kind(m: &Metadata) -> Kind {
    let t = m.file_type();
    match () {
        _ if t.is_dir() => Kind::Dir,
        _ if t.is_file() => Kind::File,
        _ if t.is_symlink() => Kind::Symlink,
        _ => Kind::Other,
    }
}

/// A folder the walk holds open (`O_DIRECTORY | O_NOFOLLOW`, and still the folder listed):
/// what is in it is listed, looked at and opened through this handle (`openat`, `fstatat`,
/// `readlinkat`), never by a path from the root again. A folder on the way swapped for a link
/// after it was opened leads nowhere else: the handle holds the folder, not its name.
#[cfg(unix)]
pub(crate) struct Dir(File);

#[cfg(unix)]
impl Dir {
    /// The folder at `path` (a root given to the walk), if it is still the one `seen`.
    pub(crate) fn open(path: &Path, seen: &Stat) -> io::Result<Dir> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(path)
            .map_err(not_followed)?;
        same(&f, seen, Kind::Dir)?;
        Ok(Dir(f))
    }

    /// The folder `name` in this one, if it is still the one `seen`.
    pub(crate) fn open_dir(&self, name: &OsStr, seen: &Stat) -> io::Result<Dir> {
        let f = self.open_at(name, libc::O_DIRECTORY | libc::O_NOFOLLOW)?;
        same(&f, seen, Kind::Dir)?;
        Ok(Dir(f))
    }

    /// The regular file `name` in this folder, to read, as [`open_listed_file`] opens one.
    pub(crate) fn open_file(&self, name: &OsStr, seen: &Stat) -> io::Result<File> {
        let f = self.open_at(name, libc::O_NOFOLLOW | libc::O_NONBLOCK)?;
        same(&f, seen, Kind::File)?;
        set_blocking(&f)?;
        Ok(f)
    }

    #[allow(unsafe_code)]
    fn open_at(&self, name: &OsStr, flags: libc::c_int) -> io::Result<File> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let name = c_name(name)?;
        // SAFETY: openat reads the NUL-terminated `name`, alive across the call, relative to a
        // descriptor `self` holds open; it returns a new descriptor or -1.
        let fd = unsafe {
            libc::openat(self.0.as_raw_fd(), name.as_ptr(), flags | libc::O_RDONLY | libc::O_CLOEXEC)
        };
        if fd < 0 {
            return Err(not_followed(io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just returned by openat and nothing else owns it.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// What `name` in this folder is, not following a link (`fstatat`, `AT_SYMLINK_NOFOLLOW`).
    #[allow(unsafe_code)]
    pub(crate) fn lstat(&self, name: &OsStr) -> io::Result<(Stat, Kind)> {
        use std::os::fd::AsRawFd;
        let name = c_name(name)?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: fstatat reads the NUL-terminated `name` and, on success, fills all of `st`;
        // both are ours for the call, and the descriptor is held open by `self`.
        let r = unsafe {
            libc::fstatat(self.0.as_raw_fd(), name.as_ptr(), st.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW)
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat returned 0, so it filled `st`.
        Ok(from_libc(&unsafe { st.assume_init() }))
    }

    /// The target of the link `name` in this folder (`readlinkat`).
    #[allow(unsafe_code)]
    pub(crate) fn read_link(&self, name: &OsStr) -> io::Result<std::ffi::OsString> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStringExt;
        let name = c_name(name)?;
        let mut buf = vec![0u8; 256];
        loop {
            // SAFETY: readlinkat writes at most `buf.len()` bytes into `buf`, ours for the call.
            let n = unsafe {
                libc::readlinkat(self.0.as_raw_fd(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
            };
            let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
            // A target as long as the buffer may have been cut: read again with room to spare.
            if n < buf.len() {
                buf.truncate(n);
                return Ok(std::ffi::OsString::from_vec(buf));
            }
            buf.resize(buf.len() * 2, 0);
        }
    }

    /// The names in this folder (less `.` and `..`), and the error that ended the listing
    /// early, if one did (what was listed before it is kept).
    #[allow(unsafe_code)]
    pub(crate) fn names(&self) -> (Vec<std::ffi::OsString>, Option<io::Error>) {
        use std::os::fd::IntoRawFd;
        use std::os::unix::ffi::OsStrExt;
        // fdopendir takes the descriptor it is given: a duplicate, so `self` keeps its own.
        let fd = match self.0.try_clone() {
            Ok(f) => f.into_raw_fd(),
            Err(e) => return (Vec::new(), Some(e)),
        };
        // SAFETY: `fd` is an open folder descriptor nothing else owns; fdopendir takes it (or
        // fails, and it is closed here).
        let dir = unsafe { libc::fdopendir(fd) };
        if dir.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: `fd` is ours still: fdopendir failed.
            unsafe { libc::close(fd) };
            return (Vec::new(), Some(e));
        }
        // SAFETY: `dir` is the stream fdopendir returned; the duplicate shares its offset with
        // `self`, so the listing starts over from the first name.
        unsafe { libc::rewinddir(dir) };
        let (mut out, mut failed) = (Vec::new(), None);
        loop {
            clear_errno();
            // SAFETY: `dir` is open until closedir below; each entry is read before the next call.
            let e = unsafe { libc::readdir(dir) };
            if e.is_null() {
                // The end, or an error: only an error sets errno.
                let err = io::Error::last_os_error();
                if err.raw_os_error().is_some_and(|c| c != 0) {
                    failed = Some(err);
                }
                break;
            }
            // SAFETY: `d_name` of the entry readdir returned is NUL-terminated, valid until the
            // next readdir; it is copied before that.
            let name = unsafe { std::ffi::CStr::from_ptr((*e).d_name.as_ptr()) };
            let name = std::ffi::OsStr::from_bytes(name.to_bytes());
            if name != "." && name != ".." {
                out.push(name.to_owned());
            }
        }
        // SAFETY: `dir` is open and closed once, here; it closes the duplicate descriptor.
        unsafe { libc::closedir(dir) };
        (out, failed)
    }
}

/// Sets errno to 0, so that a null `readdir` tells an error from the end. Where this crate
/// knows no way to, errno is left: an error is then taken for the end only if errno was 0.
#[allow(unsafe_code)]
#[cfg(unix)]
fn clear_errno() {
    // SAFETY: each returns this thread's errno location, always valid to write an int to.
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "emscripten"))]
    unsafe {
        *libc::__errno_location() = 0
    };
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    unsafe {
        *libc::__error() = 0
    };
}

#[cfg(unix)]
fn c_name(name: &std::ffi::OsStr) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(name.as_bytes()).map_err(|_| io::Error::other("a name holds NUL"))
}

/// A link met with `O_NOFOLLOW` (ELOOP, or ENOTDIR with `O_DIRECTORY` on some systems) is a
/// name replaced since it was listed.
#[cfg(unix)]
fn not_followed(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) => replaced(),
        _ => e,
    }
}

/// Whether what `f` opened is the `seen` one: same kind, device and inode.
#[cfg(unix)]
fn same(f: &File, seen: &Stat, want: Kind) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = f.metadata()?;
    match kind(&m) == want && m.dev() == seen.dev && m.ino() == seen.ino {
        true => Ok(()),
        false => Err(replaced()),
    }
}

/// A [`Stat`] and [`Kind`] from `fstatat`'s answer, as [`stat`] and [`kind`] give them from
/// std's (the cache compares the two).
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)]
fn from_libc(s: &libc::stat) -> (Stat, Kind) {
    let kind = match s.st_mode as u32 & libc::S_IFMT as u32 {
        t if t == libc::S_IFDIR as u32 => Kind::Dir,
        t if t == libc::S_IFREG as u32 => Kind::File,
        t if t == libc::S_IFLNK as u32 => Kind::Symlink,
        _ => Kind::Other,
    };
    let st = Stat {
        mode: s.st_mode as u32 & 0o7777,
        mtime: s.st_mtime as i64,
        dev: s.st_dev as u64,
        ino: s.st_ino as u64,
        nlink: s.st_nlink as u64,
        size: s.st_size as u64,
        mtime_ns: s.st_mtime_nsec as u32,
        ctime: s.st_ctime as i64,
        ctime_ns: s.st_ctime_nsec as u32,
    };
    (st, kind)
}

/// Elsewhere the folder is held by its path: each name is looked at through it.
#[cfg(not(unix))]
pub(crate) struct Dir(std::path::PathBuf);

#[cfg(not(unix))]
impl Dir {
    pub(crate) fn open(path: &Path, _seen: &Stat) -> io::Result<Dir> {
        match std::fs::symlink_metadata(path)?.is_dir() {
            true => Ok(Dir(path.to_path_buf())),
            false => Err(replaced()),
        }
    }

    pub(crate) fn open_dir(&self, name: &OsStr, seen: &Stat) -> io::Result<Dir> {
        Dir::open(&self.0.join(name), seen)
    }

    pub(crate) fn open_file(&self, name: &OsStr, seen: &Stat) -> io::Result<File> {
        open_listed_file(&self.0.join(name), seen)
    }

    pub(crate) fn lstat(&self, name: &OsStr) -> io::Result<(Stat, Kind)> {
        let m = std::fs::symlink_metadata(self.0.join(name))?;
        Ok((stat(&m), kind(&m)))
    }

    pub(crate) fn read_link(&self, name: &OsStr) -> io::Result<std::ffi::OsString> {
        std::fs::read_link(self.0.join(name)).map(|p| p.into_os_string())
    }

    pub(crate) fn names(&self) -> (Vec<std::ffi::OsString>, Option<io::Error>) {
        let (mut out, mut failed) = (Vec::new(), None);
        match std::fs::read_dir(&self.0) {
            Ok(rd) => {
                for e in rd {
                    match e {
                        Ok(e) => out.push(e.file_name()),
                        Err(e) => failed = Some(e),
                    }
                }
            }
            Err(e) => failed = Some(e),
        }
        (out, failed)
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
    use std::os::unix::fs::OpenOptionsExt;
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .map_err(not_followed)?;
    same(&f, made, Kind::Dir)?;
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

    /// A folder swapped for a link after the walk opened it: the names looked at and opened
    /// are the folder's that was opened, not those of the folder the link names.
    #[test]
    fn a_folder_held_open_is_read_not_the_link_put_at_its_name() {
        let t = tempfile::tempdir().unwrap();
        let (dir, outside) = (t.path().join("d"), t.path().join("outside"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(dir.join("f"), "mine").unwrap();
        std::fs::write(outside.join("f"), "root's only").unwrap();
        std::fs::write(outside.join("g"), "root's only").unwrap();
        let d = Dir::open(&dir, &seen(&dir)).unwrap();
        std::fs::rename(&dir, t.path().join("moved")).unwrap();
        symlink(&outside, &dir).unwrap();
        let (names, failed) = d.names();
        assert!(failed.is_none());
        assert_eq!(names, vec![std::ffi::OsString::from("f")]);
        assert!(d.lstat(OsStr::new("g")).is_err());
        let (st, kind) = d.lstat(OsStr::new("f")).unwrap();
        assert_eq!(kind, Kind::File);
        let mut text = String::new();
        d.open_file(OsStr::new("f"), &st).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "mine");
        // As `stat` says from std's answer: the cache compares the two.
        let std_says = seen(&t.path().join("moved/f"));
        assert_eq!(format!("{st:?}"), format!("{std_says:?}"));
        // And a link inside is neither opened as a folder nor as a file.
        symlink(&outside, t.path().join("moved/l")).unwrap();
        assert_eq!(d.lstat(OsStr::new("l")).unwrap().1, Kind::Symlink);
        assert_eq!(d.read_link(OsStr::new("l")).unwrap(), outside.as_os_str());
        assert!(d.open_dir(OsStr::new("l"), &seen(&outside)).is_err());
        assert!(d.open_file(OsStr::new("l"), &seen(&outside.join("f"))).is_err());
    }
}

/// Blocks SIGPIPE in the calling thread only. A write to a pipe whose reader is gone (an `ssh`
/// that exited) then fails with EPIPE in that thread, which the store reports, instead of the
/// signal ending the whole process silently where the program kept SIGPIPE's default action
/// (the CLI does, for `| head`). A write's SIGPIPE goes to the thread that wrote, so no other
/// thread's handling changes.
#[allow(unsafe_code)]
#[cfg(unix)]
pub(crate) fn block_sigpipe_in_this_thread() {
    // SAFETY: a zeroed sigset_t is valid storage for sigemptyset, which initialises it;
    // pthread_sigmask reads the set and writes nothing back (null old set).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// (No SIGPIPE elsewhere.)
#[cfg(not(unix))]
pub(crate) fn block_sigpipe_in_this_thread() {}

/// Makes a new name in `dir` durable. On Unix that is an fsync of the folder. Windows opens no
/// folder as a file ("Access is denied" without backup semantics), and NTFS journals the name
/// with the file: nothing to do there.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir).and_then(|d| d.sync_all())
}

/// (See the Unix one.)
#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}
