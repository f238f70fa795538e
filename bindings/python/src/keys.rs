//! Keys: `Identity`, `generate_key`, `public_of`, and the conversion of the Python arguments
//! `recipients`/`identities`/`passphrase` into the library's recipients and identities, over
//! `hyperseal::recipient::{generate, public_of, parse_recipients_file, parse_identities}`.
//! Recipients and identities are given as the very strings the CLI prints and reads (`age1…`,
//! `age1pq1…`, `AGE-SECRET-KEY-…`, PEM), or as `Identity` objects; a detached header's
//! `FileKey` is an identity too, so it is defined here (`header.rs` makes one).
//!
//! Parsing is not free: a hybrid public key is ~1.9 KB of bech32, and a hybrid identity expands
//! its seed into ML-KEM keys on every parse (together ~120 µs, more than sealing 1 KB to it). So
//! an `Identity` parses its keys once, on first use, and key strings are looked up in a small
//! cache of the last few parsed (as the Node package does). Cached identities are the
//! library's own types, which zeroize on drop.
//!
//! Key strings that name an age plugin (`age1NAME1…`, `AGE-PLUGIN-NAME-1…`) run the program
//! `age-plugin-NAME`, so the library refuses them unless a call passes `allow_plugins=True`,
//! which goes through as its `Plugins` policy. Each policy has its own caches: a key parsed for
//! a call that allowed plugins is never handed to one that did not.

use hyperseal::detached::FileKeyIdentity;
use hyperseal::recipient;
use hyperseal::recipient::{Identity as LibIdentity, Kind, Recipient};
use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use zeroize::Zeroizing;

use crate::agent::AgentIdentity;
use crate::buffers::Input;
use crate::errors::{ArgumentError, IntoPy};

/// A key pair: `public` is the recipient string to encrypt to; `secret` the identity string
/// (an `AGE-SECRET-KEY-…` line or a PKCS#8 PEM). `repr()` never shows the secret.
#[pyclass(frozen, module = "hyperseal")]
pub struct Identity {
    secret: Zeroizing<String>,
    public: String,
    recipients: OnceLock<Recipients>,
    identities: OnceLock<Identities>,
}

impl Identity {
    fn of(secret: Zeroizing<String>, public: String) -> Self {
        Identity { secret, public, recipients: OnceLock::new(), identities: OnceLock::new() }
    }

    /// Its recipient, parsed on first use.
    fn recipients(&self) -> PyResult<Recipients> {
        if let Some(r) = self.recipients.get() {
            return Ok(r.clone());
        }
        let parsed = Arc::new(vec![recipient::parse_recipient(&self.public).py_err()?]);
        Ok(self.recipients.get_or_init(|| parsed).clone())
    }

    /// Its identities, parsed on first use.
    fn identities(&self) -> PyResult<Identities> {
        if let Some(i) = self.identities.get() {
            return Ok(i.clone());
        }
        let parsed = Arc::new(recipient::parse_identities(&self.secret).py_err()?);
        Ok(self.identities.get_or_init(|| parsed).clone())
    }
}

/// Parsed recipients and identities, shared by the caches and the calls that use them.
pub type Recipients = Arc<Vec<Box<dyn Recipient>>>;
pub type Identities = Arc<Vec<Box<dyn LibIdentity>>>;

/// The last few parsed key strings (the library's `KeyCache`: it keeps no key text and compares
/// in constant time).
type Cache<T> = hyperseal::KeyCache<T>;

/// Indexed by `allow_plugins` (False, True).
static RECIPIENTS: [Cache<Recipients>; 2] = [Cache::new(), Cache::new()];
static IDENTITIES: [Cache<Identities>; 2] = [Cache::new(), Cache::new()];

/// The library's callbacks for a call: answer nothing, allow plugins only if asked to.
fn policy(allow_plugins: bool) -> Arc<dyn recipient::Callbacks> {
    Arc::new(recipient::plugin::Plugins::allowed(allow_plugins))
}

#[pymethods]
impl Identity {
    /// Parses an identity string (as `hyperseal keygen` writes it).
    #[new]
    fn new(secret: &str) -> PyResult<Self> {
        let public = recipient::public_of(secret).py_err()?;
        Ok(Identity::of(Zeroizing::new(secret.trim().to_string()), public))
    }

    #[getter]
    fn public(&self) -> &str {
        &self.public
    }

    #[getter]
    fn secret(&self) -> &str {
        &self.secret
    }

    fn __repr__(&self) -> String {
        format!("Identity(public={:?}, secret=<redacted>)", self.public)
    }

    /// Same key pair: compared by the public key (one per secret), so no comparison ever
    /// runs over secret bytes.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Identity>().is_ok_and(|o| o.get().public == self.public)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.public.hash(&mut h);
        h.finish()
    }

    /// Pickling (for Dask and multiprocessing) sends the secret string: a worker that opens
    /// files needs the key. Send it only over channels you trust (see `hyperseal.dask`).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().into_any(), (slf.get().secret.to_string(),)))
    }
}

