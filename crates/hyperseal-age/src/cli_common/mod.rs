//! Helpers for command-line tools (`cli-common` feature): age's `read_identities`,
//! `read_recipients`, `StdinGuard`, `read_secret`, `UiCallbacks` and `ReadError`, over the
//! core's key parsers, which know every kind the core does (X25519, `age1pq1…`, SSH, tag and
//! plugin keys, passphrase-encrypted identity files).
//!
//! The prompts read the terminal itself (`/dev/tty`, through rpassword), not a pinentry
//! program; their results are `pinentry::Result`s, as age's are.

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::sync::Arc;

use age_core::secrecy::{ExposeSecret, SecretString};
use hyperseal::recipient as core;
use zeroize::Zeroizing;

use crate::bridge::{CoreIdentity, CoreRecipient};

pub mod file_io;
use crate::{Callbacks, DecryptError, Identity, Recipient};

/// Errors that can occur while reading recipients or identities.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// Decrypting a passphrase-encrypted identity file failed.
    EncryptedIdentities(DecryptError),
    /// A passphrase-encrypted identity was found, and no passphrase could be had for it.
    IdentityEncryptedWithoutPassphrase(String),
    /// The given identity file could not be found.
    IdentityNotFound(String),
    /// The given recipient (or a line of a recipients file) is not valid.
    InvalidRecipient(String),
    /// An I/O error occurred while reading.
    Io(io::Error),
    /// A recipients file could not be found.
    MissingRecipientsFile(String),
    /// Standard input was used by more than one argument.
    MultipleStdin,
    /// A plugin could not be resolved.
    #[cfg(feature = "plugin")]
    #[cfg_attr(docsrs, doc(cfg(feature = "plugin")))]
    PluginResolve(crate::plugin::ResolveError),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::EncryptedIdentities(e) => write!(f, "failed to decrypt the identity file: {e}"),
            ReadError::IdentityEncryptedWithoutPassphrase(file) => {
                write!(f, "identity file {file} is encrypted with a passphrase, and none was given")
            }
            ReadError::IdentityNotFound(file) => write!(f, "identity file not found: {file}"),
            ReadError::InvalidRecipient(r) => write!(f, "invalid recipient '{r}'"),
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::MissingRecipientsFile(file) => write!(f, "recipients file not found: {file}"),
            ReadError::MultipleStdin => f.write_str("standard input can be used for only one argument"),
            #[cfg(feature = "plugin")]
            ReadError::PluginResolve(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::EncryptedIdentities(e) => Some(e),
            ReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Keeps standard input to one user: the input file, or one `-` argument.
pub struct StdinGuard {
    input_is_stdin: bool,
    used: bool,
}

impl StdinGuard {
    /// Constructs a new `StdinGuard`; `input_is_stdin` says whether the input file is stdin.
    pub fn new(input_is_stdin: bool) -> Self {
        StdinGuard { input_is_stdin, used: false }
    }

    /// The bytes of `filename`, or of standard input for `-` (once).
    fn read(
        &mut self,
        filename: &str,
        missing: impl FnOnce(String) -> ReadError,
    ) -> Result<Zeroizing<Vec<u8>>, ReadError> {
        let mut bytes = Zeroizing::new(vec![]);
        if filename == "-" {
            if self.input_is_stdin || self.used {
                return Err(ReadError::MultipleStdin);
            }
            self.used = true;
            io::stdin().lock().read_to_end(&mut bytes)?;
            return Ok(bytes);
        }
        match fs::File::open(filename) {
            Ok(mut f) => f.read_to_end(&mut bytes)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing(filename.to_string())),
            Err(e) => return Err(e.into()),
        };
        Ok(bytes)
    }
}

/// The core's callbacks for a command line: prompts on the terminal, plugins allowed (the user
/// named them).
struct Terminal;

impl core::Callbacks for Terminal {
    fn display_message(&self, message: &str) {
        UiCallbacks.display_message(message)
    }
    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
        UiCallbacks.request_passphrase(description).map(|p| Zeroizing::new(p.expose_secret().to_string()))
    }
    fn confirm(&self, message: &str, yes: &str, no: Option<&str>) -> Option<bool> {
        UiCallbacks.confirm(message, yes, no)
    }
    fn request_public_string(&self, description: &str) -> Option<String> {
        UiCallbacks.request_public_string(description)
    }
    fn plugins(&self) -> core::plugin::Plugins {
        core::plugin::Plugins::allowed(true)
    }
}

