//! Inputs, outputs and progress. Outputs named with `-o` go through the library's
//! [`AtomicOutput`]: a regular file appears complete or not at all (an unnamed `O_TMPFILE` on
//! Linux, linked into place only when the whole operation succeeded), an existing file is
//! replaced only with `--force`, and devices and FIFOs are written through.

use std::fs::{File, Metadata};
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use hyperseal::output::{refuse_stdout_is_input, AtomicOutput, OutputError, OutputErrorKind, OutputOptions};
use indicatif::{ProgressBar, ProgressStyle};
use zeroize::Zeroizing;

use crate::errors::hint;

/// An input: a file or stdin.
pub struct Input {
    pub reader: Box<dyn Read + Send>,
    /// Size in bytes when known (regular files).
    pub size: Option<u64>,
    pub path: Option<PathBuf>,
    /// Read through its re-key journal's header ([`Input::open_encrypted`]).
    pub torn: bool,
    /// The same open file (sharing `reader`'s position) when it is a regular file read as it
    /// is: the library reads it at offsets from every core ([`hyperseal::Encryptor::encrypt_file`]).
    pub file: Option<File>,
}

impl Input {
    /// [`Input::open`] for an encrypted file: a file whose header was torn by a crash during an
    /// in-place re-key (a power cut mid-write) is read with the header its re-key journal says
    /// it settles to, read-only; the file itself is left for the next `rekey` to finish. Any
    /// other file reads as it is.
    pub fn open_encrypted(path: Option<&Path>) -> Result<Input> {
        let mut input = Input::open(path)?;
        if let (Some(p), Some(_)) = (&input.path, input.size) {
            let f = File::open(p)?;
            if let Some(head) = hyperseal::rekey::settled_head(p, &f) {
                let mut rest = f;
                io::Seek::seek(&mut rest, io::SeekFrom::Start(head.len() as u64))?;
                input.reader = Box::new(io::Cursor::new(head).chain(rest));
                input.torn = true;
                input.file = None;
            }
        }
        Ok(input)
    }

    pub fn open(path: Option<&Path>) -> Result<Input> {
        match path {
            None => {
                Ok(Input { reader: Box::new(io::stdin()), size: None, path: None, torn: false, file: None })
            }
            Some(p) if p.as_os_str() == "-" => {
                Ok(Input { reader: Box::new(io::stdin()), size: None, path: None, torn: false, file: None })
            }
            Some(p) => {
                let f = File::open(p)
                    .map_err(|e| anyhow::anyhow!("cannot open {}: {}", p.display(), reason(&e)))?;
                let meta = f.metadata()?;
                if meta.is_dir() {
                    anyhow::bail!("{} is a directory", p.display());
                }
                let size = meta.is_file().then_some(meta.len());
                let file = match meta.is_file() {
                    true => f.try_clone().ok(),
                    false => None,
                };
                Ok(Input { reader: Box::new(f), size, path: Some(p.to_path_buf()), torn: false, file })
            }
        }
    }
}

/// The OS error without its number (the OS seam's, which words its own errors with it).
pub use crate::sys::reason;

/// Where output goes.
pub enum Output {
    /// Standard output; counts the bytes that went out (they cannot be taken back).
    Stdout {
        out: io::Stdout,
        written: u64,
    },
    File(AtomicOutput),
}

impl Output {
    /// Prepares the output. `input` is the input file (`None`: standard input). Refuses to write
    /// into the input (also through stdout, as `cat` does), to replace an existing file without
    /// `force`, a directory, and a symbolic link to nothing.
    pub fn create(path: Option<&Path>, force: bool, input: Option<&Path>) -> Result<Output> {
        let (input_meta, input_name) = input_identity(input);
        let Some(dest) = path.filter(|p| p.as_os_str() != "-") else {
            if let Some(m) = &input_meta {
                refuse_stdout_is_input(m, &input_name).map_err(output_error)?;
            }
            return Ok(Output::Stdout { out: io::stdout(), written: 0 });
        };
        let mut options = OutputOptions::new().force(force);
        if let Some(m) = &input_meta {
            options = options.input(m);
        }
        Ok(Output::File(options.create(dest).map_err(output_error)?))
    }

    pub fn is_terminal(&self) -> bool {
        match self {
            Output::Stdout { out, .. } => out.is_terminal(),
            Output::File(f) => f.is_terminal(),
        }
    }

