//! Windows. Where a Unix guarantee has no Windows equivalent, the choice made is said at it.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Win32::Foundation::{ERROR_INVALID_FUNCTION, ERROR_NOT_SUPPORTED, GENERIC_WRITE};
use windows_sys::Win32::Storage::FileSystem::{
    FileDispositionInfo, GetFileInformationByHandle, SetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
    DELETE, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT, FILE_DISPOSITION_INFO,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
};

pub(crate) mod interrupt;
pub(crate) mod pipe;
pub(crate) mod process;

/// What makes two open files the same file: volume serial number and file index.
pub(crate) type FileId = (u64, u64);

/// A file's identity, size, link count and times, as `GetFileInformationByHandle` reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) id: FileId,
    pub(crate) len: u64,
    pub(crate) links: u64,
    /// Creation and last-write times: a save in place moves the second, a replacement the first.
    times: [u64; 2],
    /// Windows files have an owner SID and an ACL, not a Unix owner: a file this process can open
    /// counts as its own (its directory's ACL decided who may put it there).
    pub(crate) owned: bool,
    pub(crate) regular: bool,
}

impl Stamp {
    #[allow(unsafe_code)]
    pub(crate) fn of(file: &File) -> io::Result<Stamp> {
        // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is valid; the call fills it from a
        // handle that `file` keeps open for its duration.
        let i = unsafe {
            let mut i: BY_HANDLE_FILE_INFORMATION = std::mem::zeroed();
            if GetFileInformationByHandle(file.as_raw_handle(), &mut i) == 0 {
                return Err(io::Error::last_os_error());
            }
            i
        };
        let join = |hi: u32, lo: u32| (u64::from(hi) << 32) | u64::from(lo);
        let time = |t: windows_sys::Win32::Foundation::FILETIME| join(t.dwHighDateTime, t.dwLowDateTime);
        let special = FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT;
        Ok(Stamp {
            id: (u64::from(i.dwVolumeSerialNumber), join(i.nFileIndexHigh, i.nFileIndexLow)),
            len: join(i.nFileSizeHigh, i.nFileSizeLow),
            links: u64::from(i.nNumberOfLinks),
            times: [time(i.ftCreationTime), time(i.ftLastWriteTime)],
            owned: true,
            regular: i.dwFileAttributes & special == 0,
        })
    }

    /// Whether both name one file: the same file index, on the same volume where both know it
    /// (Wine reports volume 0 for a handle whose file was renamed since it was opened; the
    /// callers compare files in one directory, so one volume).
    pub(crate) fn same_file(&self, other: &Stamp) -> bool {
        let (a, b) = (self.id.0, other.id.0);
        self.id.1 == other.id.1 && (a == b || a == 0 || b == 0)
    }

    /// Of the file `path` names (through symbolic links).
    pub(crate) fn of_path(path: &Path) -> io::Result<Stamp> {
        Stamp::of(&File::options().access_mode(0).custom_flags(FILE_FLAG_BACKUP_SEMANTICS).open(path)?)
    }

    /// Of the name `path` itself (a symbolic link or junction is not followed).
    pub(crate) fn of_link(path: &Path) -> io::Result<Stamp> {
        let flags = FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT;
        Stamp::of(&File::options().access_mode(0).custom_flags(flags).open(path)?)
    }
}

/// The identity of a regular file from metadata already read (the output's same-file rule).
/// Stable Rust's metadata carries no file index on Windows, so the creation and last-write
/// times (100 ns) stand for it: every name of one file shows the same pair, and a copy gets a
/// creation time of its own.
pub(crate) fn id_of(m: &Metadata) -> Option<FileId> {
    m.is_file().then(|| (m.creation_time(), m.last_write_time()))
}

/// Windows' positional read moves the file position (Unix's `pread` does not): it is put back,
/// so a reader of the same handle (a re-key reads the payload on after a snapshot's read)
/// continues where it was. Not for concurrent use with such a reader.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    keeping_position(file, |f| f.seek_read(buf, offset))
}

pub(crate) fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    keeping_position(file, |f| f.seek_write(buf, offset))
}

fn keeping_position<T>(file: &File, op: impl FnOnce(&File) -> io::Result<T>) -> io::Result<T> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    let at = f.stream_position()?;
    let done = op(file);
    f.seek(SeekFrom::Start(at))?;
    done
}

/// Positional reads and writes that many threads make on one file at once: the file position
/// is left wherever the last one put it (unlike [`read_at`]), which no user of these reads.
pub(crate) fn pread(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.seek_read(buf, offset)
}

pub(crate) fn pwrite(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    file.seek_write(buf, offset)
}

/// Sets `file`'s length to `len`: NTFS allocates the clusters as it extends the file, so a full
/// disk fails here, before any byte is written.
pub(crate) fn check_space(file: &File, len: u64) -> io::Result<()> {
    file.set_len(len)
}

