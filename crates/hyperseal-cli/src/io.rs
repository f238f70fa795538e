//! Inputs, outputs and progress. Outputs named with `-o` are written to a temporary file in the
//! same directory and renamed into place only when the whole operation succeeded; on failure the
//! temporary file is removed and any existing file is untouched.

use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::hint;

/// An input: a file or stdin.
pub struct Input {
    pub reader: Box<dyn Read + Send>,
    /// Size in bytes when known (regular files).
    pub size: Option<u64>,
    pub path: Option<PathBuf>,
}

impl Input {
    pub fn open(path: Option<&Path>) -> Result<Input> {
        match path {
            None => Ok(Input { reader: Box::new(io::stdin()), size: None, path: None }),
            Some(p) if p.as_os_str() == "-" => {
                Ok(Input { reader: Box::new(io::stdin()), size: None, path: None })
            }
            Some(p) => {
                let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
                let meta = f.metadata()?;
                if meta.is_dir() {
                    anyhow::bail!("{} is a directory", p.display());
                }
                let size = meta.is_file().then_some(meta.len());
                Ok(Input { reader: Box::new(f), size, path: Some(p.to_path_buf()) })
            }
        }
    }
}

/// Where output goes.
pub enum Output {
    Stdout(io::Stdout),
    File { tmp: tempfile::NamedTempFile, dest: PathBuf, force: bool },
}

impl Output {
    /// Prepares the output. Refuses to replace an existing file without `force`, and to write to
    /// the input file itself.
    pub fn create(path: Option<&Path>, force: bool, input: Option<&Path>) -> Result<Output> {
        let Some(dest) = path.filter(|p| p.as_os_str() != "-") else {
            return Ok(Output::Stdout(io::stdout()));
        };
        if let (Some(i), Ok(d)) = (input, dest.canonicalize()) {
            if i.canonicalize().ok().as_deref() == Some(d.as_path()) {
                anyhow::bail!("input and output are the same file");
            }
        }
        if dest.exists() && !force {
            return Err(hint(
                format!("output file {} already exists", dest.display()),
                "use --force to overwrite it",
            ));
        }
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".hyperseal-")
            .suffix(".partial")
            .tempfile_in(&dir)
            .with_context(|| format!("cannot create a file in {}", dir.display()))?;
        Ok(Output::File { tmp, dest: dest.to_path_buf(), force })
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, Output::Stdout(s) if s.is_terminal())
    }

    /// Makes the output visible: renames the temporary file into place.
    pub fn commit(self) -> Result<()> {
        match self {
            Output::Stdout(mut s) => Ok(s.flush()?),
            Output::File { tmp, dest, force } => {
                tmp.as_file().sync_all().ok();
                let r = if force {
                    tmp.persist(&dest).map(|_| ())
                } else {
                    tmp.persist_noclobber(&dest).map(|_| ())
                };
                r.map_err(|e| anyhow::anyhow!("cannot write {}: {}", dest.display(), e.error))
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(s) => s.write(buf),
            Output::File { tmp, .. } => tmp.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(s) => s.write_all(buf),
            Output::File { tmp, .. } => tmp.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(s) => s.flush(),
            Output::File { tmp, .. } => tmp.flush(),
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

/// Reads a whole small file (keys, passphrases), with a clear error.
pub fn read_small(path: &Path, what: &str) -> Result<String> {
    let mut s = String::new();
    File::open(path)
        .and_then(|f| f.take(16 << 20).read_to_string(&mut s))
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    Ok(s)
}

/// Reads a passphrase file: the first line, without its newline. Errors do not repeat the path:
/// it may be the passphrase itself, typed where its file name belongs.
pub fn read_passphrase_file(path: &Path) -> Result<zeroize::Zeroizing<String>> {
    let mut text = zeroize::Zeroizing::new(String::new());
    File::open(path).and_then(|f| f.take(16 << 20).read_to_string(&mut text)).map_err(|e| {
        hint(
            format!("cannot read the --passphrase-file: {e}"),
            "--passphrase-file takes the name of a file whose first line is the passphrase",
        )
    })?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        anyhow::bail!("passphrase file {} is empty", path.display());
    }
    Ok(zeroize::Zeroizing::new(line.to_string()))
}

/// Prompts for a passphrase on the terminal (twice when `confirm`).
pub fn prompt_passphrase(confirm: bool) -> Result<zeroize::Zeroizing<String>> {
    if !io::stdin().is_terminal() && !io::stderr().is_terminal() {
        return Err(hint(
            "cannot prompt for a passphrase: no terminal",
            "use --passphrase-file FILE in scripts",
        ));
    }
    let p = zeroize::Zeroizing::new(rpassword::prompt_password("Enter passphrase: ")?);
    if p.is_empty() {
        anyhow::bail!("empty passphrase");
    }
    if confirm {
        let again = zeroize::Zeroizing::new(rpassword::prompt_password("Confirm passphrase: ")?);
        if *again != *p {
            anyhow::bail!("passphrases did not match");
        }
    }
    Ok(p)
}
