//! `hyperseal agent`: start the identity agent, give it identity files, list, remove, lock,
//! unlock and stop it, and print its identity for age (`AGE-PLUGIN-HYPERSEAL-1…`). The agent
//! itself is `crate::agent`; the library's `hyperseal::agent` is its protocol and client.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use hyperseal::agent::proto::{Answer, Request};
use hyperseal::agent::{self, AgentIdentity};

use hyperseal_agent::server;

mod socket;
use crate::errors::hint;
use crate::{io, terminal};

/// The variable that tells every command where the agent listens.
pub const SOCK_VAR: &str = "HYPERSEAL_AGENT_SOCK";

#[derive(Args)]
pub struct AgentArgs {
    #[command(subcommand)]
    cmd: AgentCmd,
}

#[derive(Subcommand)]
enum AgentCmd {
    /// Start the agent in the background and print the shell lines that point commands at it:
    /// eval "$(hyperseal agent start)".
    Start(StartArgs),
    /// Load identity files (any kind hyperseal reads); a protected file's passphrase is asked
    /// now, once.
    Add {
        /// Forget these identities after this long (30s, 15m, 2h, 7d).
        #[arg(long, value_parser = parse_duration)]
        lifetime: Option<Duration>,
        /// For plugin identities (security keys): keep a PIN the plugin accepted this long
        /// (default: as long as the key, until lock or stop). A touch is never kept.
        #[arg(long = "pin-ttl", value_parser = parse_duration)]
        pin_ttl: Option<Duration>,
        /// Let the forward of remote host NAME use these identities (repeat it; '*' for any
        /// host). Without it no forward sees them.
        #[arg(long = "forward", value_name = "NAME")]
        forward: Vec<String>,
        /// Do not confirm each forwarded use on this host (by default the askpass program,
        /// HYPERSEAL_ASKPASS or SSH_ASKPASS, asks).
        #[arg(long = "no-confirm", requires = "forward")]
        no_confirm: bool,
        /// Read the passphrase of protected files from the first line of FILE.
        #[arg(long = "passphrase-file")]
        passphrase_file: Option<PathBuf>,
        /// Identity files: AGE-SECRET-KEY-… lines, PEM or OpenSSH keys, a plugin's
        /// AGE-PLUGIN-… identities (run by the agent), or such a file encrypted with age -p.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the loaded identities: recipient and fingerprint, never a secret.
    List,
    /// Forget identities: by fingerprint or file name, or all of them with --all.
    Remove {
        /// A fingerprint (SHA256:…, or its first 8 characters or more) or an added file's path.
        #[arg(required_unless_present = "all")]
        selectors: Vec<String>,
        /// Forget every identity.
        #[arg(long, conflicts_with = "selectors")]
        all: bool,
    },
    /// Lock the agent with a passphrase: its keys are sealed under it and unwrap nothing.
    Lock,
    /// Unlock the agent with the lock passphrase.
    Unlock,
    /// Stop the agent (every key in it is zeroized).
    Stop,
    /// Open a socket for the remote host NAME and print its path, for ssh -R; it is closed
    /// when that ssh ends. Only identities added with --forward NAME (or '*') serve it.
    Forward {
        /// The remote host's name, as --forward grants name it.
        name: String,
        /// Close NAME's sockets instead.
        #[arg(long)]
        close: bool,
    },
    /// Print the agent's identity for age and its clients (AGE-PLUGIN-HYPERSEAL-1…): where it
    /// listens, no secret. age reaches it through `age-plugin-hyperseal`.
    Identity,
}

#[derive(Args)]
struct StartArgs {
    /// Stay in the foreground (for a service manager such as systemd).
    #[arg(long)]
    foreground: bool,
    /// End after this long without a request (30s, 15m, 2h, 7d).
    #[arg(long, value_parser = parse_duration)]
    idle: Option<Duration>,
    /// Print csh lines.
    #[arg(long, conflicts_with_all = ["fish", "powershell"])]
    csh: bool,
    /// Print fish lines.
    #[arg(long, conflicts_with = "powershell")]
    fish: bool,
    /// Print PowerShell lines.
    #[arg(long)]
    powershell: bool,
    /// (internal) the background agent's own run: reports its start on standard output.
    #[arg(long, hide = true)]
    detached: bool,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    hyperseal_toolkit::token::parse_ttl(s)
        .map_err(|_| "expected a duration such as 30s, 15m, 2h or 7d".into())
}

pub fn run(a: AgentArgs) -> Result<()> {
    match a.cmd {
        AgentCmd::Start(s) => start(s),
        AgentCmd::Add { lifetime, pin_ttl, forward, no_confirm, passphrase_file, files } => {
            let grants = Grants { forward, confirm: !no_confirm };
            add(&files, lifetime, pin_ttl, &grants, passphrase_file.as_deref())
        }
        AgentCmd::List => list(),
        AgentCmd::Remove { selectors, all } => {
            let selectors = if all { vec![String::new()] } else { selectors };
            for s in selectors {
                // A file is named as `add` recorded it: by its absolute path.
                let s = match Path::new(&s).exists() {
                    true => std::path::absolute(&s).map_or(s, |p| p.display().to_string()),
                    false => s,
                };
                match ask(&Request::Remove(s.clone()))? {
                    Answer::Done(n) if n == "0" => {
                        return Err(hint(format!("no identity matches {s:?}"), LIST_HINT))
                    }
                    Answer::Done(n) => eprintln!("hyperseal: removed {n} identity file(s)"),
                    other => return Err(refused(other)),
                }
            }
            Ok(())
        }
        AgentCmd::Lock => {
            check_socket_dir()?;
            let p = io::prompt_passphrase(true)?;
            expect_done(ask(&Request::Lock(p))?)
        }
        AgentCmd::Unlock => {
            check_socket_dir()?;
            let p = io::prompt_passphrase(false)?;
            expect_done(ask(&Request::Unlock(p))?)
        }
        AgentCmd::Stop => expect_done(ask(&Request::Stop)?),
        AgentCmd::Forward { name, close } => {
            check_socket_dir()?;
            match ask(&Request::Forward { name, close })? {
                Answer::Done(said) if close => eprintln!("hyperseal: {said}"),
                Answer::Done(path) => println!("{path}"),
                Answer::Refused(why) => return Err(hint(format!("the agent refused: {why}"), FORWARD_HINT)),
                other => return Err(refused(other)),
            }
            Ok(())
        }
        AgentCmd::Identity => {
            println!("{}", agent::plugin_identity(&client_socket()?));
            Ok(())
        }
    }
}

const FORWARD_HINT: &str =
    "name the remote host: ssh -R /run/user/$UID/hyperseal/agent.sock:\"$(hyperseal agent forward build1)\" build1";

const LIST_HINT: &str = "`hyperseal agent list` shows each identity's fingerprint and file";

/// `$XDG_RUNTIME_DIR/hyperseal/agent.sock`.
#[cfg(unix)]
fn default_socket() -> Result<PathBuf> {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Ok(PathBuf::from(d).join("hyperseal").join("agent.sock")),
        None => Err(hint(
            "XDG_RUNTIME_DIR is not set",
            "the agent's socket lives in $XDG_RUNTIME_DIR/hyperseal (a login session sets it; or set it to a directory of your own with mode 0700)",
        )),
    }
}

