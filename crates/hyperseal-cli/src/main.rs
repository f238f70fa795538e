//! `hyperseal`: the command line. Uses only the library's public API; turns library errors into
//! one line `hyperseal: error: …` plus a `hyperseal: hint: …` where one helps.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod io;
mod kit;

#[derive(Parser)]
#[command(
    name = "hyperseal",
    version,
    about = "Fast, safe file encryption: post-quantum by default, age-compatible, every core."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a key pair (file mode 0600, never overwrites); prints the public key on stderr.
    Keygen(cmd::keys::KeygenArgs),
    /// Print the recipient (public key) of an identity file.
    Pubkey(cmd::keys::PubkeyArgs),
    /// Encrypt a file or stream to recipients or a passphrase.
    Encrypt(cmd::encrypt::EncryptArgs),
    /// Decrypt a file or stream; nothing is written unless it authenticates.
    Decrypt(cmd::decrypt::DecryptArgs),
    /// Describe an encrypted file (format, suite, recipients, sizes); never prints secrets.
    Inspect(cmd::inspect::InspectArgs),
    #[command(flatten)]
    Kit(kit::KitCommand),
}

/// An error with a hint line, for errors where the next step is not obvious.
#[derive(Debug)]
pub struct Hinted {
    msg: String,
    hint: String,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Hinted {}

/// Attaches a hint to an error message.
pub fn hint(err: impl std::fmt::Display, hint: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(Hinted { msg: err.to_string(), hint: hint.to_string() })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Keygen(a) => cmd::keys::keygen(a),
        Command::Pubkey(a) => cmd::keys::pubkey(a),
        Command::Encrypt(a) => cmd::encrypt::run(a),
        Command::Decrypt(a) => cmd::decrypt::run(a),
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Kit(k) => kit::run(k),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&e);
            ExitCode::from(1)
        }
    }
}

fn report(e: &anyhow::Error) {
    // A closed pipe downstream (`| head`) is not an error worth a message.
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        if io.kind() == std::io::ErrorKind::BrokenPipe {
            return;
        }
    }
    let line: String = e.to_string().lines().next().unwrap_or("").to_string();
    eprintln!("hyperseal: error: {line}");
    if let Some(h) = e.downcast_ref::<Hinted>() {
        eprintln!("hyperseal: hint: {}", h.hint);
    } else if let Some(lib) = e.downcast_ref::<hyperseal::Error>() {
        if let Some(h) = cmd::library_hint(lib) {
            eprintln!("hyperseal: hint: {h}");
        }
    }
}
