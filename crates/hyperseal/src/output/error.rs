//! What can go wrong with an output file, worded for the person who named it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Which rule an [`OutputError`] is about; frontends pick their hint from it (the CLI suggests
/// `--force` for [`AlreadyExists`](Self::AlreadyExists), Node `force: true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputErrorKind {
    /// The destination is an existing regular file (or one appeared there during the run) and
    /// `force` was not given.
    AlreadyExists,
    /// The destination is a directory.
    IsDirectory,
    /// The destination is a symbolic link to a file that does not exist.
    DanglingSymlink,
    /// The destination is the input file.
    SameFile,
    /// Standard output is the input file (`hyperseal encrypt f >> f`).
    StdoutIsInput,
    /// The output could not be created or opened (missing directory, permissions, …).
    Create,
    /// Writing failed (disk full, file too large, I/O error, broken pipe).
    Write,
    /// The finished output could not be given its name.
    Commit,
}

/// An output error. Its message names the destination the user gave, never a temporary file,
/// and includes the operating system's reason where there is one.
#[derive(Debug)]
pub struct OutputError {
    kind: OutputErrorKind,
    path: PathBuf,
    source: Option<io::Error>,
}

impl OutputError {
    pub(crate) fn new(kind: OutputErrorKind, path: &Path, source: io::Error) -> Self {
        OutputError { kind, path: path.to_path_buf(), source: Some(source) }
    }

    pub(crate) fn rule(kind: OutputErrorKind, path: &Path) -> Self {
        OutputError { kind, path: path.to_path_buf(), source: None }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> OutputErrorKind {
        self.kind
    }

    /// The destination (or, for [`OutputErrorKind::StdoutIsInput`], the input file).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The operating system's error, if there was one.
    pub fn os_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path.display();
        match self.kind {
            OutputErrorKind::AlreadyExists => write!(f, "output file {p} already exists"),
            OutputErrorKind::IsDirectory => write!(f, "{p} is a directory"),
            OutputErrorKind::DanglingSymlink => {
                write!(f, "output file {p} is a symbolic link to a file that does not exist")
            }
            OutputErrorKind::SameFile => write!(f, "input file is output file: {p}"),
            OutputErrorKind::StdoutIsInput => {
                write!(f, "input file is output file: standard output is {p}")
            }
            OutputErrorKind::Create => write!(f, "cannot create {p}"),
            OutputErrorKind::Write => write!(f, "writing {p}"),
            OutputErrorKind::Commit => write!(f, "cannot write {p}"),
        }?;
        // The OS reason goes on the same line: the CLI prints only the first line of an error,
        // and "cannot create x" without "Permission denied" leaves the user guessing.
        match &self.source {
            Some(e) if !matches!(self.kind, OutputErrorKind::AlreadyExists) => {
                write!(f, ": {}", os_reason(e))
            }
            _ => Ok(()),
        }
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

impl From<OutputError> for io::Error {
    fn from(e: OutputError) -> io::Error {
        let kind = match (&e.source, e.kind) {
            (Some(s), _) => s.kind(),
            (None, OutputErrorKind::AlreadyExists) => io::ErrorKind::AlreadyExists,
            (None, _) => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, e)
    }
}

/// "No space left on device" rather than "No space left on device (os error 28)": the number
/// helps nobody reading a one-line message.
fn os_reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if e.raw_os_error().is_some() => s[..i].to_string(),
        _ => s,
    }
}
