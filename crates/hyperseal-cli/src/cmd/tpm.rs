//! TPM-bound identities in the CLI: `keygen --tpm`, and `-i` files that hold
//! `AGE-PLUGIN-HYPERSEAL-1…` TPM lines (or age-plugin-tpm's `AGE-PLUGIN-TPM-1…`), read natively (no plugin process) into
//! `hyperseal_tpm::TpmIdentity`. The TPM code lives in `hyperseal-tpm`; this file only finds the
//! TPM (`TPM2TOOLS_TCTI`, `TCTI`, as tpm2-tools does), asks the PIN and prints.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use hyperseal::recipient::{Callbacks, Identity};
use hyperseal_agent::reader::worded;
use hyperseal_tpm::{age_plugin_tpm, Location, TpmError, TpmIdentity, TpmKey};
use zeroize::Zeroizing;

use crate::errors::hint;

/// `hyperseal keygen --tpm`'s own options.
#[derive(Args, Default)]
pub struct TpmKeygenArgs {
    /// Make the key in this machine's TPM 2.0 (TPM2TOOLS_TCTI, TCTI, else /dev/tpmrm0): the
    /// identity file holds only blobs the TPM wrapped to itself.
    #[arg(long)]
    pub tpm: bool,
    /// With --tpm: post-quantum, an age1tagpq1… recipient (the default).
    #[arg(long, requires = "tpm", conflicts_with = "classic")]
    pub pq: bool,
    /// With --tpm: classic only, an age1tag1… recipient (age-plugin-tpm's kind).
    #[arg(long, requires = "tpm")]
    pub classic: bool,
    /// With --tpm: protect the key with a PIN (asked twice; the TPM locks out after a few
    /// wrong ones).
    #[arg(long, requires = "tpm")]
    pub pin: bool,
    /// With --pin: the PIN is the first line of FILE (scripts).
    #[arg(long = "pin-file", value_name = "FILE", requires = "pin")]
    pub pin_file: Option<PathBuf>,
    /// With --tpm: bind the key to these PCRs' current values (SHA-256 bank), e.g. 7 (Secure
    /// Boot state). A firmware or kernel update can change them; keep a recovery key.
    #[arg(long, value_name = "N,…", value_delimiter = ',', requires = "tpm")]
    pub pcr: Vec<u8>,
    /// With --tpm: also write a recovery key (an ordinary hyperseal key of the same strength)
    /// to FILE, to keep offline: a TPM key dies with its machine.
    #[arg(long, value_name = "FILE", requires = "tpm")]
    pub recovery: Option<PathBuf>,
}

/// Where the TPM is: `TPM2TOOLS_TCTI`, then `TCTI`, else `/dev/tpmrm0`.
pub fn location() -> Result<Location, hyperseal::Error> {
    let tcti =
        ["TPM2TOOLS_TCTI", "TCTI"].iter().find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    Location::parse(tcti.as_deref().unwrap_or("")).map_err(|e| e.into_error())
}

/// Whether `line` is a TPM key's: ours, or age-plugin-tpm's (read natively too).
fn is_tpm_line(line: &str) -> bool {
    TpmKey::is_tpm_identity(line) || age_plugin_tpm::is_identity(line)
}

fn tpm_key(line: &str) -> Result<TpmKey, TpmError> {
    if age_plugin_tpm::is_identity(line) {
        age_plugin_tpm::parse(line)
    } else {
        TpmKey::from_identity_string(line)
    }
}

