//! Shell completions and the man page, generated from the same command tree the parser uses
//! (clap_complete, clap_mangen), so they can never disagree with it. `make install` writes them
//! next to the binary; users can also run `hyperseal completions zsh > _hyperseal`.

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use clap_complete::Shell;

/// `hyperseal completions SHELL`.
#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: ShellName,
}

/// The shells completions are made for.
#[derive(Clone, Copy, ValueEnum)]
enum ShellName {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

impl From<ShellName> for Shell {
    fn from(s: ShellName) -> Shell {
        match s {
            ShellName::Bash => Shell::Bash,
            ShellName::Zsh => Shell::Zsh,
            ShellName::Fish => Shell::Fish,
            ShellName::Elvish => Shell::Elvish,
            ShellName::Powershell => Shell::PowerShell,
        }
    }
}

/// Writes the completion script for `a.shell` to stdout.
pub fn completions(a: CompletionsArgs, mut command: clap::Command) -> Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(Shell::from(a.shell), &mut command, "hyperseal", &mut out);
    std::io::stdout().write_all(&out).context("cannot write the completions")
}

/// Writes the man page (roff) of `hyperseal` to stdout: synopsis, options and the subcommands
/// with their descriptions (each subcommand's own options are in its `--help`).
pub fn man(command: clap::Command) -> Result<()> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out).context("cannot render the man page")?;
    std::io::stdout().write_all(&out).context("cannot write the man page")
}