/// `\\.\pipe\hyperseal-agent-<your SID>`: a name of this user's (the pipe admits no one else).
#[cfg(windows)]
fn default_socket() -> Result<PathBuf> {
    agent::default_pipe_name().map_err(|e| anyhow::anyhow!("cannot read this user's SID: {e}"))
}

/// Where the agent to talk to listens: `HYPERSEAL_AGENT_SOCK`, else the default place.
fn client_socket() -> Result<PathBuf> {
    match std::env::var_os(SOCK_VAR).filter(|s| !s.is_empty()) {
        Some(s) => Ok(PathBuf::from(s)),
        None => default_socket(),
    }
}

/// Before a secret is sent (an identity file, a passphrase): the socket's directory is trusted
/// as `start` trusts its own (the connection then checks who listens, as every client's does).
fn check_socket_dir() -> Result<()> {
    #[cfg(unix)]
    if let Some(dir) = client_socket()?.parent() {
        // A bare file name (HYPERSEAL_AGENT_SOCK=agent.sock) is in the working directory.
        socket::check_dir(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })?;
    }
    Ok(())
}

fn ask(request: &Request) -> Result<Answer> {
    ask_within(request, agent::DEFAULT_TIMEOUT)
}

/// How long an `add` may take: the agent runs the identity file's passphrase KDF (scrypt or
/// Argon2 at the work factor the file names, within the library's caps), seconds of work that a
/// busy machine stretches past the default deadline, which is meant for questions that take
/// milliseconds. Still a deadline: an agent that hangs is given up on.
const ADD_TIMEOUT: Duration = Duration::from_secs(120);

