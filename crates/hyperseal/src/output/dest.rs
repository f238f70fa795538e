//! What the destination is, decided once before any byte is written; and the same-file checks.

use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use super::{OutputError, OutputErrorKind};

/// Where the bytes go.
#[derive(Debug)]
pub(super) enum Destination {
    /// A device, FIFO, socket or other non-regular file: open it and write.
    WriteThrough,
    /// Nothing there yet: create this path (the destination itself).
    Create(PathBuf),
    /// An existing regular file that `force` allows to replace: this path, with symbolic links
    /// resolved, so the link stays and the file it points to is replaced.
    Replace(PathBuf),
}

/// Device and inode of a regular file (on Windows what the system's metadata gives for it: see
/// `sys`): what "the same file" means (hard links, `./f` and `f`, a symbolic link and its
/// target). Other files are never "the same" (`/dev/null` may be both input and output).
pub(super) fn identity(m: &Metadata) -> Option<crate::sys::FileId> {
    crate::sys::id_of(m)
}

/// Applies the rules of the [module documentation](super) to `dest`.
pub(super) fn classify(
    dest: &Path,
    force: bool,
    input: Option<crate::sys::FileId>,
) -> Result<Destination, OutputError> {
    use OutputErrorKind::*;
    match fs::metadata(dest) {
        Ok(m) if m.is_dir() => Err(OutputError::rule(IsDirectory, dest)),
        Ok(m) if input.is_some() && identity(&m) == input => Err(OutputError::rule(SameFile, dest)),
        Ok(m) if !m.is_file() => Ok(Destination::WriteThrough),
        Ok(_) if !force => Err(OutputError::rule(AlreadyExists, dest)),
        Ok(_) => {
            let is_link = fs::symlink_metadata(dest).is_ok_and(|l| l.file_type().is_symlink());
            let target = if is_link {
                fs::canonicalize(dest).map_err(|e| OutputError::new(Create, dest, e))?
            } else {
                dest.to_path_buf()
            };
            Ok(Destination::Replace(target))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // stat says "no such file" but lstat finds something: a link to nothing.
            if fs::symlink_metadata(dest).is_ok() {
                return Err(OutputError::rule(DanglingSymlink, dest));
            }
            // `out/` names a directory: never create a file called `out` for it.
            if dest.as_os_str().as_encoded_bytes().ends_with(std::path::MAIN_SEPARATOR_STR.as_bytes())
                || dest.as_os_str().as_encoded_bytes().ends_with(b"/")
            {
                return Err(OutputError::new(Create, dest, crate::sys::is_a_directory()));
            }
            Ok(Destination::Create(dest.to_path_buf()))
        }
        // ENOTDIR, EACCES, ELOOP…: the OS reason says it best.
        Err(e) => Err(OutputError::new(Create, dest, e)),
    }
}

/// Just before renaming over `target` (with `force`): it must still be a regular file or
/// absent. A directory or a device that appeared there during the run is not ours to replace.
pub(super) fn check_replaceable(target: &Path, dest: &Path) -> Result<(), OutputError> {
    match fs::symlink_metadata(target) {
        Ok(m) if m.is_dir() => Err(OutputError::rule(OutputErrorKind::IsDirectory, dest)),
        Ok(m) if !(m.is_file() || m.file_type().is_symlink()) => {
            let what = if crate::sys::is_fifo(&m) { "a FIFO" } else { "a device or socket" };
            Err(OutputError::new(
                OutputErrorKind::Commit,
                dest,
                io::Error::other(format!("it became {what} while the output was written")),
            ))
        }
        _ => Ok(()),
    }
}

/// The directory a temporary for `target` goes in: the same one, so a rename or link into
/// place never crosses filesystems.
pub(super) fn parent_dir(target: &Path) -> PathBuf {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuses when standard output is the input file, as `cat` does ("input file is output file"):
/// `hyperseal encrypt f >> f` would otherwise read its own output until the disk is full.
/// `input` is the input's metadata and `name` its path, for the message. Only regular files
/// are compared; a closed or unusual stdout is not refused.
///
/// ```no_run
/// let input = std::fs::File::open("notes.txt").unwrap();
/// hyperseal::output::refuse_stdout_is_input(&input.metadata().unwrap(), "notes.txt".as_ref())?;
/// # Ok::<(), hyperseal::output::OutputError>(())
/// ```
pub fn refuse_stdout_is_input(input: &Metadata, name: &Path) -> Result<(), OutputError> {
    let Some(id) = identity(input) else { return Ok(()) };
    // A duplicate of standard output lets safe code ask the system about it.
    let Some(out) = crate::sys::stdout_file() else { return Ok(()) };
    match out.metadata() {
        Ok(m) if identity(&m) == Some(id) => Err(OutputError::rule(OutputErrorKind::StdoutIsInput, name)),
        _ => Ok(()),
    }
}
