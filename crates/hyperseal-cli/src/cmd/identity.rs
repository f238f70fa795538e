//! Loading `-i` identity files and `-R` recipient files for `encrypt` and `decrypt`, with the
//! terminal side of the library's [`Callbacks`]: passphrases of protected SSH keys are read from
//! `--identity-passphrase-file` or asked on the terminal, only when the library needs them (a
//! protected key asks only when the file has a stanza with its tag, as age does).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use hyperseal::recipient::{self, Callbacks, Identity, Recipient};
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

/// Reads and parses every `-i` file; a protected SSH key keeps `passphrase_file`'s passphrase
/// (or the terminal) for when it is needed.
pub fn load_identities(paths: &[PathBuf], passphrase_file: Option<&Path>) -> Result<Vec<Box<dyn Identity>>> {
    let passphrase = passphrase_file.map(io::read_passphrase_file).transpose()?;
    let mut identities: Vec<Box<dyn Identity>> = Vec::new();
    for f in paths {
        let text = Zeroizing::new(io::read_small(f, "identity file")?);
        let callbacks = Arc::new(Terminal { name: f.display().to_string(), passphrase: passphrase.clone() });
        identities.extend(recipient::parse_identities_with(&text, callbacks).map_err(|e| {
            hint(
                format!("{}: {e}", f.display()),
                "an identity file holds AGE-SECRET-KEY-… lines, a PKCS#8 PEM or an OpenSSH private key",
            )
        })?);
    }
    Ok(identities)
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