fn ask_within(request: &Request, timeout: Duration) -> Result<Answer> {
    let path = client_socket()?;
    AgentIdentity::new(&path).with_timeout(timeout).ask(request, 0).map_err(|e| {
        hint(e, "start one with eval \"$(hyperseal agent start)\", or check HYPERSEAL_AGENT_SOCK")
    })
}

fn refused(answer: Answer) -> anyhow::Error {
    match answer {
        Answer::Refused(why) | Answer::NeedPassphrase(why) => {
            hint(format!("the agent refused: {why}"), LIST_HINT)
        }
        _ => anyhow::anyhow!("the agent answered something else than was asked"),
    }
}

fn expect_done(answer: Answer) -> Result<()> {
    match answer {
        Answer::Done(_) => Ok(()),
        other => Err(refused(other)),
    }
}

/// Which remote hosts' forwards may use the identities added, and whether each use is
/// confirmed on this host.
struct Grants {
    forward: Vec<String>,
    confirm: bool,
}

fn add(
    files: &[PathBuf],
    lifetime: Option<Duration>,
    pin_ttl: Option<Duration>,
    grants: &Grants,
    passphrase_file: Option<&Path>,
) -> Result<()> {
    check_socket_dir()?;
    let given = passphrase_file.map(io::read_passphrase_file).transpose()?;
    for file in files {
        let bytes = io::read_file_within(file, hyperseal::limits::KEY_FILE, "an identity file", |e| {
            anyhow::Error::new(e).context(format!("cannot read identity file {}", file.display()))
        })?;
        let name = std::path::absolute(file).unwrap_or_else(|_| file.clone()).display().to_string();
        let mut passphrase = given.clone();
        loop {
            let request = Request::Add {
                name: name.clone(),
                bytes: bytes.clone(),
                passphrase: passphrase.clone(),
                lifetime: lifetime.map_or(0, |d| d.as_secs().max(1)),
                pin_ttl: pin_ttl.map_or(0, |d| d.as_secs().max(1)),
                forward: grants.forward.clone(),
                confirm: grants.confirm,
            };
            match ask_within(&request, ADD_TIMEOUT)? {
                Answer::Done(recipients) => {
                    eprintln!("hyperseal: added {}: {recipients}", file.display());
                    break;
                }
                // Asked once, on the terminal (a passphrase file that is wrong is not retried).
                Answer::NeedPassphrase(_) if passphrase.is_none() => {
                    let prompt = format!("Enter passphrase for {}:", file.display());
                    let p = terminal::read_secret(&prompt).map_err(|e| {
                        hint(
                            format!("cannot prompt for a passphrase: {e}"),
                            "use --passphrase-file FILE in scripts",
                        )
                    })?;
                    passphrase = Some(p);
                }
                Answer::NeedPassphrase(why) => {
                    return Err(hint(
                        format!("{}: {why}", file.display()),
                        "check the identity file's passphrase",
                    ))
                }
                other => return Err(refused(other).context(file.display().to_string())),
            }
        }
    }
    Ok(())
}

fn list() -> Result<()> {
    let Answer::Entries(entries) = ask(&Request::List)? else {
        anyhow::bail!("the agent answered something else than was asked")
    };
    if entries.is_empty() {
        eprintln!("hyperseal: the agent holds no identities");
    }
    let mut out = std::io::stdout().lock();
    for e in entries {
        let expiry = match e.expires_in {
            0 => String::new(),
            s => format!(" (forgotten in {s}s)"),
        };
        let grants = match (e.forward.is_empty(), e.confirm) {
            (true, _) => String::new(),
            (false, true) => format!(" [forward: {}, confirmed]", e.forward.join(",")),
            (false, false) => format!(" [forward: {}, unconfirmed]", e.forward.join(",")),
        };
        writeln!(out, "{} {} {}{expiry}{grants}", e.fingerprint, e.recipient, e.name)?;
    }
    Ok(())
}