/// The identities of an identity file that holds TPM lines (its other lines parsed by `rest`),
/// or `None` for a file without any, which the caller parses as before.
pub fn parse_identities(
    bytes: &[u8],
    callbacks: Arc<dyn Callbacks>,
    rest: impl Fn(&[u8], Arc<dyn Callbacks>) -> Result<Vec<Box<dyn Identity>>, hyperseal::Error>,
) -> Result<Vec<Box<dyn Identity>>, hyperseal::Error> {
    let Some(text) = std::str::from_utf8(bytes).ok().filter(|t| t.lines().any(|l| is_tpm_line(l.trim())))
    else {
        return rest(bytes, callbacks);
    };
    let mut out: Vec<Box<dyn Identity>> = Vec::new();
    let mut others = Zeroizing::new(String::new());
    for line in text.lines() {
        if is_tpm_line(line.trim()) {
            let key = tpm_key(line.trim()).map_err(|e| e.into_error())?;
            out.push(Box::new(TpmIdentity::new(key, location()?, callbacks.clone(), "the TPM key")));
        } else if !line.trim().is_empty() && !line.starts_with('#') {
            others.push_str(line);
            others.push('\n');
        }
    }
    if !others.is_empty() {
        out.extend(rest(others.as_bytes(), callbacks)?);
    }
    Ok(out)
}

/// A TPM error as a client of the agent or age shows it: its message and hint on one line.
pub fn said(e: &hyperseal::Error) -> String {
    match hyperseal_tpm::split_hint(e) {
        Some((message, hint)) => format!("{message} (hint: {hint})"),
        None => e.to_string(),
    }
}

/// TPM identity files for the agent (`hyperseal agent add host.key`), handed to the agent when
/// the CLI starts it: the agent crate has no TPM code. The agent holds the file's text (TPM
/// blobs only) and makes its identities for each request with the PIN from its own cache.
pub struct AgentReader;

/// A TPM identity whose errors read as one line (the agent's client shows them as they are).
struct Worded(TpmIdentity);

impl Identity for Worded {
    fn unwrap_stanza(
        &self,
        stanza: &hyperseal::format::Stanza,
    ) -> Option<Result<hyperseal::FileKey, hyperseal::Error>> {
        self.0.unwrap_stanza(stanza).map(|r| r.map_err(|e| worded(said_by_agent(&e))))
    }
}

/// The agent's callbacks, with the PIN prompt ending as a prompt does: the agent's client (age
/// through `age-plugin-hyperseal`) shows it as it is.
struct Prompted(Arc<dyn Callbacks>);

impl Callbacks for Prompted {
    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
        self.0.request_passphrase(&format!("{description}:"))
    }
}

/// A TPM error as the agent's client shows it: a missing PIN is the client's to type, not a
/// file's to give (the native path's hint names `--identity-passphrase-file`).
fn said_by_agent(e: &hyperseal::Error) -> String {
    if e.to_string() == TpmError::NoPin.into_error().to_string() {
        return "TPM: the key needs its PIN and none was given (hint: run age or hyperseal on a terminal once to type it; the agent keeps it for its --pin-ttl)".into();
    }
    said(e)
}

impl hyperseal_agent::reader::Reader for AgentReader {
    fn reads(&self, text: &str) -> bool {
        text.lines().any(|l| is_tpm_line(l.trim()))
    }

    /// Refuses a file that mixes TPM lines with other keys: the agent would have to ask for
    /// those keys' secrets at every request (add them from their own file).
    fn recipients(
        &self,
        text: &str,
    ) -> Result<Vec<(String, Box<dyn hyperseal::recipient::Recipient>)>, hyperseal::Error> {
        let other = |l: &&str| !l.is_empty() && !l.starts_with('#') && !is_tpm_line(l);
        if text.lines().map(str::trim).any(|l| other(&l)) {
            return Err(worded(
                "a TPM identity file for the agent holds TPM lines only: add its other keys from a file of their own".into(),
            ));
        }
        let all = recipients_of(text.as_bytes()).unwrap_or(Ok(Vec::new())).map_err(|e| worded(said(&e)))?;
        Ok(all
            .into_iter()
            .map(|r| (r.to_bech32(), Box::new(r) as Box<dyn hyperseal::recipient::Recipient>))
            .collect())
    }

    fn identities(
        &self,
        text: &str,
        name: &str,
        callbacks: Arc<dyn Callbacks>,
    ) -> Result<Vec<Box<dyn Identity>>, hyperseal::Error> {
        let location = location().map_err(|e| worded(said(&e)))?;
        let callbacks: Arc<dyn Callbacks> = Arc::new(Prompted(callbacks));
        let mut out: Vec<Box<dyn Identity>> = Vec::new();
        for line in text.lines().map(str::trim).filter(|l| is_tpm_line(l)) {
            let key = tpm_key(line).map_err(|e| worded(said(&e.into_error())))?;
            out.push(Box::new(Worded(TpmIdentity::new(key, location.clone(), callbacks.clone(), name))));
        }
        Ok(out)
    }
}

