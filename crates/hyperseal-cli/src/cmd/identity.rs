//! Loading `-i` identity files and `-R` recipient files for `encrypt` and `decrypt`, with the
//! terminal side of the library's [`Callbacks`]: passphrases of protected SSH keys and of
//! passphrase-encrypted identity files (`age-keygen | age -p`) are read from
//! `--identity-passphrase-file` or asked on the terminal, only when the library needs them (a
//! protected SSH key asks only when the file has a stanza with its tag, as age does).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use anyhow::Result;
use hyperseal::identity_file;
use hyperseal::recipient::plugin::{PluginIdentity, PluginRecipient};
use hyperseal::recipient::{self, Callbacks, Identity, Recipient};
use zeroize::Zeroizing;

use super::age_legacy_pem::{self, FromSshKey};
use super::age_messages;
use crate::errors::hint;
use crate::{io, terminal};

/// Answers the library's requests for one identity or recipients file.
struct Terminal {
    /// The file, to name it in prompts and notes.
    name: String,
    /// The passphrase given with `--identity-passphrase-file`, if any: never prompt then.
    passphrase: Option<Zeroizing<String>>,
}

impl Terminal {
    /// For `-r` and `-j`, where no file is involved.
    fn plain() -> Arc<Self> {
        Arc::new(Terminal { name: String::new(), passphrase: None })
    }

    /// Prompts on the terminal and reads one visible line.
    fn ask_line(prompt: &str) -> Option<String> {
        terminal::read_public(prompt).ok()
    }
}

impl Callbacks for Terminal {
    fn display_message(&self, message: &str) {
        if age_messages::active() {
            age_messages::note(&self.name, message);
        } else if self.name.is_empty() {
            eprintln!("hyperseal: note: {message}");
        } else {
            eprintln!("hyperseal: note: {}: {message}", self.name);
        }
    }

    fn confirm(&self, message: &str, yes: &str, no: Option<&str>) -> Option<bool> {
        let choices = match no {
            Some(no) => format!("[1] {yes}  [2] {no}"),
            None => format!("[1] {yes}"),
        };
        let answer = Self::ask_line(&format!("{message}\n{choices}: "))?;
        match answer.trim() {
            "1" => Some(true),
            "2" if no.is_some() => Some(false),
            _ => None,
        }
    }

    fn request_public_string(&self, description: &str) -> Option<String> {
        Self::ask_line(&format!("{description}\nValue: "))
    }

    /// Plugins run, as in age: the user named them on the command line or in their key files.
    fn plugins(&self) -> hyperseal::recipient::plugin::Plugins {
        hyperseal::recipient::plugin::Plugins::Allow
    }

    /// `HYPERSEAL_PLUGIN_TIMEOUT` seconds, if set (scripts and tests), else the library default.
    fn plugin_timeout(&self) -> std::time::Duration {
        std::env::var("HYPERSEAL_PLUGIN_TIMEOUT")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(std::time::Duration::from_secs)
            .unwrap_or(std::time::Duration::from_secs(300))
    }

    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
        if let Some(p) = &self.passphrase {
            return Some(p.clone());
        }
        let prompt = if self.name.is_empty() {
            format!("{description}\nEnter value:")
        } else if age_messages::active() && description.starts_with("SSH key") {
            age_messages::prompt_ssh_key(&self.name)
        } else if age_messages::active() {
            age_messages::prompt_identity_file(&self.name)
        } else {
            format!("Enter passphrase for {} ({description}):", self.name)
        };
        terminal::read_secret(&prompt).ok().filter(|p| !p.is_empty())
    }
}

/// An identity file's bytes (it may be a binary age file), at most 16 MiB as in age.
fn read_identity_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let mut bytes = Zeroizing::new(Vec::new());
    if age_messages::active() {
        if let Err(e) = std::fs::File::open(path) {
            let name = path.display().to_string();
            anyhow::bail!(
                "reading {name:?}: failed to open file: open {name}: {}",
                io::reason(&e).to_lowercase()
            );
        }
    }
    std::fs::File::open(path)
        .and_then(|f| f.take(16 << 20).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read identity file {}", path.display()))?;
    Ok(bytes)
}