/// The shell lines that point commands at the agent.
fn env_lines(s: &StartArgs, path: &Path) -> String {
    let p = path.display().to_string().replace('\'', "'\\''");
    if s.csh {
        format!("setenv {SOCK_VAR} '{p}';\n")
    } else if s.fish {
        format!("set -gx {SOCK_VAR} '{p}';\n")
    } else if s.powershell {
        format!("$env:{SOCK_VAR} = '{}'\n", path.display().to_string().replace('\'', "''"))
    } else {
        format!("{SOCK_VAR}='{p}'; export {SOCK_VAR};\n")
    }
}

fn start(s: StartArgs) -> Result<()> {
    let path = default_socket()?;
    if !s.foreground {
        return start_background(&s, &path);
    }
    // Before a secret arrives: every block this process frees is zeroed first.
    hyperseal_agent::wipe::wipe_freed_memory();
    // Before any thread: the end signals go to one thread, and the process is not dumpable.
    #[cfg(unix)]
    hyperseal_agent::process::block_end_signals();
    let say = |line: &str| match s.detached {
        true => println!("{line}"),
        false => eprintln!("hyperseal: {line}"),
    };
    let ready = prepare(&path, &say);
    let listener = match (ready, s.detached) {
        (Ok(l), _) => l,
        (Err(e), true) => {
            println!("error: {}", crate::errors::message(&e));
            if let Some(h) = e.downcast_ref::<crate::errors::Hinted>() {
                println!("hint: {}", h.hint);
            }
            return Err(crate::errors::Reported.into());
        }
        (Err(e), false) => return Err(e),
    };
    if s.detached {
        #[cfg(unix)]
        hyperseal_agent::process::new_session();
        println!("ready");
    } else {
        print!("{}", env_lines(&s, &path));
    }
    std::io::stdout().flush()?;
    // The agent crate has no TPM code: TPM identity files reach it through this reader.
    let readers: hyperseal_agent::reader::Readers = Some(std::sync::Arc::new(crate::cmd::tpm::AgentReader));
    server::serve(listener, path, s.idle, readers)
}

/// Makes this process fit to hold keys (Unix: not dumpable, memory locked where the limit
/// allows, the socket's directory checked) and listens at `path`.
fn prepare(path: &Path, say: &dyn Fn(&str)) -> Result<hyperseal::agent::conn::Listener> {
    #[cfg(unix)]
    {
        hyperseal_agent::process::no_dumps()
            .map_err(|e| anyhow::anyhow!("cannot make the agent non-dumpable: {e}"))?;
        if let Err(why) = hyperseal_agent::process::lock_memory() {
            say(&format!("note: secrets are not in locked memory: {why}"));
        }
        socket::make_dir(path.parent().expect("a socket path has a directory"))?;
    }
    #[cfg(windows)]
    say("note: secrets are not in locked memory: Windows locks no whole process (docs/SECURITY.md)");
    socket::bind(path)
}

/// Starts `hyperseal agent start --foreground --detached` with no terminal and no standard
/// streams of ours (so `$(…)` ends), waits for its "ready" and prints the shell lines.
fn start_background(s: &StartArgs, path: &Path) -> Result<()> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(["agent", "start", "--foreground", "--detached"]);
    if let Some(d) = s.idle {
        cmd.arg(format!("--idle={}s", d.as_secs().max(1)));
    }
    // Windows: no console of ours, and Ctrl+C in this one does not reach it.
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
        crate::sys::keep_std_handles();
    }
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let out = BufReader::new(child.stdout.take().expect("piped"));
    let mut error = None;
    for line in out.lines() {
        let line = line?;
        if line == "ready" {
            print!("{}", env_lines(s, path));
            return Ok(());
        }
        if let Some(note) = line.strip_prefix("note: ") {
            eprintln!("hyperseal: note: {note}");
        } else if let Some(err) = line.strip_prefix("error: ") {
            error = Some(err.to_string());
        } else if let (Some(h), Some(err)) = (line.strip_prefix("hint: "), &error) {
            let _ = child.wait();
            return Err(hint(err, h));
        }
    }
    let _ = child.wait();
    match error {
        Some(err) => Err(anyhow::anyhow!(err)),
        None => anyhow::bail!("the agent ended before it was ready"),
    }
}