    /// Makes the output visible: links the finished file into place.
    pub fn commit(self) -> Result<()> {
        match self {
            Output::Stdout { mut out, .. } => Ok(out.flush()?),
            Output::File(f) => f.commit().map_err(output_error),
        }
    }

    /// Rewords a failure after which bytes already reached their reader (stdout, a device, a
    /// FIFO): the "no output file was written" hint for a damaged file would be false there.
    pub fn failed(&self, e: anyhow::Error) -> anyhow::Error {
        let (name, n) = match self {
            Output::Stdout { written, .. } => ("standard output".to_string(), *written),
            Output::File(f) if f.is_write_through() => (f.path().display().to_string(), f.bytes_written()),
            Output::File(_) => return e,
        };
        let damaged = matches!(
            e.downcast_ref::<hyperseal::Error>(),
            Some(hyperseal::Error::ChunkAuth(_) | hyperseal::Error::Truncated(_))
        );
        if n == 0 || !damaged {
            return e;
        }
        // As context, so the library error stays in the chain (age mode words it its own way).
        let msg = e.to_string();
        e.context(crate::errors::Hinted {
            msg,
            hint: format!(
                "the file is damaged or was modified; the {n} bytes already written to {name} are \
                 only its authenticated beginning: discard them"
            ),
            usage: false,
        })
    }
}

/// The input's metadata (for the same-file checks) and a name for messages.
fn input_identity(input: Option<&Path>) -> (Option<Metadata>, PathBuf) {
    match input.filter(|p| p.as_os_str() != "-") {
        Some(p) => (std::fs::metadata(p).ok(), p.to_path_buf()),
        None => (crate::sys::stdin_metadata(), PathBuf::from("standard input")),
    }
}

/// One line, with a hint where there is a next step.
fn output_error(e: OutputError) -> anyhow::Error {
    match e.kind() {
        OutputErrorKind::AlreadyExists => hint(e, "use --force to overwrite it"),
        OutputErrorKind::DanglingSymlink => hint(e, "give the path of the file itself, or remove the link"),
        _ => anyhow::Error::new(e),
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout { out, written } => {
                let n = out.write(buf)?;
                *written += n as u64;
                Ok(n)
            }
            Output::File(f) => f.write(buf),
        }
    }
    // Passed on, so the library's gathering writes stay one `writev` per batch.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Output::Stdout { out, written } => {
                let n = out.write_vectored(bufs)?;
                *written += n as u64;
                Ok(n)
            }
            Output::File(f) => f.write_vectored(bufs),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            // One lock of stdout per call, as before, and the count for `failed`.
            Output::Stdout { out, written } => {
                out.write_all(buf)?;
                *written += buf.len() as u64;
                Ok(())
            }
            Output::File(f) => f.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout { out, .. } => out.flush(),
            Output::File(f) => f.flush(),
        }
    }
}

/// A progress bar on stderr for large inputs when stderr is a terminal.
pub fn progress_bar(quiet: bool, size: Option<u64>, verb: &str) -> Option<ProgressBar> {
    const WORTH_A_BAR: u64 = 64 << 20;
    if quiet || !io::stderr().is_terminal() || size.is_some_and(|s| s < WORTH_A_BAR) {
        return None;
    }
    let bar = match size {
        Some(s) => ProgressBar::new(s).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{msg} {bytes} {bytes_per_sec}").expect("valid template"),
        ),
    };
    bar.set_message(verb.to_string());
    Some(bar)
}

/// Reads the file at `path` within `limit` bytes; past it, the library's budget error
/// (`input too large: {what} is longer than 64 KiB`, with its hint). At most `limit + 1` bytes
/// are ever read, so `/dev/zero`, a FIFO that never ends or a huge sparse file costs no more
/// memory or time than the budget. I/O errors go through `on_error`, which words them (some
/// messages must not repeat a path that may be a secret typed in its place).
pub fn read_file_within(
    path: &Path,
    limit: usize,
    what: &str,
    on_error: impl FnOnce(io::Error) -> anyhow::Error,
) -> Result<Zeroizing<Vec<u8>>> {
    let read = || {
        let f = File::open(path)?;
        let size = f.metadata().ok().filter(Metadata::is_file).map(|m| m.len());
        read_at_most(f, limit, size)
    };
    within(read().map_err(on_error)?, limit, what)
}

