//! `hyperseal header`: detached headers, as age 1.3 defines them. `extract` copies a file's
//! header (the bytes age's `ExtractHeader` gives); `decrypt` opens a header alone where the
//! identities are, and hands its file key on through a descriptor, so that the payload can be
//! opened elsewhere (`hyperseal decrypt --file-key-fd`) without the identities travelling.
//!
//! A file key opens its file as well as any identity does, so it goes only to the descriptor
//! the caller named, never to a terminal, and is never printed or written to a named file here.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use hyperseal::detached::{self, FileKeyIdentity};
use hyperseal::format::Header;
use hyperseal::recipient::{self, Identity};
use hyperseal::{limits, FileKey};

use crate::errors::hint;
use crate::io::{self, Input, Output};

#[derive(Args)]
pub struct HeaderArgs {
    #[command(subcommand)]
    command: HeaderCommand,
}

#[derive(Subcommand)]
enum HeaderCommand {
    /// Write a file's header (the version line through the MAC line), byte for byte as age's
    /// ExtractHeader: it can be opened alone, on another machine, by `header decrypt`.
    Extract(ExtractArgs),
    /// Open a detached header with identities and write its file key (16 or 32 raw bytes) to the
    /// descriptor --file-key-fd names; `decrypt --file-key-fd` then opens the file with it.
    Decrypt(DecryptArgs),
}

#[derive(Args)]
struct ExtractArgs {
    /// Output file (default: stdout).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    force: bool,
    /// Encrypted file, not armored (default or `-`: stdin).
    input: Option<PathBuf>,
}

#[derive(Args)]
struct DecryptArgs {
    /// Identity file (as for `decrypt -i`); repeatable.
    #[arg(short = 'i', long = "identity")]
    identities: Vec<PathBuf>,
    /// Passphrase of protected identity files, first line of FILE; default: ask.
    #[arg(long = "identity-passphrase-file")]
    identity_passphrase_file: Option<PathBuf>,
    /// Use age-plugin-NAME's identity without data (age's -j NAME); repeatable.
    #[arg(short = 'j', long = "plugin", value_name = "NAME")]
    plugins: Vec<String>,
    /// Open a passphrase file's header with the passphrase on the first line of FILE.
    #[arg(long = "passphrase-file")]
    passphrase_file: Option<PathBuf>,
    /// Descriptor to write the file key to (open it in the shell: `3>key.bin`, or a pipe); a
    /// terminal is refused.
    #[arg(long = "file-key-fd", value_name = "N", value_parser = clap::value_parser!(i32).range(0..))]
    file_key_fd: i32,
    /// The header (as `header extract` wrote it, or the whole file; default or `-`: stdin).
    header: Option<PathBuf>,
}

pub fn run(a: HeaderArgs) -> Result<()> {
    match a.command {
        HeaderCommand::Extract(a) => extract(a),
        HeaderCommand::Decrypt(a) => decrypt(a),
    }
}

fn extract(a: ExtractArgs) -> Result<()> {
    // A header torn by a crash mid-re-key reads as the header its journal settles to.
    let input = Input::open_encrypted(a.input.as_deref())?;
    let header = detached::extract_header(input.reader).map_err(armor_hint)?;
    let mut output = Output::create(a.output.as_deref(), a.force, input.path.as_deref())?;
    output.write_all(&header)?;
    output.commit()
}

