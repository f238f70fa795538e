//! Toolkit commands (hash, mac, kdf, hazmat, sign, verify, token), built on the public API of
//! `hyperseal-toolkit`. One file per command group; shared input/output helpers live here and
//! in `crate::io` (which writes `-o` outputs atomically and never overwrites without --force).

mod digest;
mod hazmat;
mod kdf;
mod sign;
mod token;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use zeroize::Zeroizing;

use crate::io::{Input, Output};

/// Toolkit subcommands.
#[derive(Subcommand)]
pub enum ToolkitCommand {
    /// Print or check message digests (output format of sha256sum/b2sum).
    Hash(digest::HashArgs),
    /// Print HMAC tags of files.
    Mac(digest::MacArgs),
    /// Derive a key from a password (pbkdf2, argon2id, scrypt) or key material (hkdf).
    Kdf(kdf::KdfArgs),
    /// HAZARDOUS: unauthenticated legacy AES-CBC/CTR/ECB, compatible with `openssl enc -K -iv`.
    Hazmat(hazmat::HazmatArgs),
    /// Sign a file with a PEM private key (Ed25519, ECDSA P-256, RSA, ML-DSA-65).
    Sign(sign::SignArgs),
    /// Verify a file's signature with a PEM public key.
    Verify(sign::VerifyArgs),
    /// Compact authenticated tokens: keygen, seal, open.
    Token(token::TokenArgs),
}

/// Runs a toolkit subcommand.
pub fn run(cmd: ToolkitCommand) -> Result<()> {
    match cmd {
        ToolkitCommand::Hash(a) => digest::hash(a),
        ToolkitCommand::Mac(a) => digest::mac(a),
        ToolkitCommand::Kdf(a) => kdf::run(a),
        ToolkitCommand::Hazmat(a) => hazmat::run(a),
        ToolkitCommand::Sign(a) => sign::sign(a),
        ToolkitCommand::Verify(a) => sign::verify(a),
        ToolkitCommand::Token(a) => token::run(a),
    }
}

/// Reads a whole input (`-` or no path means stdin), refusing anything over `limit` bytes.
fn read_all(path: Option<&Path>, limit: u64, what: &str) -> Result<Zeroizing<Vec<u8>>> {
    let input = Input::open(path)?;
    let mut buf = Zeroizing::new(Vec::with_capacity(input.size.unwrap_or(0).min(limit) as usize));
    input.reader.take(limit + 1).read_to_end(&mut buf).with_context(|| format!("cannot read {what}"))?;
    if buf.len() as u64 > limit {
        anyhow::bail!("{what} is larger than {} MiB, which this command reads into memory", limit >> 20);
    }
    Ok(buf)
}

/// Writes `data` to `-o PATH` atomically (temp file + rename), or to stdout. Refuses to put
/// binary data on a terminal.
fn write_output(
    path: Option<&PathBuf>,
    force: bool,
    input: Option<&Path>,
    data: &[u8],
    binary: bool,
) -> Result<()> {
    let mut out = Output::create(path.map(PathBuf::as_path), force, input)?;
    if binary && out.is_terminal() {
        return Err(crate::errors::hint(
            "refusing to write binary output to a terminal",
            "use -o FILE or redirect stdout",
        ));
    }
    out.write_all(data)?;
    out.commit()
}

/// Decodes a hex argument, naming it in the error.
fn parse_hex(s: &str, what: &str) -> Result<Zeroizing<Vec<u8>>> {
    hex::decode(s.trim()).map(Zeroizing::new).map_err(|_| {
        crate::errors::hint(
            format!("{what} is not valid hex"),
            format!("pass {what} as hex digits, e.g. 00112233…"),
        )
    })
}

/// Whether stdout is a terminal (for binary-output refusals).
fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}
