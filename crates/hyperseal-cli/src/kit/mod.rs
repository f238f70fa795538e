//! Toolkit commands (hash, mac, kdf, hazmat, sign, verify, token): wired in from the toolkit crate.

use clap::Subcommand;

/// Toolkit subcommands.
#[derive(Subcommand)]
pub enum KitCommand {}

/// Runs a toolkit subcommand.
pub fn run(cmd: KitCommand) -> anyhow::Result<()> {
    match cmd {}
}