/// Up to `limit + 1` bytes of `reader` (one past the limit tells a caller that checks the
/// length itself that there was more). A regular file's `size` sizes the buffer once, so a
/// secret is not left behind in the blocks a growing buffer frees.
pub fn read_at_most(reader: impl Read, limit: usize, size: Option<u64>) -> io::Result<Zeroizing<Vec<u8>>> {
    let cap = limit as u64 + 1;
    let mut buf =
        Zeroizing::new(Vec::with_capacity(size.map_or(0, |s| s.saturating_add(1).min(cap)) as usize));
    reader.take(cap).read_to_end(&mut buf)?;
    Ok(buf)
}

fn within(bytes: Zeroizing<Vec<u8>>, limit: usize, what: &str) -> Result<Zeroizing<Vec<u8>>> {
    if bytes.len() > limit {
        return Err(hyperseal::limits::too_long(what, limit).into());
    }
    Ok(bytes)
}

/// Writes a new key file (mode 0600, never over an existing file), or to stdout.
pub fn write_new_key(output: Option<&Path>, text: &str) -> Result<()> {
    match output {
        Some(path) => {
            let mut f = crate::sys::create_private(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => hint(
                    format!("{} already exists", path.display()),
                    "keygen never overwrites a key; pick another name",
                ),
                _ => anyhow::Error::new(e).context(format!("cannot create {}", path.display())),
            })?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(())
}

/// Reads a whole small text file (keys, recipients), within the budget of an identity or
/// recipients file ([`hyperseal::limits::KEY_FILE`]), with a clear error.
pub fn read_small(path: &Path, what: &str) -> Result<String> {
    read_small_within(path, what, hyperseal::limits::KEY_FILE)
}

/// [`read_small`] within `limit` bytes (one PEM key: [`hyperseal::limits::KEY_TEXT`]).
pub fn read_small_within(path: &Path, what: &str, limit: usize) -> Result<String> {
    let cannot = |e: &io::Error| anyhow::anyhow!("cannot read {what} {}: {}", path.display(), reason(e));
    let mut bytes = read_file_within(path, limit, &format!("the {what} {}", path.display()), |e| cannot(&e))?;
    String::from_utf8(std::mem::take(&mut *bytes)).map_err(|e| {
        // Zeroized: the bytes may be a secret key.
        drop(Zeroizing::new(e.into_bytes()));
        cannot(&io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
    })
}

/// Reads a passphrase file: the first line, without its newline, within the budget of one key
/// text ([`hyperseal::limits::KEY_TEXT`]; what follows the first line is not read past it).
/// Errors do not repeat the path: it may be the passphrase itself, typed where its file name
/// belongs.
pub fn read_passphrase_file(path: &Path) -> Result<Zeroizing<String>> {
    const LIMIT: usize = hyperseal::limits::KEY_TEXT;
    let cannot = |e: io::Error| {
        hint(
            format!("cannot read the --passphrase-file: {e}"),
            "--passphrase-file takes the name of a file whose first line is the passphrase",
        )
    };
    let read = || read_at_most(File::open(path)?, LIMIT, None);
    let bytes = read().map_err(cannot)?;
    let line = match bytes.iter().position(|&b| b == b'\n') {
        Some(end) => &bytes[..end],
        None if bytes.len() > LIMIT => {
            return Err(hyperseal::limits::too_long("the passphrase", LIMIT).into())
        }
        None => &bytes[..],
    };
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = std::str::from_utf8(line).map_err(|_| {
        cannot(io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
    })?;
    if line.is_empty() {
        anyhow::bail!("passphrase file {} is empty", path.display());
    }
    Ok(Zeroizing::new(line.to_string()))
}

/// Prompts for a passphrase on the controlling terminal (twice when `confirm`), see
/// [`crate::terminal`].
pub fn prompt_passphrase(confirm: bool) -> Result<zeroize::Zeroizing<String>> {
    let ask = |prompt: &str| {
        crate::terminal::read_secret(prompt).map_err(|e| {
            hint(format!("cannot prompt for a passphrase: {e}"), "use --passphrase-file FILE in scripts")
        })
    };
    let p = ask("Enter passphrase:")?;
    if p.is_empty() {
        anyhow::bail!("empty passphrase");
    }
    if confirm && *ask("Confirm passphrase:")? != *p {
        anyhow::bail!("passphrases did not match");
    }
    Ok(p)
}
