//! age's rule for `-i KEY` when KEY is a PEM key under legacy encryption (`Proc-Type:
//! 4,ENCRYPTED`, as `ssh-keygen -m PEM -N PASS` writes it): the public key is inside the
//! encrypted body, so age reads it from `KEY.pub` beside the key and asks for the passphrase only
//! when a file has a stanza for that key (never to encrypt to it with `-e -i`).
//!
//! Without a readable `KEY.pub`, age mode fails with age's words; the native commands instead let
//! the library ask for the passphrase at once (`recipient::ssh::parse_legacy_identity`), since a
//! hyperseal user gains nothing from the refusal.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use hyperseal::recipient::ssh::{self, openssh::SshPublicKey, pem_key};
use hyperseal::recipient::{Callbacks, Identity, Recipient};

use super::age_messages;
use crate::errors::hint;

/// What an identity file becomes: its identities (`-d -i`) or its recipients (`-e -i`).
pub trait FromSshKey: Sized {
    /// The value for a key read with its public key.
    fn from_ssh_key(identity: Box<dyn Identity>, public: &SshPublicKey) -> Result<Self, hyperseal::Error>;
}

impl FromSshKey for Box<dyn Identity> {
    fn from_ssh_key(identity: Box<dyn Identity>, _: &SshPublicKey) -> Result<Self, hyperseal::Error> {
        Ok(identity)
    }
}

impl FromSshKey for Box<dyn Recipient> {
    fn from_ssh_key(_: Box<dyn Identity>, public: &SshPublicKey) -> Result<Self, hyperseal::Error> {
        ssh::recipient_of(public)
    }
}

/// `path + ".pub"`, as age names it (also for names that are not UTF-8).
fn pub_path(path: &Path) -> PathBuf {
    let mut p: OsString = path.as_os_str().to_owned();
    p.push(".pub");
    PathBuf::from(p)
}

/// The `-i` file `path` (`None`: standard input) read as age reads a PEM key with legacy
/// encryption, or `Ok(None)` if it is not one, or if the library should ask for its passphrase
/// at once (native commands, no `.pub`). A library error comes back as itself, for the caller
/// to name the file.
pub fn load<T: FromSshKey>(
    path: Option<&Path>,
    bytes: &[u8],
    callbacks: Arc<dyn Callbacks>,
) -> Result<Option<T>> {
    let Ok(text) = std::str::from_utf8(bytes) else { return Ok(None) };
    if pem_key::parse_encrypted(text.trim_start()).ok().flatten().is_none() {
        // Not one; a malformed one is reported by the usual parser.
        return Ok(None);
    }
    let line = match public_line(path)? {
        Some(line) => line,
        None => return Ok(None),
    };
    let (identity, public) = ssh::parse_legacy_identity(text, Some(&line), callbacks)?;
    Ok(Some(T::from_ssh_key(identity, &public)?))
}

/// The text of `KEY.pub`, at most a key text's budget. `Ok(None)` where the native commands go
/// on without it; age mode fails there, in age's words.
fn public_line(path: Option<&Path>) -> Result<Option<String>> {
    let age = age_messages::active();
    let Some(path) = path else {
        return match age {
            true => {
                Err(age_messages::fail("failed to obtain public key for \"-\" SSH key", &[CONVERT_STDIN]))
            }
            false => Ok(None),
        };
    };
    let name = path.display().to_string();
    let pub_file = pub_path(path);
    let pub_name = pub_file.display().to_string();
    let mut text = String::new();
    let limit = hyperseal::limits::KEY_TEXT as u64;
    let read = std::fs::File::open(&pub_file).and_then(|f| f.take(limit + 1).read_to_string(&mut text));
    match read {
        Ok(n) if n as u64 > limit => {
            Err(hyperseal::limits::too_long("a .pub file", hyperseal::limits::KEY_TEXT).into())
        }
        Ok(_) => Ok(Some(text)),
        Err(e) if !age && e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if age => Err(age_messages::fail(
            format!(
                "reading {name:?}: failed to obtain public key for {name:?} SSH key: open {pub_name}: {}",
                crate::io::reason(&e).to_lowercase()
            ),
            &[&format!(
                "ensure {pub_name:?} exists, or convert the private key {name:?} to a modern format with \
                 \"ssh-keygen -p -m RFC4716\""
            )],
        )),
        Err(e) => Err(hint(
            format!(
                "cannot read {pub_name}, the public key of the PEM key {name}: {}",
                crate::io::reason(&e)
            ),
            "make it readable, or remove it to be asked for the key's passphrase at once",
        )),
    }
}

const CONVERT_STDIN: &str = "use a file for which the corresponding \".pub\" file exists, or convert the \
                             private key to a modern format with \"ssh-keygen -p -m RFC4716\"";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pub_file_is_named_as_age_names_it() {
        assert_eq!(pub_path(Path::new("dir/id_rsa")), Path::new("dir/id_rsa.pub"));
        assert_eq!(pub_path(Path::new("key.pem")), Path::new("key.pem.pub"));
    }

    #[test]
    fn other_files_are_left_to_the_usual_parser() {
        let cb: Arc<dyn Callbacks> = Arc::new(hyperseal::recipient::NoCallbacks);
        let plain = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        assert!(load::<Box<dyn Identity>>(None, plain.as_bytes(), cb.clone()).unwrap().is_none());
        assert!(load::<Box<dyn Identity>>(None, b"\xff\xfe", cb.clone()).unwrap().is_none());
        assert!(load::<Box<dyn Identity>>(None, b"AGE-SECRET-KEY-1", cb).unwrap().is_none());
    }
}