/// New files get the ACL their directory passes on, as age's do on Windows (Go ignores Unix
/// modes there): in a user's profile that is the user, SYSTEM and Administrators. No
/// narrower ACL is set, so a file in a shared directory is as private as that directory makes it.
pub(crate) fn private(opts: &mut OpenOptions) -> &mut OpenOptions {
    opts
}

/// Opens a symbolic link or junction itself, not what it points to; callers then refuse it as
/// not a regular file.
pub(crate) fn no_follow(opts: &mut OpenOptions) -> &mut OpenOptions {
    opts.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
}

/// [`no_follow`] never fails for a link on Windows (see there).
pub(crate) fn is_link_refusal(_: &io::Error) -> bool {
    false
}

/// The errors of a volume without hard links (FAT, exFAT, some network shares).
pub(crate) fn lacks_hard_links(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(c) if c == ERROR_INVALID_FUNCTION as i32 || c == ERROR_NOT_SUPPORTED as i32)
}

pub(crate) fn is_a_directory() -> io::Error {
    io::ErrorKind::IsADirectory.into()
}

pub(crate) fn is_fifo(_: &Metadata) -> bool {
    false
}

/// Windows cannot flush a directory handle; NTFS journals its directory entries itself.
pub(crate) fn sync_dir(_: &Path) -> io::Result<()> {
    Ok(())
}

/// Windows has no unnamed files: outputs always use a named temporary ([`create_temporary`]).
pub(crate) fn create_unnamed(_: &Path) -> io::Result<Option<File>> {
    Ok(None)
}

pub(crate) fn link_unnamed(_: &File, _: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// A re-key's rewrite gives the old file its second name by moving it: Windows cannot rename
/// a file over one that is open (the re-key holds the old one), so the name is freed first.
pub(crate) const SECOND_NAME_MOVES: bool = true;

/// Creates a new file at `path` for a named temporary, marked delete-on-close at once: if the
/// process ends before [`keep_temporary`] (an error, Ctrl-C, a closed console, a kill), the
/// system removes it when its last handle closes, as Linux frees an unnamed file.
pub(crate) fn create_temporary(path: &Path) -> io::Result<File> {
    let file = File::options().write(true).access_mode(GENERIC_WRITE | DELETE).create_new(true).open(path)?;
    if let Err(e) = set_delete_on_close(&file, true) {
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok(file)
}

/// Clears the delete-on-close mark, just before the temporary gets its final name.
pub(crate) fn keep_temporary(file: &File) -> io::Result<()> {
    set_delete_on_close(file, false)
}

#[allow(unsafe_code)]
fn set_delete_on_close(file: &File, yes: bool) -> io::Result<()> {
    let info = FILE_DISPOSITION_INFO { DeleteFile: yes };
    // SAFETY: `info` is a valid FILE_DISPOSITION_INFO for the class named, of the size given,
    // and lives for the call; the handle is open (it needs DELETE access, which it has).
    let ok = unsafe {
        SetFileInformationByHandle(
            file.as_raw_handle(),
            FileDispositionInfo,
            (&info as *const FILE_DISPOSITION_INFO).cast(),
            std::mem::size_of::<FILE_DISPOSITION_INFO>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What a rewritten file keeps on Windows: its read-only flag. Its ACL is inherited from the
/// directory, like any new file's there.
pub(crate) fn copy_attributes(from: &File, to: &File) -> io::Result<()> {
    to.set_permissions(from.metadata()?.permissions())
}

/// No leases on Windows: a re-key checks the file before and after its write instead.
pub(crate) struct Lease<'a>(std::marker::PhantomData<&'a File>);

pub(crate) enum Leased<'a> {
    #[allow(dead_code)] // Never taken on Windows; the re-key's code is the same on both.
    Held(Lease<'a>),
    Unavailable,
    #[allow(dead_code)]
    OpenElsewhere,
}

/// Nothing to release; the callers drop a lease at the same points on every system.
impl Drop for Lease<'_> {
    fn drop(&mut self) {}
}

impl<'a> Lease<'a> {
    pub(crate) fn take(_: &'a File) -> Leased<'a> {
        Leased::Unavailable
    }

    pub(crate) fn held(&self) -> bool {
        false
    }
}

/// A plugin is any `age-plugin-NAME.exe` file on `PATH` (Windows has no execute bit).
pub(crate) fn is_executable(_: &Metadata) -> bool {
    true
}

/// A duplicate handle of standard output, to ask what it is.
pub(crate) fn stdout_file() -> Option<File> {
    use std::os::windows::io::AsHandle;
    io::stdout().as_handle().try_clone_to_owned().ok().map(File::from)
}

/// Windows has no SIGXFSZ: a write past a quota fails with an error, which is reported.
pub fn ignore_file_size_signal() {}
