//! `token keygen|seal|open`: compact authenticated tokens (see `hyperseal_toolkit::token`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use hyperseal_toolkit::token::{self, KeyRing, Suite, TokenError, TokenKey};
use zeroize::Zeroizing;

#[derive(Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    cmd: TokenCmd,
}

#[derive(Subcommand)]
enum TokenCmd {
    /// Write a new token key file (mode 0600; never overwrites without --force).
    Keygen {
        /// Key file to create.
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Seal stdin into a token printed on stdout.
    Seal {
        /// Key file; its first key seals.
        #[arg(long)]
        key: PathBuf,
        /// Associated data that must be repeated to open the token.
        #[arg(long, default_value = "")]
        aad: String,
        /// Lifetime, e.g. 30s, 15m, 2h, 7d.
        #[arg(long, value_parser = parse_ttl)]
        ttl: Option<std::time::Duration>,
        /// xchacha20-poly1305 or aes-256-gcm-siv (default with AES-NI, else xchacha20-poly1305).
        #[arg(long, value_parser = parse_suite)]
        suite: Option<Suite>,
    },
    /// Open a token read from stdin; the plaintext goes to stdout.
    Open {
        /// Key file (one or more keys, one per line, for rotation).
        #[arg(long)]
        key: PathBuf,
        /// Associated data given when sealing.
        #[arg(long, default_value = "")]
        aad: String,
    },
}

fn parse_suite(s: &str) -> Result<Suite, String> {
    match s.to_ascii_lowercase().as_str() {
        "xchacha20-poly1305" => Ok(Suite::XChaCha20Poly1305),
        "aes-256-gcm-siv" => Ok(Suite::Aes256GcmSiv),
        _ => Err("expected xchacha20-poly1305 or aes-256-gcm-siv".to_string()),
    }
}

fn parse_ttl(s: &str) -> Result<std::time::Duration, String> {
    token::parse_ttl(s).map_err(|_| "expected a lifetime such as 30s, 15m, 2h or 7d".to_string())
}

/// A token on stdin as `seal` prints it ends with a line ending: CRLF at most.
const LINE_END: usize = 2;

fn ring(path: &std::path::Path) -> Result<KeyRing> {
    let text = zeroize::Zeroizing::new(crate::io::read_small(path, "token key file")?);
    KeyRing::from_key_file(&text).map_err(|e| {
        crate::errors::hint(
            format!("{}: {e}", path.display()),
            "create one with `hyperseal token keygen -o FILE`",
        )
    })
}

pub fn run(a: TokenArgs) -> Result<()> {
    match a.cmd {
        TokenCmd::Keygen { output, force } => {
            let key = TokenKey::generate();
            // crate::io::Output writes through a 0600 temp file and renames it into place.
            super::write_output(Some(&output), force, None, key.to_key_file().as_bytes(), false)?;
            eprintln!("Token key id: {}", hex::encode(key.id()));
            Ok(())
        }
        TokenCmd::Seal { key, aad, ttl, suite } => {
            let suite = suite.unwrap_or_default();
            let sealing = ring(&key)?
                .into_primary()
                .expect("a parsed key file holds at least one key")
                .with_suite(suite);
            // At most the plaintext a token is for, so every token written opens within
            // `open`'s bound below.
            let pt = super::read_all(None, token::MAX_PLAINTEXT as u64, "stdin")?;
            let t = token::seal(&sealing, &pt, aad.as_bytes(), ttl);
            let mut out = std::io::stdout().lock();
            writeln!(out, "{t}")?;
            Ok(())
        }
        TokenCmd::Open { key, aad } => {
            let ring = ring(&key)?;
            let input = read_token()?;
            let text = std::str::from_utf8(&input).map_err(|_| open_error(TokenError::Malformed))?;
            let pt = token::open(&ring, text.trim(), aad.as_bytes()).map_err(open_error)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&pt)?;
            out.flush()?;
            Ok(())
        }
    }
}

/// The token on stdin, within the longest token `seal` writes: a token comes from strangers,
/// and anything longer was not written by `seal`, so it is refused before it costs more memory.
fn read_token() -> Result<Zeroizing<Vec<u8>>> {
    let limit = token::MAX_TOKEN_LEN;
    let input = crate::io::read_at_most(std::io::stdin().lock(), limit + LINE_END, None)
        .map_err(|e| anyhow::anyhow!("cannot read stdin: {}", crate::io::reason(&e)))?;
    if input.len() > limit + LINE_END || input.trim_ascii().len() > limit {
        return Err(hyperseal::limits::too_long("the token", limit).into());
    }
    Ok(input)
}

fn open_error(e: TokenError) -> anyhow::Error {
    match e {
        TokenError::Malformed => {
            crate::errors::hint(e, "pass the token on stdin exactly as `hyperseal token seal` printed it")
        }
        TokenError::UnknownKeyId => {
            crate::errors::hint(e, "add the key it was sealed with to the key file (one key per line)")
        }
        TokenError::Auth => crate::errors::hint(e, "check that --aad is exactly the value used when sealing"),
        TokenError::Expired => anyhow::Error::new(e),
    }
}
