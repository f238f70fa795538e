//! What `hyperseal.pyrage` (pyrage's API over this package) needs beyond the rest of the
//! binding: a key string checked as one kind, by that kind's own parser in the library (pyrage's
//! `x25519.Identity.from_str` takes X25519 identities only, where `hyperseal.Identity` takes any
//! kind), and whole streams between two Python file objects (pyrage's `encrypt_io` and
//! `decrypt_io`) on the library's `encrypt_stream` / `decrypt_stream` with the GIL released.
//! Only argument conversion happens here.

use std::sync::Arc;

use hyperseal::recipient::{self, hybrid, plugin, tag, x25519};
use hyperseal::{Decryptor, Error};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use zeroize::Zeroizing;

use crate::errors::{ArgumentError, IntoPy};
use crate::keys::{identities_of, options_of, To};
use crate::pyio::PyFile;

/// `text` parsed as `kind`, in its canonical spelling (the string pyrage's `str()` gives):
/// "x25519-identity", "x25519-recipient", "pq-identity", "pq-recipient", "tag", "tagpq",
/// "ssh-recipient", "ssh-identity", "plugin-identity", "plugin-recipient", or "plugin-name" (a
/// plugin's identity without data, `AGE-PLUGIN-NAME-1…`, from its name); "plugin-identity:name"
/// and "plugin-recipient:name" give the plugin's name instead. No plugin runs.
#[pyfunction]
pub fn parse_key_as(py: Python<'_>, kind: &str, text: &str) -> PyResult<String> {
    let text = Zeroizing::new(text.to_string());
    let t = text.trim();
    // Parsing a post-quantum identity expands ML-KEM keys; an RSA key checks its primes.
    let parsed = py.detach(|| -> Result<String, Error> {
        // Parsing runs no plugin; the policy only lets a plugin's key string through the parser.
        let parse_only = || Arc::new(plugin::Plugins::allowed(true));
        Ok(match kind {
            "x25519-identity" => x25519::X25519Identity::from_bech32(t)?.to_bech32().to_string(),
            "x25519-recipient" => x25519::X25519Recipient::from_bech32(t)?.to_bech32(),
            "pq-identity" => hybrid::HybridIdentity::from_bech32(t)?.to_bech32().to_string(),
            "pq-recipient" => hybrid::HybridRecipient::from_bech32(t)?.to_bech32(),
            "tag" | "tagpq" => {
                let r = tag::TagRecipient::from_bech32(t)?;
                if r.is_postquantum() != (kind == "tagpq") {
                    let want = if kind == "tagpq" { "age1tagpq1…" } else { "age1tag1…" };
                    return Err(Error::InvalidRecipient(format!("not a {want} recipient")));
                }
                r.to_bech32()
            }
            "ssh-recipient" => {
                recipient::ssh::parse_recipient(t)?;
                t.to_string()
            }
            "ssh-identity" => {
                if !t.starts_with("-----BEGIN") {
                    return Err(Error::InvalidKey("not an SSH private key".into()));
                }
                recipient::parse_identities(t)?;
                text.to_string()
            }
            "plugin-identity" => {
                plugin::PluginIdentity::from_bech32(t, parse_only())?;
                t.to_string()
            }
            "plugin-recipient" => {
                plugin::PluginRecipient::from_bech32(t, parse_only())?;
                t.to_string()
            }
            "plugin-identity:name" => {
                plugin::PluginIdentity::from_bech32(t, parse_only())?.name().to_string()
            }
            "plugin-recipient:name" => {
                plugin::PluginRecipient::from_bech32(t, parse_only())?.name().to_string()
            }
            "plugin-name" => {
                plugin::PluginIdentity::without_data(t, parse_only())?;
                plugin::identity_string(t, &[])
            }
            other => return Err(Error::InvalidArgument(format!("unknown key kind {other:?}"))),
        })
    });
    parsed.py_err()
}

/// A binary file object's method, or pyrage's `TypeError`.
fn file_object(obj: &Bound<'_, PyAny>, method: &str) -> PyResult<PyFile> {
    if !obj.hasattr(method)? || obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!("expected a binary file object with {method}()")));
    }
    Ok(PyFile::new(obj))
}

/// Encrypts everything `reader` gives onto `writer` (armored or not), in constant memory.
#[pyfunction]
#[pyo3(signature = (reader, writer, recipients = None, *, passphrase = None, format = "hyperseal", armor = false, threads = 0, allow_plugins = false))]
#[allow(clippy::too_many_arguments)]
pub fn encrypt_stream(
    py: Python<'_>,
    reader: &Bound<'_, PyAny>,
    writer: &Bound<'_, PyAny>,
    recipients: Option<&Bound<'_, PyAny>>,
    passphrase: Option<&Bound<'_, PyAny>>,
    format: &str,
    armor: bool,
    threads: usize,
    allow_plugins: bool,
) -> PyResult<u64> {
    let (mut input, mut output) = (file_object(reader, "read")?, file_object(writer, "write")?);
    let opts = options_of(format, None)?;
    let profile = opts.profile;
    let to = To::of(recipients, passphrase, allow_plugins)?;
    py.detach(|| {
        let enc = to.encryptor(opts)?.threads(threads);
        if !armor {
            return enc.encrypt_stream(&mut input, &mut output, None);
        }
        let mut armored = hyperseal::armored(output, profile);
        let n = enc.encrypt_stream(&mut input, &mut armored, None)?;
        armored.finish()?;
        Ok(n)
    })
    .py_err()
}

/// Decrypts the file `reader` gives (armored or not) onto `writer`. Chunks are written as they
/// authenticate: a damaged file fails after what authenticated before it was written.
#[pyfunction]
#[pyo3(signature = (reader, writer, identities = None, *, passphrase = None, threads = 0, allow_plugins = false))]
pub fn decrypt_stream(
    py: Python<'_>,
    reader: &Bound<'_, PyAny>,
    writer: &Bound<'_, PyAny>,
    identities: Option<&Bound<'_, PyAny>>,
    passphrase: Option<&Bound<'_, PyAny>>,
    threads: usize,
    allow_plugins: bool,
) -> PyResult<u64> {
    let (input, mut output) = (file_object(reader, "read")?, file_object(writer, "write")?);
    let ids = identities_of(identities, passphrase, allow_plugins)?;
    if ids.is_empty() {
        return Err(ArgumentError::new_err("no identities"));
    }
    py.detach(|| Decryptor::new(input)?.threads(threads).decrypt_stream(&ids, &mut output, None)).py_err()
}