const IDENTITY_HINT: &str =
    "an identity file holds AGE-SECRET-KEY-… lines, a PKCS#8 PEM or an OpenSSH private key, or is such a file encrypted with age -p";

const NO_PASSPHRASE_HINT: &str =
    "give --identity-passphrase-file FILE, or run in a terminal to be asked for the passphrase";

/// The error for one identity file, with the hint that fits it.
fn file_error(f: &Path, e: hyperseal::Error) -> anyhow::Error {
    if age_messages::active() {
        // age's shape, `reading "NAME": …`; the library error stays findable for the table.
        let name = f.display().to_string();
        return anyhow::Error::new(e).context(format!("reading {name:?}"));
    }
    let h = match e {
        hyperseal::Error::WrongPassphrase => "check the identity file's passphrase",
        _ if e.to_string().contains("incorrect passphrase for SSH key") => "check the key's passphrase",
        _ if e.to_string().contains("no passphrase was given") => NO_PASSPHRASE_HINT,
        _ => IDENTITY_HINT,
    };
    hint(format!("{}: {e}", f.display()), h)
}

/// A PEM key with legacy encryption read with its `KEY.pub`, as age reads it (see
/// `age_legacy_pem.rs`); `None` for every other file, which `parse` reads.
fn legacy_pem<T: FromSshKey>(
    path: Option<&Path>,
    bytes: &[u8],
    callbacks: &Arc<Terminal>,
) -> Result<Option<T>> {
    let name = path.unwrap_or(Path::new("standard input"));
    age_legacy_pem::load(path, bytes, callbacks.clone()).map_err(|e| match e.downcast::<hyperseal::Error>() {
        Ok(library) => file_error(name, library),
        Err(other) => other,
    })
}

/// Runs `parse` on every `-i` file with callbacks for that file.
fn each_identity_file<T: FromSshKey>(
    paths: &[PathBuf],
    passphrase_file: Option<&Path>,
    parse: impl Fn(&[u8], Arc<dyn Callbacks>) -> Result<Vec<T>, hyperseal::Error>,
) -> Result<Vec<T>> {
    let passphrase = passphrase_file.map(io::read_passphrase_file).transpose()?;
    let mut out = Vec::new();
    for f in paths {
        let bytes = read_identity_file(f)?;
        let callbacks = Arc::new(Terminal { name: f.display().to_string(), passphrase: passphrase.clone() });
        if let Some(key) = legacy_pem(Some(f), &bytes, &callbacks)? {
            out.push(key);
            continue;
        }
        out.extend(parse(&bytes, callbacks).map_err(|e| file_error(f, e))?);
    }
    Ok(out)
}

/// Runs `parse` on an identity file read from standard input (`age -i -`), at most 16 MiB.
fn stdin_identity_file<T: FromSshKey>(
    parse: impl Fn(&[u8], Arc<dyn Callbacks>) -> Result<Vec<T>, hyperseal::Error>,
) -> Result<Vec<T>> {
    let name = Path::new("standard input");
    let mut bytes = Zeroizing::new(Vec::new());
    std::io::stdin()
        .take(16 << 20)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read identity file {}", name.display()))?;
    let callbacks = Arc::new(Terminal { name: name.display().to_string(), passphrase: None });
    if let Some(key) = legacy_pem(None, &bytes, &callbacks)? {
        return Ok(vec![key]);
    }
    parse(&bytes, callbacks).map_err(|e| file_error(name, e))
}

/// The identities of an identity file given as `-` (standard input).
pub fn load_stdin_identities() -> Result<Vec<Box<dyn Identity>>> {
    stdin_identity_file(|b, cb| super::tpm::parse_identities(b, cb, identity_file::parse))
}

