//! Input and output files for command-line tools: age's `InputReader`, `OutputWriter` and
//! `OutputFormat`. No cryptography here; the rules are age's: `-` is standard input or output,
//! an output file is created only when the first byte is written (a failed run leaves none),
//! an existing file is replaced only when allowed, and binary output to a terminal is refused.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Read, Write};

#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;

/// A file being read, and its name.
pub struct FileReader {
    inner: File,
    filename: String,
}

/// Either a file or standard input.
pub enum InputReader {
    /// A file.
    File(FileReader),
    /// Standard input.
    Stdin(io::Stdin),
}

impl InputReader {
    /// Reads the given file, or standard input for `None` or `Some("-")`.
    pub fn new(input: Option<String>) -> io::Result<Self> {
        match input {
            Some(filename) if filename != "-" => {
                Ok(InputReader::File(FileReader { inner: File::open(&filename)?, filename }))
            }
            _ => Ok(InputReader::Stdin(io::stdin())),
        }
    }

    /// Whether the input is a terminal (a user is likely typing it).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Stdin(_)) && io::stdin().is_terminal()
    }

    pub(crate) fn filename(&self) -> Option<&str> {
        match self {
            Self::File(f) => Some(&f.filename),
            Self::Stdin(_) => None,
        }
    }
}

impl Read for InputReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            InputReader::File(f) => f.inner.read(buf),
            InputReader::Stdin(s) => s.read(buf),
        }
    }
}

/// What the output will hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// Binary data (an age file): refused on a terminal.
    Binary,
    /// Text (an armored file, a key).
    Text,
    /// Not known (a decryption's plaintext).
    Unknown,
}

/// A file created when the first byte is written.
pub struct LazyFile {
    filename: String,
    allow_overwrite: bool,
    #[cfg(unix)]
    mode: u32,
    file: Option<io::Result<File>>,
}

impl LazyFile {
    fn file(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            let mut options = OpenOptions::new();
            options.write(true);
            match self.allow_overwrite {
                true => options.create(true).truncate(true),
                false => options.create_new(true),
            };
            #[cfg(unix)]
            options.mode(self.mode);
            self.file = Some(options.open(&self.filename).map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => io::Error::new(
                    e.kind(),
                    format!("output file {} exists; it is never overwritten unless asked", self.filename),
                ),
                _ => e,
            }));
        }
        match self.file.as_mut().expect("opened above") {
            Ok(f) => Ok(f),
            Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
        }
    }
}

impl Write for LazyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(Ok(f)) => f.flush(),
            _ => Ok(()),
        }
    }
}

/// Standard output, refusing binary data on a terminal.
pub struct StdoutWriter {
    inner: io::Stdout,
    refuse_binary: bool,
}

impl Write for StdoutWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.refuse_binary && !buf.is_empty() {
            return Err(io::Error::other(
                "refusing to output binary to the terminal; did you mean to use -a/--armor? \
                 Redirect the output, or pass -o -, to force it",
            ));
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Either a file (created lazily) or standard output.
pub enum OutputWriter {
    /// A file.
    File(LazyFile),
    /// Standard output.
    Stdout(StdoutWriter),
}

impl OutputWriter {
    /// Writes to the given file, or standard output for `None` or `Some("-")` (`-` also lets
    /// binary data reach a terminal). `mode` is the new file's permissions (Unix);
    /// `input_is_tty` says whether the input is being typed.
    pub fn new(
        output: Option<String>,
        allow_overwrite: bool,
        format: OutputFormat,
        mode: u32,
        input_is_tty: bool,
    ) -> io::Result<Self> {
        let _ = input_is_tty;
        #[cfg(not(unix))]
        let _ = mode;
        match output {
            Some(filename) if filename != "-" => Ok(OutputWriter::File(LazyFile {
                filename,
                allow_overwrite,
                #[cfg(unix)]
                mode,
                file: None,
            })),
            forced => {
                let refuse_binary =
                    forced.is_none() && format == OutputFormat::Binary && io::stdout().is_terminal();
                Ok(OutputWriter::Stdout(StdoutWriter { inner: io::stdout(), refuse_binary }))
            }
        }
    }

    /// Whether the output is a terminal.
    pub fn is_terminal(&self) -> bool {
        matches!(self, OutputWriter::Stdout(_)) && io::stdout().is_terminal()
    }
}

impl Write for OutputWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutputWriter::File(f) => f.write(buf),
            OutputWriter::Stdout(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutputWriter::File(f) => f.flush(),
            OutputWriter::Stdout(s) => s.flush(),
        }
    }
}