fn decrypt(a: DecryptArgs) -> Result<()> {
    // The descriptor first: a terminal is refused before anyone is asked for a passphrase.
    let mut sink = descriptor(a.file_key_fd)?;
    if crate::sys::fd::is_null_device(&sink) {
        return Err(hint(
            format!(
                "descriptor {} is closed or /dev/null: the file key would be written nowhere",
                a.file_key_fd
            ),
            "open it in the shell for the command, e.g. `--file-key-fd 3 3>key.bin`",
        ));
    }
    let mut identities: Vec<Box<dyn Identity>> =
        super::identity::load_identities(&a.identities, a.identity_passphrase_file.as_deref())?;
    identities.extend(super::identity::plugin_identities(&a.plugins)?);
    let input = Input::open(a.header.as_deref())?;
    // A header is at most the header budget; a whole file given instead is read no further.
    let mut bytes = io::read_at_most(input.reader, limits::HEADER_BYTES, input.size)?;
    bytes.truncate(limits::HEADER_BYTES);
    let header = Header::read_from(&mut &bytes[..]).map_err(armor_hint)?;
    if header.is_passphrase() {
        if !a.identities.is_empty() && a.passphrase_file.is_none() {
            return Err(hint(
                "this header is of a file encrypted with a passphrase",
                "use --passphrase-file FILE, or omit -i to be prompted",
            ));
        }
        let passphrase = match &a.passphrase_file {
            Some(p) => io::read_passphrase_file(p)?,
            None => io::prompt_passphrase(false)?,
        };
        identities.push(recipient::passphrase_identity_for(&header, passphrase));
    } else {
        identities.extend(super::identity::agent_identity());
    }
    if identities.is_empty() {
        return Err(hint("no identities", "give -i IDENTITY_FILE (or -j NAME for a plugin)"));
    }
    let key = detached::decrypt_header(&bytes, &identities)?;
    sink.write_all(key.expose()).and_then(|()| sink.flush()).map_err(|e| {
        anyhow::anyhow!("cannot write the file key to descriptor {}: {}", a.file_key_fd, io::reason(&e))
    })?;
    Ok(())
}

/// The identity of the file key read from descriptor `fd` (`decrypt --file-key-fd`): exactly
/// the 16 or 32 bytes `header decrypt` wrote.
pub fn file_key_identity(fd: i32) -> Result<Box<dyn Identity>> {
    let source = descriptor(fd)?;
    // One byte past the longest key tells a longer input from a key.
    let bytes = io::read_at_most(source, 32, None)
        .map_err(|e| anyhow::anyhow!("cannot read the file key from descriptor {fd}: {}", io::reason(&e)))?;
    let key = FileKey::from_slice(&bytes).ok_or_else(|| {
        hint(
            format!("descriptor {fd} holds {} bytes, not a file key (16 or 32)", bytes.len()),
            "pass what `hyperseal header decrypt --file-key-fd` wrote, unchanged",
        )
    })?;
    Ok(Box::new(FileKeyIdentity::new(key)))
}

/// Checks that `key_identity` opens `header` before any output exists, so a key of another file
/// is reported as that, not as a damaged file after an output was prepared.
pub fn check_file_key(header: &Header, key_identity: Box<dyn Identity>) -> Result<Box<dyn Identity>> {
    let ids = [key_identity];
    match detached::decrypt_header(&header.encode(header.mac()), &ids) {
        Ok(_) => Ok(ids.into_iter().next().expect("one identity")),
        Err(hyperseal::Error::HeaderMac) => Err(hint(
            "the file key does not open this file (its header MAC does not verify)",
            "the key came from another file's header, or this file's header was modified",
        )),
        Err(e) => Err(e.into()),
    }
}

/// The caller's descriptor `fd`, refused when it is a terminal: a file key must not be shown,
/// nor typed where it echoes.
fn descriptor(fd: i32) -> Result<File> {
    let file = crate::sys::fd::named_descriptor(fd).map_err(|e| {
        hint(
            format!("cannot use descriptor {fd}: {}", io::reason(&e)),
            "open it in the shell for the command, e.g. `3>key.bin` (write) or `3<key.bin` (read)",
        )
    })?;
    if file.is_terminal() {
        return Err(hint(
            format!("descriptor {fd} is a terminal, and a file key is a secret"),
            "send it to a file or a pipe instead, e.g. `--file-key-fd 3 3>key.bin`",
        ));
    }
    Ok(file)
}

/// Armored input gets a hint: a detached header is the binary file's, as in age.
fn armor_hint(e: hyperseal::Error) -> anyhow::Error {
    match e {
        hyperseal::Error::Armor(_) => {
            hint(e, "the armor is base64 between its BEGIN and END lines: `sed '1d;$d' FILE | base64 -d` gives the binary file")
        }
        e => e.into(),
    }
}
