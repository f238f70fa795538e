//! `hyperseal`: the command line. Uses only the library's public API; turns library errors into
//! one line `hyperseal: error: …` plus a `hyperseal: hint: …` where one helps.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

#[cfg(any(unix, windows))]
mod cmd;
mod errors;
mod io;
mod sys;
mod terminal;
mod toolkit;

/// The system allocator; the agent process has it zero every block it frees (`hyperseal_agent::wipe`).
#[global_allocator]
static ALLOCATOR: hyperseal_agent::wipe::WipeOnFree = hyperseal_agent::wipe::WipeOnFree;

#[derive(Parser)]
#[command(
    name = "hyperseal",
    version = env!("HYPERSEAL_VERSION"),
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
    /// Decrypt a file or stream (-o FILE: all or nothing; stdout: chunks as they authenticate).
    ///
    /// With -o FILE, nothing is left unless the whole file authenticates. To stdout, chunks are
    /// written as they authenticate, and a cut or damaged file ends with an error after what
    /// authenticated was written.
    Decrypt(cmd::decrypt::DecryptArgs),
    /// Describe an encrypted file (format, suite, recipients, sizes); never prints secrets.
    Inspect(cmd::inspect::InspectArgs),
    /// Detached headers, as age 1.3's: extract a file's header, and open it alone (perhaps on
    /// another machine) to a file key that `decrypt --file-key-fd` opens the payload with.
    Header(cmd::header::HeaderArgs),
    /// Change who can open encrypted files without re-encrypting them (in place where the new
    /// header fits); --rotate re-encrypts under a fresh file key.
    ///
    /// Removal is not revocation: a removed recipient can still open every old copy of a file
    /// and may have kept its file key. Only --rotate protects what is written from then on.
    Rekey(cmd::rekey::RekeyArgs),
    /// Transparent encryption in a git repository: marked paths are stored as age files
    /// (init, unlock, lock).
    Git(cmd::git::GitArgs),
    /// Deduplicated backups a host can write but not read: every object a plain age file
    /// (init, create, snapshots, ls, restore, check, forget, prune, rekey, cat).
    Backup(cmd::backup::BackupArgs),
    /// age v1.3.1's command line (-e -d -r -R -i -j -p -a -o), writing age files; see `age -h`.
    ///
    /// A hyperseal started as `age` (a link of that name) does the same.
    #[command(disable_help_flag = true)]
    Age {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// The identity agent: unlock protected keys once, for every command, file and age client
    /// (start, add, list, remove, lock, unlock, stop, identity).
    #[cfg(any(unix, windows))]
    Agent(cmd::agent::AgentArgs),
    #[command(flatten)]
    Toolkit(toolkit::ToolkitCommand),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the man page (roff), as `make install` installs it.
    #[command(hide = true)]
    Man,
}

fn main() -> ExitCode {
    // Past `ulimit -f`, a write must fail with EFBIG (reported, output discarded) rather than
    // SIGXFSZ killing the process without a word.
    hyperseal::output::ignore_file_size_signal();
    sys::die_on_sigpipe();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Outside `hyperseal git`, plugins are the only programs the CLI starts: adopting the
    // orphans of their descendants (Linux's child subreaper) lets the end of each plugin
    // exchange kill and reap everything a plugin started, also what left its process group and
    // lost its parent. Without it (an error: not Linux, or refused; or `git`) the plugin's group
    // and its descendants still end, frozen while they are attached to it. `hyperseal git`
    // runs git processes of its own, and an adopted orphan cannot be told from one of them
    // started in the same clock tick as a plugin (`/proc` counts start times in ticks): the
    // end of the plugin's exchange killed the filter's `git cat-file` that way.
    let runs_git =
        argv.iter().skip(1).find(|a| !a.to_string_lossy().starts_with('-')).is_some_and(|a| a == "git");
    if !runs_git {
        let _ = hyperseal::recipient::plugin::adopt_orphans();
    }
    // age mode first, before clap builds the command tree: scripts may run `age` in loops.
    if argv.first().is_some_and(|a| cmd::age::invoked_as_age(a)) {
        return cmd::age::main(&argv, 1);
    }
    // age-plugin-hyperseal: by name, or by age's state flag (rage starts the link's target).
    #[cfg(any(unix, windows))]
    if argv.first().is_some_and(|a| hyperseal_agent::plugin::invoked_as_plugin(a))
        || argv.get(1).and_then(|a| a.to_str()).is_some_and(|a| a.starts_with("--age-plugin="))
    {
        return hyperseal_agent::plugin::main_with(&argv, &cmd::tpm_plugin::answers);
    }
    if argv.get(1).is_some_and(|a| a == "age") {
        return cmd::age::main(&argv, 2);
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => return errors::clap_error(e),
    };
    let result = match cli.command {
        Command::Keygen(a) => cmd::keys::keygen(a),
        Command::Pubkey(a) => cmd::keys::pubkey(a),
        Command::Encrypt(a) => cmd::encrypt::run(a),
        Command::Decrypt(a) => cmd::decrypt::run(a),
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Header(a) => cmd::header::run(a),
        Command::Rekey(a) => cmd::rekey::run(a),
        Command::Git(a) => cmd::git::run(a),
        Command::Backup(a) => cmd::backup::run(a),
        #[cfg(any(unix, windows))]
        Command::Agent(a) => cmd::agent::run(a),
        Command::Toolkit(k) => toolkit::run(k),
        Command::Completions(a) => cmd::completions::completions(a, Cli::command()),
        Command::Man => cmd::completions::man(Cli::command()),
        // Reached only through clap's own spellings; the same mode as above.
        Command::Age { .. } => return cmd::age::main(&argv, 2),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => ExitCode::from(errors::report(&e)),
    }
}
