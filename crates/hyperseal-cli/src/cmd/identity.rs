//! Loading `-i` identity files and `-R` recipient files for `encrypt` and `decrypt`, with the
//! terminal side of the library's [`Callbacks`]: passphrases of protected SSH keys and of
//! passphrase-encrypted identity files (`age-keygen | age -p`) are read from
//! `--identity-passphrase-file` or asked on the terminal, only when the library needs them (a
//! protected SSH key asks only when the file has a stanza with its tag, as age does).

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use anyhow::Result;
use hyperseal::recipient::{self, identity_file, Callbacks, Identity, Recipient};
use zeroize::Zeroizing;

use crate::{hint, io};

/// Answers the library's requests for one identity or recipients file.
struct Terminal {
    /// The file, to name it in prompts and notes.
    name: String,
    /// The passphrase given with `--identity-passphrase-file`, if any: never prompt then.
    passphrase: Option<Zeroizing<String>>,
}

impl Callbacks for Terminal {
    fn display_message(&self, message: &str) {
        eprintln!("hyperseal: note: {}: {message}", self.name);
    }

    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
        if let Some(p) = &self.passphrase {
            return Some(p.clone());
        }
        if !std::io::stdin().is_terminal() && !std::io::stderr().is_terminal() {
            return None;
        }
        let prompt = format!("Enter passphrase for {} ({description}): ", self.name);
        rpassword::prompt_password(prompt).ok().filter(|p| !p.is_empty()).map(Zeroizing::new)
    }
}

/// An identity file's bytes (it may be a binary age file), at most 16 MiB as in age.
fn read_identity_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let mut bytes = Zeroizing::new(Vec::new());
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
    let h = match e {
        hyperseal::Error::WrongPassphrase => "check the identity file's passphrase",
        _ if e.to_string().contains("no passphrase was given") => NO_PASSPHRASE_HINT,
        _ => IDENTITY_HINT,
    };
    hint(format!("{}: {e}", f.display()), h)
}

/// Runs `parse` on every `-i` file with callbacks for that file.
fn each_identity_file<T>(
    paths: &[PathBuf],
    passphrase_file: Option<&Path>,
    parse: impl Fn(&[u8], Arc<dyn Callbacks>) -> Result<Vec<T>, hyperseal::Error>,
) -> Result<Vec<T>> {
    let passphrase = passphrase_file.map(io::read_passphrase_file).transpose()?;
    let mut out = Vec::new();
    for f in paths {
        let bytes = read_identity_file(f)?;
        let callbacks = Arc::new(Terminal { name: f.display().to_string(), passphrase: passphrase.clone() });
        out.extend(parse(&bytes, callbacks).map_err(|e| file_error(f, e))?);
    }
    Ok(out)
}

/// Reads and parses every `-i` file; a protected SSH key keeps `passphrase_file`'s passphrase
/// (or the terminal) for when it is needed; an encrypted identity file is opened at once.
pub fn load_identities(paths: &[PathBuf], passphrase_file: Option<&Path>) -> Result<Vec<Box<dyn Identity>>> {
    each_identity_file(paths, passphrase_file, identity_file::parse)
}

/// The recipients of every `-i` file, for `encrypt -i` (age's `-e -i`: encrypt to oneself).
pub fn load_identity_recipients(
    paths: &[PathBuf],
    passphrase_file: Option<&Path>,
) -> Result<Vec<Box<dyn Recipient>>> {
    each_identity_file(paths, passphrase_file, identity_file::recipients_of)
}

/// Reads and parses one `-R` file; SSH keys of types age cannot use are skipped with a note.
pub fn load_recipients_file(path: &Path) -> Result<Vec<Box<dyn Recipient>>> {
    let text = io::read_small(path, "recipients file")?;
    let notes = Terminal { name: path.display().to_string(), passphrase: None };
    recipient::parse_recipients_file_with(&text, &notes).map_err(|e| {
        hint(
            format!("{}: {e}", path.display()),
            "a recipients file holds one recipient per line: age1…, ssh-ed25519 …, ssh-rsa …",
        )
    })
}