/// A core error while reading identities, as age's.
fn identity_error(file: &str, e: hyperseal::Error) -> ReadError {
    match e {
        hyperseal::Error::Io(e) => ReadError::Io(e),
        hyperseal::Error::WrongPassphrase | hyperseal::Error::HeaderMac => {
            ReadError::EncryptedIdentities(DecryptError::KeyDecryptionFailed)
        }
        hyperseal::Error::InvalidArgument(_) => {
            ReadError::IdentityEncryptedWithoutPassphrase(file.to_string())
        }
        other => ReadError::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("identity file {file}: {other}"),
        )),
    }
}

/// Reads identities from the given files (`-` for standard input): identity files of every
/// kind the core knows, SSH private keys, and passphrase-encrypted identity files (the
/// passphrase is asked on the terminal). `max_work_factor` is accepted for age's signature; the
/// core caps an encrypted identity file's work factor itself.
pub fn read_identities(
    filenames: Vec<String>,
    max_work_factor: Option<u8>,
    stdin_guard: &mut StdinGuard,
) -> Result<Vec<Box<dyn Identity>>, ReadError> {
    let _ = max_work_factor;
    let mut identities: Vec<Box<dyn Identity>> = vec![];
    for filename in filenames {
        let bytes = stdin_guard.read(&filename, ReadError::IdentityNotFound)?;
        let parsed = hyperseal::identity_file::parse(&bytes, Arc::new(Terminal))
            .map_err(|e| identity_error(&filename, e))?;
        identities.extend(parsed.into_iter().map(|i| Box::new(CoreIdentity(i)) as Box<dyn Identity>));
    }
    Ok(identities)
}

/// Reads recipients from strings, recipients files and identity files (`-` for standard
/// input), every kind the core knows: X25519, `age1pq1…`, SSH, tag and plugin recipients.
pub fn read_recipients(
    recipient_strings: Vec<String>,
    recipients_file_strings: Vec<String>,
    identity_strings: Vec<String>,
    max_work_factor: Option<u8>,
    stdin_guard: &mut StdinGuard,
) -> Result<Vec<Box<dyn Recipient + Send>>, ReadError> {
    let _ = max_work_factor;
    let callbacks: Arc<dyn core::Callbacks> = Arc::new(Terminal);
    let mut out: Vec<Box<dyn Recipient + Send>> = vec![];
    let mut push = |r: Box<dyn hyperseal::Recipient>| out.push(Box::new(CoreRecipient(r)));
    for s in recipient_strings {
        push(
            core::parse_recipient_with(&s, callbacks.clone())
                .map_err(|_| ReadError::InvalidRecipient(s.clone()))?,
        );
    }
    for file in recipients_file_strings {
        let bytes = stdin_guard.read(&file, ReadError::MissingRecipientsFile)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| ReadError::InvalidRecipient(file.clone()))?;
        let parsed = core::parse_recipients_file_with(text, callbacks.clone())
            .map_err(|e| ReadError::InvalidRecipient(format!("{file}: {e}")))?;
        parsed.into_iter().for_each(&mut push);
    }
    for file in identity_strings {
        let bytes = stdin_guard.read(&file, ReadError::IdentityNotFound)?;
        let parsed =
            hyperseal::identity_file::recipients_of_for(&bytes, callbacks.clone(), hyperseal::Profile::Age)
                .map_err(|e| identity_error(&file, e))?;
        parsed.into_iter().for_each(&mut push);
    }
    Ok(out)
}

/// Asks for a secret on the terminal; `confirm` asks a second time and requires a match.
pub fn read_secret(description: &str, prompt: &str, confirm: Option<&str>) -> pinentry::Result<SecretString> {
    let _ = description;
    let first =
        Zeroizing::new(rpassword::prompt_password(format!("{prompt}: ")).map_err(pinentry::Error::Io)?);
    if let Some(again) = confirm {
        let second =
            Zeroizing::new(rpassword::prompt_password(format!("{again}: ")).map_err(pinentry::Error::Io)?);
        if *first != *second {
            let e = io::Error::new(io::ErrorKind::InvalidInput, "the passphrases did not match");
            return Err(pinentry::Error::Io(e));
        }
    }
    Ok(SecretString::from(first.to_string()))
}