/// The recipients of an identity file's TPM keys (`encrypt -i host.key`, `pubkey`): a classic
/// key's from its point, a post-quantum key's from the `# public key:` line keygen wrote
/// (checked against the key); `None` for a file without TPM lines.
pub fn recipients_of(
    bytes: &[u8],
) -> Option<Result<Vec<hyperseal::recipient::tag::TagRecipient>, hyperseal::Error>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| is_tpm_line(l)).collect();
    if lines.is_empty() {
        return None;
    }
    let each = |l: &&str| tpm_key(l).and_then(|k| k.recipient_in(text)).map_err(|e| e.into_error());
    Some(lines.iter().map(each).collect())
}

/// The PIN of `keygen --tpm --pin`: the first line of `--pin-file`, or asked twice.
fn new_pin(file: Option<&Path>) -> Result<Zeroizing<String>> {
    let pin = match file {
        Some(f) => crate::io::read_passphrase_file(f)?,
        None => {
            let a = crate::terminal::read_secret("New TPM PIN:")?;
            let b = crate::terminal::read_secret("The same PIN again:")?;
            if a != b {
                return Err(hint("the two PINs differ", "run keygen --tpm --pin again"));
            }
            a
        }
    };
    if pin.is_empty() || pin.len() > hyperseal_tpm::MAX_PIN {
        return Err(hint(
            format!("a TPM PIN is 1 to {} bytes", hyperseal_tpm::MAX_PIN),
            "choose a shorter PIN (the TPM's lockout, not the length, stops guessing)",
        ));
    }
    Ok(pin)
}

/// `hyperseal keygen --tpm`: the identity file (or stdout), the recipient on stderr.
pub fn keygen(a: &TpmKeygenArgs, output: Option<&Path>) -> Result<()> {
    let pin = a.pin.then(|| new_pin(a.pin_file.as_deref())).transpose()?;
    let options = hyperseal_tpm::Options {
        postquantum: !a.classic,
        pin: pin.as_ref().map(|p| p.as_bytes()),
        pcrs: &a.pcr,
    };
    let (key, recipient) =
        hyperseal_tpm::generate(&location()?, &options).map_err(|e| anyhow::Error::new(e.into_error()))?;
    let recipient = recipient.to_bech32();
    let created =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let pcrs: Vec<String> = key.pcrs().iter().map(u8::to_string).collect();
    let text = format!(
        "# created: {created} (unix time)\n# kind: tpm{} (pin: {}, pcrs: {})\n# public key: {recipient}\n# This key opens files only with the TPM that made it.\n{}\n",
        if key.is_postquantum() { " p256-mlkem768" } else { " p256" },
        if key.has_pin() { "yes" } else { "no" },
        if pcrs.is_empty() { "none".to_string() } else { pcrs.join(",") },
        key.to_identity_string()
    );
    crate::io::write_new_key(output, &text)?;
    eprintln!("Public key: {recipient}");
    match &a.recovery {
        Some(path) => {
            let kind = if key.is_postquantum() { hyperseal::Kind::Hybrid } else { hyperseal::Kind::X25519 };
            let spare = hyperseal::recipient::generate(kind)?;
            let text = format!("# recovery key for {recipient}\n# public key: {}\n{}\n", spare.public, spare.secret.as_str());
            crate::io::write_new_key(Some(path), &text)?;
            eprintln!("Recovery public key: {} (keep {} offline)", spare.public, path.display());
            eprintln!("Encrypt to both: -r {recipient} -r {}", spare.public);
        }
        None => eprintln!(
            "Note: a TPM key dies with its machine (or a TPM clear): also encrypt to a recovery key kept offline (keygen --tpm --recovery FILE makes one)."
        ),
    }
    let _ = std::io::stderr().flush();
    Ok(())
}