/// The recipients of an identity file given as `-` (standard input), for `age -e -i -`.
pub fn load_stdin_identity_recipients(profile: hyperseal::Profile) -> Result<Vec<Box<dyn Recipient>>> {
    stdin_identity_file(|b, cb| identity_file::recipients_of_for(b, cb, profile))
}

/// Reads and parses every `-i` file (TPM lines become TPM identities, `cmd/tpm.rs`); a protected SSH key keeps `passphrase_file`'s passphrase
/// (or the terminal) for when it is needed; an encrypted identity file is opened at once.
pub fn load_identities(paths: &[PathBuf], passphrase_file: Option<&Path>) -> Result<Vec<Box<dyn Identity>>> {
    each_identity_file(paths, passphrase_file, |b, cb| {
        super::tpm::parse_identities(b, cb, identity_file::parse)
    })
}

/// The recipients of every `-i` file, for `encrypt -i` (age's `-e -i`: encrypt to oneself).
pub fn load_identity_recipients(
    paths: &[PathBuf],
    passphrase_file: Option<&Path>,
) -> Result<Vec<Box<dyn Recipient>>> {
    load_identity_recipients_for(paths, passphrase_file, hyperseal::Profile::Hyperseal)
}

/// [`load_identity_recipients`] for files of `profile` (age mode writes age files).
pub fn load_identity_recipients_for(
    paths: &[PathBuf],
    passphrase_file: Option<&Path>,
    profile: hyperseal::Profile,
) -> Result<Vec<Box<dyn Recipient>>> {
    each_identity_file(paths, passphrase_file, |b, cb| match super::tpm::recipients_of(b) {
        Some(r) => Ok(r?.into_iter().map(|r| Box::new(r) as Box<dyn Recipient>).collect()),
        None => identity_file::recipients_of_for(b, cb, profile),
    })
}

/// One `-r` recipient (plugin recipients get the terminal for their requests).
pub fn parse_recipient_arg(r: &str) -> Result<Box<dyn Recipient>, hyperseal::Error> {
    recipient::parse_recipient_with(r, Terminal::plain())
}

/// The recipients in the text of the `-R` file `path`; SSH keys of types age cannot use are
/// skipped with a note.
pub fn parse_recipients_text(text: &str, path: &Path) -> Result<Vec<Box<dyn Recipient>>, hyperseal::Error> {
    let notes = Arc::new(Terminal { name: path.display().to_string(), passphrase: None });
    recipient::parse_recipients_file_with(text, notes)
}

/// The identity agent, when `HYPERSEAL_AGENT_SOCK` names its socket: one more identity, tried
/// after the `-i` ones (it answers for every key it holds in one round trip per file, or per
/// window of files in a tree re-key). The library reads no environment; the command line does.
pub fn agent_identity() -> Option<Box<dyn Identity>> {
    #[cfg(any(unix, windows))]
    if let Some(path) = std::env::var_os("HYPERSEAL_AGENT_SOCK").filter(|p| !p.is_empty()) {
        // A plugin key held by the agent asks its PIN (when not cached), a touch or a
        // confirmation on this terminal, as a plugin run here would.
        let agent =
            hyperseal::agent::AgentIdentity::new(PathBuf::from(path)).with_callbacks(Terminal::plain());
        return Some(Box::new(agent));
    }
    None
}

/// The identities of `-j NAME` (age's plugin identities without data).
pub fn plugin_identities(names: &[String]) -> Result<Vec<Box<dyn Identity>>> {
    names
        .iter()
        .map(|n| Ok(Box::new(PluginIdentity::without_data(n, Terminal::plain())?) as Box<dyn Identity>))
        .collect()
}

/// The recipients of `-j NAME` for `encrypt` (the plugin wraps to its own identity, as age's
/// `-e -j`).
pub fn plugin_recipients(names: &[String]) -> Result<Vec<Box<dyn Recipient>>> {
    names
        .iter()
        .map(|n| {
            let id = PluginIdentity::without_data(n, Terminal::plain())?;
            Ok(Box::new(PluginRecipient::from_identity(&id)) as Box<dyn Recipient>)
        })
        .collect()
}