/// A new key pair. `kind`: "hybrid" (ML-KEM-768 + X25519, age v1.3's post-quantum keys; the
/// default), "x25519", "mlkem1024", "p256", "p256-mlkem768", "rsa3072" or "rsa4096".
#[pyfunction]
#[pyo3(signature = (kind = "hybrid"))]
pub fn generate_key(py: Python<'_>, kind: &str) -> PyResult<Identity> {
    let kind = Kind::from_name(kind).ok_or_else(|| {
        ArgumentError::new_err(format!(
            "unknown key kind {kind:?}: hybrid, x25519, mlkem1024, p256, p256-mlkem768, rsa3072 or rsa4096"
        ))
    })?;
    // RSA key generation takes a while: let other threads run.
    let k = py.detach(|| recipient::generate(kind)).py_err()?;
    Ok(Identity::of(k.secret, k.public))
}

/// The recipient (public key) string of an identity string: what `hyperseal pubkey` prints.
#[pyfunction]
pub fn public_of(secret: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(id) = secret.cast::<Identity>() {
        return Ok(id.get().public.clone());
    }
    let text = Zeroizing::new(secret.extract::<String>()?);
    recipient::public_of(&text).py_err()
}

/// One item or a list/tuple of them.
fn items<'py>(obj: &Bound<'py, PyAny>) -> Vec<Bound<'py, PyAny>> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        obj.try_iter().map(|it| it.filter_map(Result::ok).collect()).unwrap_or_default()
    } else {
        vec![obj.clone()]
    }
}

fn not_keys(what: &str) -> PyErr {
    let kinds = if what == "identities" { "str, Identity, AgentIdentity, FileKey" } else { "str, Identity" };
    pyo3::exceptions::PyTypeError::new_err(format!("{what} must be {kinds}, or a list of them"))
}

/// The recipients of one item: an `Identity` (its own parsed key) or a string (cached).
fn recipients_of_item(item: &Bound<'_, PyAny>, allow_plugins: bool) -> PyResult<Recipients> {
    if let Ok(id) = item.cast::<Identity>() {
        return id.get().recipients();
    }
    let Ok(s) = item.cast::<PyString>() else { return Err(not_keys("recipients")) };
    let text = s.to_str()?;
    RECIPIENTS[usize::from(allow_plugins)].get_or_parse(text, || {
        Ok(Arc::new(recipient::parse_recipients_file_with(text, policy(allow_plugins)).py_err()?))
    })
}

/// The identities of one item, as for recipients.
fn identities_of_item(item: &Bound<'_, PyAny>, allow_plugins: bool) -> PyResult<Identities> {
    if let Ok(id) = item.cast::<Identity>() {
        return id.get().identities();
    }
    if let Ok(agent) = item.cast::<AgentIdentity>() {
        return Ok(Arc::new(vec![agent.get().identity()]));
    }
    if let Ok(key) = item.cast::<FileKey>() {
        return Ok(Arc::new(vec![key.get().identity()]));
    }
    let Ok(s) = item.cast::<PyString>() else { return Err(not_keys("identities")) };
    let text = s.to_str()?;
    IDENTITIES[usize::from(allow_plugins)].get_or_parse(text, || {
        Ok(Arc::new(recipient::parse_identities_with(text, policy(allow_plugins)).py_err()?))
    })
}

/// The recipients of `recipients` (a string, an `Identity`, or a list of them). One item is
/// the cached parse itself; several are parsed afresh into one list (boxed keys do not clone).
/// Plugin recipients only with `allow_plugins`.
pub fn recipients_of(obj: &Bound<'_, PyAny>, allow_plugins: bool) -> PyResult<Recipients> {
    let list = items(obj);
    let out = match list.as_slice() {
        [one] => recipients_of_item(one, allow_plugins)?,
        _ => {
            let mut out = Vec::new();
            for item in &list {
                if let Ok(id) = item.cast::<Identity>() {
                    out.push(recipient::parse_recipient(&id.get().public).py_err()?);
                } else if let Ok(s) = item.cast::<PyString>() {
                    out.extend(
                        recipient::parse_recipients_file_with(s.to_str()?, policy(allow_plugins)).py_err()?,
                    );
                } else {
                    return Err(not_keys("recipients"));
                }
            }
            Arc::new(out)
        }
    };
    if out.is_empty() {
        return Err(ArgumentError::new_err("no recipients"));
    }
    Ok(out)
}