/// A passphrase, typed or generated.
pub enum Passphrase {
    /// Typed by the user.
    Typed(SecretString),
    /// Generated (the caller shows it once).
    Generated(SecretString),
}

impl Passphrase {
    /// A random passphrase: ten groups of five lower-case letters (about 235 bits), drawn from
    /// the system's random source by rejection, so every letter is equally likely.
    pub fn random() -> Self {
        let mut words = Zeroizing::new(String::with_capacity(59));
        let mut pool = Zeroizing::new([0u8; 64]);
        let mut at = pool.len();
        while words.len() < 59 {
            if words.len() % 6 == 5 {
                words.push('-');
                continue;
            }
            if at == pool.len() {
                hyperseal::fill_random(&mut pool[..]).expect("the system RNG works");
                at = 0;
            }
            let b = pool[at];
            at += 1;
            // 234 = 9 × 26: bytes above it would favour the first letters.
            if b < 234 {
                words.push((b'a' + b % 26) as char);
            }
        }
        Passphrase::Generated(SecretString::from(words.to_string()))
    }
}

/// Asks for a passphrase twice; an empty one is replaced by a generated one.
pub fn read_or_generate_passphrase() -> pinentry::Result<Passphrase> {
    let prompt = "Enter passphrase (leave empty to autogenerate a secure one)";
    let passphrase = read_secret(prompt, prompt, None)?;
    if passphrase.expose_secret().is_empty() {
        return Ok(Passphrase::random());
    }
    let again = read_secret("Confirm passphrase", "Confirm passphrase", None)?;
    if again.expose_secret() != passphrase.expose_secret() {
        return Err(pinentry::Error::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the passphrases did not match",
        )));
    }
    Ok(Passphrase::Typed(passphrase))
}

/// Callbacks on the terminal: messages on stderr, questions on `/dev/tty`.
#[derive(Clone, Copy, Debug)]
pub struct UiCallbacks;

impl Callbacks for UiCallbacks {
    fn display_message(&self, message: &str) {
        eprintln!("{message}");
    }

    fn confirm(&self, message: &str, yes_string: &str, no_string: Option<&str>) -> Option<bool> {
        let choices = match no_string {
            Some(no) => format!("{message} [{yes_string}/{no}]: "),
            None => format!("{message} [{yes_string}]: "),
        };
        let answer = rpassword::prompt_password(choices).ok()?;
        match no_string {
            Some(no) if answer.trim() == no => Some(false),
            _ => Some(answer.trim() == yes_string),
        }
    }

    fn request_public_string(&self, description: &str) -> Option<String> {
        eprint!("{description}: ");
        let mut line = String::new();
        io::stdin().read_line(&mut line).ok()?;
        Some(line.trim_end().to_string())
    }

    fn request_passphrase(&self, description: &str) -> Option<SecretString> {
        read_secret(description, description, None).ok()
    }
}

// age's `localizer()`, re-exported at the crate's root.
pub(crate) mod i18n {
    //! age's `localizer()` (`cli-common` feature): programs like rage select their languages through
    //! it at start-up. This crate's messages are English only, so the localizer offers `en-US`, with
    //! an empty message file: selecting any language succeeds and changes nothing.

    use std::borrow::Cow;

    use i18n_embed::fluent::FluentLanguageLoader;
    use i18n_embed::{I18nAssets, LanguageLoader, Localizer};

    /// The one asset: an empty `en-US/age.ftl`.
    struct Assets;

    const FILE: &str = "en-US/age.ftl";

    impl I18nAssets for Assets {
        fn get_files(&self, file_path: &str) -> Vec<Cow<'_, [u8]>> {
            match file_path == FILE {
                true => vec![Cow::Borrowed(&b""[..])],
                false => vec![],
            }
        }

        fn filenames_iter(&self) -> Box<dyn Iterator<Item = String> + '_> {
            Box::new(std::iter::once(FILE.to_string()))
        }
    }

    struct English {
        loader: FluentLanguageLoader,
    }

    impl Localizer for English {
        fn language_loader(&self) -> &'_ dyn LanguageLoader {
            &self.loader
        }

        fn i18n_assets(&self) -> &'_ dyn I18nAssets {
            &Assets
        }
    }

    /// Returns the [`Localizer`] to be used for localizing this library.
    pub fn localizer() -> Box<dyn Localizer> {
        let loader = FluentLanguageLoader::new("age", "en-US".parse().expect("a valid language tag"));
        Box::new(English { loader })
    }
}
