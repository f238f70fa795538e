//! Key strings → parsed recipients and identities, with a small cache.
//!
//! Parsing is not free (a hybrid identity expands its seed into ML-KEM keys, tens of µs), and
//! servers call the API with the same few keys over and over, so the last few parsed key sets
//! are kept. Cached identities are the library's own types, which zeroize on drop.
//!
//! Plugins (`age1NAME1…`, `AGE-PLUGIN-NAME-1…`, which run the program `age-plugin-NAME`) are
//! refused by the library unless the call passes `allowPlugins: true`; that flag goes through
//! as the library's `Plugins` policy. Each policy has its own caches, so a key parsed for a
//! caller that allowed plugins is never handed to one that did not.

use std::sync::Arc;

use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::{self, Callbacks, Identity, Recipient};
use napi::bindgen_prelude::Either;

use crate::errors::{Code, Fail};

type Recipients = Arc<Vec<Box<dyn Recipient>>>;
type Identities = Arc<Vec<Box<dyn Identity>>>;

/// A few parsed keys, found again by their text (the library's `KeyCache`: it keeps no key
/// text and compares in constant time); shared with the toolkit's PEM keys.
pub(crate) type Cache<T> = hyperseal::KeyCache<T>;

/// Indexed by `allowPlugins` (false, true).
static RECIPIENTS: [Cache<Recipients>; 2] = [Cache::new(), Cache::new()];
static IDENTITIES: [Cache<Identities>; 2] = [Cache::new(), Cache::new()];

/// The library's callbacks for a call: answer nothing, allow plugins only if asked to.
fn policy(allow_plugins: bool) -> Arc<dyn Callbacks> {
    Arc::new(Plugins::allowed(allow_plugins))
}

/// One public key or a list of them, as JS passes it.
pub type PublicKeys = Either<String, Vec<String>>;

/// Parses (or finds cached) recipients; plugin recipients only with `allow_plugins`.
pub fn recipients(keys: &PublicKeys, allow_plugins: bool) -> Result<Recipients, Fail> {
    let list: Vec<&str> = match keys {
        Either::A(s) => vec![s.as_str()],
        Either::B(v) => v.iter().map(String::as_str).collect(),
    };
    if list.is_empty() {
        return Err(Fail::arg("publicKey: give at least one public key"));
    }
    let joined = list.join("\n");
    RECIPIENTS[usize::from(allow_plugins)]
        .get_or_parse(&joined, || Ok(Arc::new(parse_recipients(&list, allow_plugins)?)))
}

/// Parses recipients afresh, owned by the caller (a re-key's `Change` holds them by value).
/// A recipients file (several lines) is accepted too, as the CLI's -R does.
pub fn parse_recipients(list: &[&str], allow_plugins: bool) -> Result<Vec<Box<dyn Recipient>>, Fail> {
    let mut out = Vec::with_capacity(list.len());
    for k in list {
        if k.trim().is_empty() {
            return Err(Fail::new(Code(hyperseal::ErrorCode::Key), "invalid recipient: empty public key"));
        }
        if k.trim().lines().count() > 1 && !k.trim_start().starts_with("-----BEGIN") {
            out.extend(recipient::parse_recipients_file_with(k, policy(allow_plugins))?);
        } else {
            out.push(recipient::parse_recipient_with(k, policy(allow_plugins))?);
        }
    }
    Ok(out)
}

/// Parses (or finds cached) identities: a secret key line, an identity file as the CLI writes
/// it, or a PKCS#8 PEM; plugin identities only with `allow_plugins`.
pub fn identities(text: &str, allow_plugins: bool) -> Result<Identities, Fail> {
    if text.lines().any(is_agent) {
        return agent_and_others(text, allow_plugins);
    }
    IDENTITIES[usize::from(allow_plugins)].get_or_parse(text, || {
        Ok::<_, Fail>(Arc::new(recipient::parse_identities_with(text, policy(allow_plugins))?))
    })
}

/// An `AgentIdentity`'s line (`AGE-PLUGIN-HYPERSEAL-1…`, the agent's socket path).
fn is_agent(line: &str) -> bool {
    line.trim().to_ascii_uppercase().starts_with("AGE-PLUGIN-HYPERSEAL-1")
}

/// The other identities of `text`, then the agent of each agent line, asked directly over its
/// socket (no plugin program runs, so no `allowPlugins` is needed); not cached.
fn agent_and_others(text: &str, allow_plugins: bool) -> Result<Identities, Fail> {
    let others: String = text.lines().filter(|l| !is_agent(l)).map(|l| format!("{l}\n")).collect();
    let mut out: Vec<Box<dyn Identity>> = match others.trim().is_empty() {
        true => Vec::new(),
        false => recipient::parse_identities_with(&others, policy(allow_plugins))?,
    };
    for line in text.lines().filter(|l| is_agent(l)) {
        out.push(agent(line.trim())?);
    }
    Ok(Arc::new(out))
}

#[cfg(any(unix, windows))]
fn agent(line: &str) -> Result<Box<dyn Identity>, Fail> {
    Ok(Box::new(hyperseal::agent::AgentIdentity::new(hyperseal::agent::socket_of(line)?)))
}

#[cfg(not(any(unix, windows)))]
fn agent(_: &str) -> Result<Box<dyn Identity>, Fail> {
    Err(Fail::new(Code(hyperseal::ErrorCode::Key), AGENT_UNAVAILABLE))
}

#[cfg(not(any(unix, windows)))]
const AGENT_UNAVAILABLE: &str =
    "the identity agent listens on a Unix socket or a Windows named pipe: not available on this system";

/// `new AgentIdentity(path)`'s key string: the agent's identity line for its socket path,
/// which every call that takes a `privateKey` accepts.
#[napi_derive::napi]
pub fn agent_identity(path: String) -> Result<String, crate::errors::JsErr> {
    #[cfg(any(unix, windows))]
    return Ok(hyperseal::agent::plugin_identity(std::path::Path::new(&path)));
    #[cfg(not(any(unix, windows)))]
    {
        let _ = path;
        Err(Fail::new(Code(hyperseal::ErrorCode::Key), AGENT_UNAVAILABLE).into())
    }
}

/// Options of the calls that take a key string and have no options object of their own.
#[napi_derive::napi(object)]
pub struct KeyOptions {
    /// Allow keys that name an age plugin (`age1NAME1…`, `AGE-PLUGIN-NAME-1…`), which runs the
    /// program `age-plugin-NAME` found on PATH. Default false: such keys are refused with
    /// `ERR_HYPERSEAL_KEY`. Never set it for key strings that come from untrusted users.
    pub allow_plugins: Option<bool>,
}

/// `options.allowPlugins`, false when not given.
pub fn allow_plugins(options: &Option<KeyOptions>) -> bool {
    options.as_ref().and_then(|o| o.allow_plugins).unwrap_or(false)
}