/// The identities of `identities` (as for recipients) plus, with a passphrase, the passphrase
/// identities of both profiles (Argon2id for hyperseal files, scrypt for age files): each
/// answers only its own stanza type, so the file's header needs not be read first. Plugin
/// identities only with `allow_plugins`.
pub fn identities_of(
    obj: Option<&Bound<'_, PyAny>>,
    passphrase: Option<&Bound<'_, PyAny>>,
    allow_plugins: bool,
) -> PyResult<Identities> {
    let pass = passphrase_of(passphrase)?;
    let list = obj.map(items).unwrap_or_default();
    if let (None, [one]) = (&pass, list.as_slice()) {
        return identities_of_item(one, allow_plugins);
    }
    let mut out: Vec<Box<dyn LibIdentity>> = Vec::new();
    if let Some(p) = pass {
        out.extend(recipient::passphrase_identities(p));
    }
    for item in &list {
        if let Ok(id) = item.cast::<Identity>() {
            out.extend(recipient::parse_identities(&id.get().secret).py_err()?);
        } else if let Ok(agent) = item.cast::<AgentIdentity>() {
            out.push(agent.get().identity());
        } else if let Ok(key) = item.cast::<FileKey>() {
            out.push(key.get().identity());
        } else if let Ok(s) = item.cast::<PyString>() {
            let text = Zeroizing::new(s.to_str()?.to_string());
            out.extend(recipient::parse_identities_with(&text, policy(allow_plugins)).py_err()?);
        } else {
            return Err(not_keys("identities"));
        }
    }
    if out.is_empty() {
        return Err(ArgumentError::new_err("no identities (give identities= or passphrase=)"));
    }
    Ok(Arc::new(out))
}

/// A passphrase given as `str` or bytes (UTF-8), held zeroizing.
pub fn passphrase_of(p: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Zeroizing<String>>> {
    let Some(p) = p else { return Ok(None) };
    let text = match p.cast::<PyString>() {
        Ok(s) => Zeroizing::new(s.to_str()?.to_string()),
        Err(_) => {
            let input = Input::get(p, "passphrase")?;
            let s = std::str::from_utf8(input.as_slice())
                .map_err(|_| ArgumentError::new_err("the passphrase must be UTF-8"))?;
            Zeroizing::new(s.to_string())
        }
    };
    if text.is_empty() {
        return Err(ArgumentError::new_err("the passphrase is empty"));
    }
    Ok(Some(text))
}

/// What to encrypt to: recipients, or a passphrase (never both, as in the CLI and age).
pub enum To {
    Recipients(Recipients),
    Passphrase(Zeroizing<String>),
}

impl To {
    pub fn of(
        recipients: Option<&Bound<'_, PyAny>>,
        passphrase: Option<&Bound<'_, PyAny>>,
        allow_plugins: bool,
    ) -> PyResult<To> {
        match (recipients, passphrase_of(passphrase)?) {
            (Some(_), Some(_)) => Err(ArgumentError::new_err(
                "give recipients or a passphrase, not both (a passphrase file has one stanza only)",
            )),
            (None, Some(p)) => Ok(To::Passphrase(p)),
            (Some(r), None) => Ok(To::Recipients(recipients_of(r, allow_plugins)?)),
            (None, None) => Err(ArgumentError::new_err("no recipients (give recipients= or passphrase=)")),
        }
    }

    /// The library's `Encryptor` for these options (slow for a passphrase: run it detached).
    pub fn encryptor(self, opts: hyperseal::Options) -> Result<hyperseal::Encryptor, hyperseal::Error> {
        match self {
            To::Recipients(r) => hyperseal::Encryptor::with_recipients(&r, opts),
            To::Passphrase(p) => hyperseal::Encryptor::with_passphrase(p, opts),
        }
    }
}

/// The library's `Options` from `format` ("hyperseal" or "age") and `suite` (a suite name as
/// the CLI takes it; age files are always ChaCha20-Poly1305).
pub fn options_of(format: &str, suite: Option<&str>) -> PyResult<hyperseal::Options> {
    hyperseal::Options::named(format, suite, None).py_err()
}

/// A file key (`hyperseal.header.FileKey`, as `header_decrypt` gives it): it opens one file as
/// well as any of its identities does. Zeroized when it is freed; `repr()` never shows it.
/// `expose()` copies it into a `bytes` (which Python cannot zeroize): only to send it to where
/// the payload is opened.
#[pyclass(frozen, module = "hyperseal.header")]
pub struct FileKey {
    key: hyperseal::FileKey,
}

impl FileKey {
    /// The key `header_decrypt` opened (`header.rs`).
    pub fn from_key(key: hyperseal::FileKey) -> Self {
        FileKey { key }
    }

    /// The identity of this key, for the decrypt functions.
    pub fn identity(&self) -> Box<dyn hyperseal::Identity> {
        Box::new(FileKeyIdentity::new(self.key.clone()))
    }
}

#[pymethods]
impl FileKey {
    /// A file key from its 16 (age) or 32 (hyperseal) bytes, as `expose()` gave them.
    #[new]
    fn new(key: &Bound<'_, PyAny>) -> PyResult<Self> {
        let input = Input::get(key, "key")?;
        let key = hyperseal::FileKey::from_slice(input.as_slice())
            .ok_or_else(|| ArgumentError::new_err("a file key is 16 or 32 bytes"))?;
        Ok(FileKey { key })
    }

    /// The key bytes.
    fn expose<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.key.expose())
    }

    fn __len__(&self) -> usize {
        self.key.expose().len()
    }

    fn __repr__(&self) -> String {
        format!("FileKey({} bits, redacted)", self.key.expose().len() * 8)
    }
}
