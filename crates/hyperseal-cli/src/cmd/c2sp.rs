//! `--format c2sp-chunked` for `hyperseal encrypt` and `decrypt`: C2SP chunked encryption
//! (c2sp.org/chunked-encryption) under a raw symmetric key, byte-compatible with pyca/cryptography's
//! `cryptography.cobblestone` (a 16-byte key is Cobblestone-128, a 32-byte key Cobblestone-256).
//!
//! The key file holds the raw key bytes and nothing else — what pyca's `generate_key()` returns,
//! written with `open(path, "wb").write(key)`, or `head -c 32 /dev/urandom > k`. Not hex: a
//! 32-byte file would be ambiguous between a raw 256-bit key and a hex 128-bit key.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use hyperseal::c2sp::{self, Key};
use zeroize::Zeroizing;

use crate::errors::hint;
use crate::io::{self, Input, Output};

/// The `--format` value.
pub const FORMAT: &str = "c2sp-chunked";

/// The options only c2sp-chunked takes.
#[derive(Args)]
pub struct C2spArgs {
    /// c2sp-chunked: file holding the raw key, exactly 16 bytes (Cobblestone-128) or 32
    /// (Cobblestone-256), e.g. made by `head -c 32 /dev/urandom`.
    #[arg(long = "key-file", value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// c2sp-chunked: context bound into the key derivation, in hex (default: empty). Decryption
    /// needs the same context.
    #[arg(long, value_name = "HEX")]
    context: Option<String>,
}

/// The options c2sp-chunked shares with the other formats.
pub struct Common<'a> {
    pub input: Option<&'a Path>,
    pub output: Option<&'a Path>,
    pub force: bool,
    pub quiet: bool,
    pub threads: Option<usize>,
}

/// Refuses `--key-file`/`--context` without `--format c2sp-chunked`, where they would be ignored.
pub fn reject_stray(c: &C2spArgs) -> Result<()> {
    if c.key_file.is_some() || c.context.is_some() {
        return Err(hint(
            "--key-file and --context apply only to --format c2sp-chunked",
            "add --format c2sp-chunked (its data has no header, so it is never detected)",
        ));
    }
    Ok(())
}

/// `hyperseal encrypt --format c2sp-chunked`. `other_options` names an option of the other
/// formats that was given too (recipients, passphrase, suite, armor…).
pub fn encrypt(c: &C2spArgs, io: Common, other_options: Option<&str>) -> Result<()> {
    if let Some(o) = other_options {
        return Err(hint(
            format!("{o} does not apply to --format c2sp-chunked"),
            "it takes --key-file and --context",
        ));
    }
    let (key, context) = key_and_context(c)?;
    let input = Input::open(io.input)?;
    let mut output = Output::create(io.output, io.force, input.path.as_deref())?;
    if output.is_terminal() {
        return Err(hint("refusing to write binary ciphertext to a terminal", "use -o FILE or a pipe"));
    }
    let bar = io::progress_bar(io.quiet, input.size, "encrypting");
    let mut reader = with_progress(input.reader, &bar);
    c2sp::encrypt_stream(&key, &context, &mut reader, &mut output, threads(io.threads))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    output.commit()
}

/// `hyperseal decrypt --format c2sp-chunked`: whole streams through the pipeline, or a range
/// (`--offset`/`--length`) through the seekable reader, which authenticates the final chunk first.
pub fn decrypt(
    c: &C2spArgs,
    io: Common,
    other_options: Option<&str>,
    range: (Option<u64>, Option<u64>),
) -> Result<()> {
    if let Some(o) = other_options {
        return Err(hint(
            format!("{o} does not apply to --format c2sp-chunked"),
            "it takes --key-file and --context",
        ));
    }
    let (key, context) = key_and_context(c)?;
    let input = Input::open(io.input)?;
    let mut output = Output::create(io.output, io.force, input.path.as_deref())?;
    let threads = threads(io.threads);
    if range.0.is_some() || range.1.is_some() {
        let Some(path) = input.path.as_deref().filter(|_| input.size.is_some()) else {
            return Err(hint(
                "--offset/--length need a regular input file",
                "decrypt the whole stream instead",
            ));
        };
        let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut reader = c2sp::Reader::new(&key, &context, file)?.threads(threads);
        reader.seek(SeekFrom::Start(range.0.unwrap_or(0)))?;
        std::io::copy(&mut reader.take(range.1.unwrap_or(u64::MAX)), &mut output)
            .map_err(|e| anyhow::Error::new(hyperseal::Error::from(e)))?;
    } else {
        let bar = io::progress_bar(io.quiet, input.size, "decrypting");
        let mut reader = with_progress(input.reader, &bar);
        let r = c2sp::decrypt_stream(&key, &context, &mut reader, &mut output, threads);
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        r?;
    }
    output.commit()
}

fn key_and_context(c: &C2spArgs) -> Result<(Key, Vec<u8>)> {
    let Some(path) = &c.key_file else {
        return Err(hint(
            "--format c2sp-chunked needs --key-file FILE",
            "make a key with `head -c 32 /dev/urandom > FILE`",
        ));
    };
    let context = match &c.context {
        None => Vec::new(),
        Some(h) => hex::decode(h.trim()).map_err(|_| {
            hint(
                format!("--context {h:?} is not hex"),
                "give the context bytes in hex, e.g. --context 6d792d617070",
            )
        })?,
    };
    Ok((read_key(path)?, context))
}

/// Reads a raw 16- or 32-byte key; explains the usual mistakes (a hex file, a trailing newline).
fn read_key(path: &Path) -> Result<Key> {
    let mut bytes = Zeroizing::new(Vec::new());
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read key file {}", path.display()))?;
    if let Ok(k) = Key::from_bytes(&bytes) {
        return Ok(k);
    }
    let text = std::str::from_utf8(&bytes).unwrap_or("").trim();
    let looks_hex = matches!(text.len(), 32 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit());
    let fix = if looks_hex {
        "the file looks like hex; store the raw bytes instead: `xxd -r -p HEXFILE > KEYFILE`"
    } else {
        "a c2sp-chunked key file holds exactly 16 or 32 raw bytes (no newline), e.g. `head -c 32 /dev/urandom`"
    };
    Err(hint(format!("key file {} holds {} bytes, not 16 or 32", path.display(), bytes.len()), fix))
}

fn threads(t: Option<usize>) -> usize {
    t.unwrap_or_else(hyperseal::available_threads).max(1)
}

fn with_progress(r: Box<dyn Read + Send>, bar: &Option<indicatif::ProgressBar>) -> Box<dyn Read + Send> {
    match bar {
        Some(b) => Box::new(b.wrap_read(r)),
        None => r,
    }
}
