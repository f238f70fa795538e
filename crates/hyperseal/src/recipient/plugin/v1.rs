//! The `recipient-v1` and `identity-v1` state machines (C2SP age-plugin.md), as age's client
//! drives them: phase 1 is ours (commands, grease, `done`); phase 2 is the plugin's, where we
//! answer its user-interface requests through [`Callbacks`] and collect stanzas, labels or a
//! file key until its `done`. Unknown phase-2 commands get `unsupported`; an `error` ends the
//! exchange with that error.
//!
//! Phase 2 is counted ([`Counts`]): at most [`limits::PLUGIN_MESSAGES`] messages besides
//! stanzas, at most [`limits::PLUGIN_STANZAS`] recipient stanzas of at most [`limits::STANZA_BODY`]
//! bytes each, and stanza lines no longer than a header takes. Every text of the plugin's that
//! reaches the user goes through [`printable`].

use std::path::Path;

use zeroize::Zeroize;

use super::conn::Connection;
use super::wire::printable;
use crate::format::{decode_b64, Stanza};
use crate::recipient::callbacks::Callbacks;
use crate::recipient::traits::Labels;
use crate::{error::Error, file_key::FileKey, limits};

/// What one phase 2 has received so far, against the budget.
struct Counts<'a> {
    name: &'a str,
    messages: usize,
    stanzas: usize,
}

impl<'a> Counts<'a> {
    fn new(name: &'a str) -> Self {
        Counts { name, messages: 0, stanzas: 0 }
    }

    /// Counts a message other than a stanza (`msg`, `labels`, an unknown command…).
    fn message(&mut self) -> Result<(), Error> {
        self.messages += 1;
        if self.messages > limits::PLUGIN_MESSAGES {
            let what = format!("messages from age-plugin-{} in one exchange", self.name);
            return Err(limits::too_many(&what, limits::PLUGIN_MESSAGES));
        }
        Ok(())
    }

    /// Counts a recipient stanza and checks that it fits in a header.
    fn stanza(&mut self, s: &Stanza) -> Result<(), Error> {
        self.stanzas += 1;
        if self.stanzas > limits::PLUGIN_STANZAS {
            return Err(limits::too_many(
                &format!("recipient stanzas from age-plugin-{}", self.name),
                limits::PLUGIN_STANZAS,
            ));
        }
        if s.body.len() > limits::STANZA_BODY {
            let what = format!("a recipient stanza's body from age-plugin-{}", self.name);
            return Err(limits::too_long(&what, limits::STANZA_BODY));
        }
        let line = 3 + s.tag.len() + s.args.iter().map(|a| a.len() + 1).sum::<usize>();
        if line > limits::HEADER_LINE {
            let what = format!("a recipient stanza's line from age-plugin-{}", self.name);
            return Err(limits::too_long(&what, limits::HEADER_LINE));
        }
        Ok(())
    }
}

/// Answers `msg`, `confirm`, `request-public` and `request-secret`; `Ok(false)` for anything
/// else.
fn handle_ui(conn: &mut Connection, name: &str, s: &Stanza, cb: &dyn Callbacks) -> Result<bool, Error> {
    let text = printable(&s.body);
    match s.tag.as_str() {
        "msg" => {
            cb.display_message(&format!("age-plugin-{name}: {text}"));
            conn.send("ok", &[], &[])?;
        }
        "confirm" => {
            let option = |a: &String| decode_b64(a.as_bytes()).map(|b| printable(&b));
            let (yes, no) = match s.args.as_slice() {
                [y] => (option(y), Ok(String::new())),
                [y, n] => (option(y), option(n)),
                _ => return Err(conn.error("sent a confirm request with the wrong number of arguments")),
            };
            let (Ok(yes), Ok(no)) = (yes, no) else {
                return Err(conn.error("sent a confirm request with malformed options"));
            };
            let prompt = format!("age-plugin-{name}: {text}");
            match cb.confirm(&prompt, &yes, (!no.is_empty()).then_some(no.as_str())) {
                Some(true) => conn.send("ok", &["yes"], &[])?,
                Some(false) => conn.send("ok", &["no"], &[])?,
                None => conn.send("fail", &[], &[])?,
            }
        }
        "request-public" => match cb.request_public_string(&format!("age-plugin-{name}: {text}")) {
            Some(v) => conn.send("ok", &[], v.as_bytes())?,
            None => conn.send("fail", &[], &[])?,
        },
        "request-secret" => match cb.request_passphrase(&format!("age-plugin-{name}: {text}")) {
            Some(v) => conn.send("ok", &[], v.as_bytes())?,
            None => conn.send("fail", &[], &[])?,
        },
        _ => return Ok(false),
    }
    Ok(true)
}

/// The one file index we ever send: `0`.
fn index_zero(arg: Option<&String>) -> bool {
    arg.is_some_and(|a| a == "0")
}

/// `recipient-v1`: wraps `file_key` to one recipient (or, with `as_identity`, to the recipient
/// of an identity), asking the plugin for its labels (the `extension-labels` extension).
pub(super) fn wrap(
    name: &str,
    binary: &Path,
    encoding: &str,
    as_identity: bool,
    file_key: &FileKey,
    cb: &dyn Callbacks,
) -> Result<(Vec<Stanza>, Labels), Error> {
    let mut conn = Connection::start(name, binary, "recipient-v1", cb.plugin_timeout())?;
    conn.send(if as_identity { "add-identity" } else { "add-recipient" }, &[encoding], &[])?;
    conn.grease()?;
    conn.send("wrap-file-key", &[], file_key.expose())?;
    conn.send("extension-labels", &[], &[])?;
    conn.send("done", &[], &[])?;

    let (mut stanzas, mut labels, mut counts) = (Vec::new(), None, Counts::new(name));
    loop {
        let s = conn.recv()?;
        match s.tag.as_str() {
            "recipient-stanza" => {
                if s.args.len() < 2 || !index_zero(s.args.first()) {
                    return Err(conn.error("sent a malformed recipient-stanza"));
                }
                let stanza = Stanza { tag: s.args[1].clone(), args: s.args[2..].to_vec(), body: s.body };
                counts.stanza(&stanza).map_err(|e| conn.abort(e))?;
                stanzas.push(stanza);
                conn.send("ok", &[], &[])?;
            }
            "labels" => {
                counts.message().map_err(|e| conn.abort(e))?;
                if labels.is_some() {
                    return Err(conn.error("sent its labels twice"));
                }
                labels = Some(s.args.iter().cloned().collect::<Labels>());
                conn.send("ok", &[], &[])?;
            }
            "error" => {
                let _ = conn.send("ok", &[], &[]);
                return Err(conn.error(&format!("refused to wrap: {}", printable(&s.body))));
            }
            "done" => break,
            _ => {
                counts.message().map_err(|e| conn.abort(e))?;
                if !handle_ui(&mut conn, name, &s, cb)? {
                    conn.send("unsupported", &[], &[])?;
                }
            }
        }
    }
    if stanzas.is_empty() {
        return Err(conn.error("returned no recipient stanza"));
    }
    Ok((stanzas, labels.unwrap_or_default()))
}

/// `identity-v1`: offers every stanza of one file to the plugin. `None`: the plugin found no
/// stanza it could open; an `error` from it, or a broken exchange, is fatal.
pub(super) fn unwrap(
    name: &str,
    binary: &Path,
    encoding: &str,
    stanzas: &[Stanza],
    cb: &dyn Callbacks,
) -> Result<Option<FileKey>, Error> {
    let mut conn = Connection::start(name, binary, "identity-v1", cb.plugin_timeout())?;
    conn.send("add-identity", &[encoding], &[])?;
    conn.grease()?;
    for s in stanzas {
        conn.send_wrapped(&["recipient-stanza", "0"], s)?;
    }
    conn.send("done", &[], &[])?;

    let (mut file_key, mut counts) = (None, Counts::new(name));
    loop {
        let s = conn.recv()?;
        match s.tag.as_str() {
            "file-key" => {
                counts.message().map_err(|e| conn.abort(e))?;
                if s.args.len() != 1 || !index_zero(s.args.first()) {
                    return Err(conn.error("sent a malformed file-key"));
                }
                if file_key.is_some() {
                    return Err(conn.error("sent two file keys for one file"));
                }
                let mut body = s.body;
                let key = FileKey::from_slice(&body);
                body.zeroize();
                let key = key.ok_or_else(|| conn.error("sent a file key of the wrong size"))?;
                file_key = Some(key);
                conn.send("ok", &[], &[])?;
            }
            "error" => {
                let _ = conn.send("ok", &[], &[]);
                return Err(conn.error(&format!("failed: {}", printable(&s.body))));
            }
            "done" => break,
            _ => {
                counts.message().map_err(|e| conn.abort(e))?;
                if !handle_ui(&mut conn, name, &s, cb)? {
                    conn.send("unsupported", &[], &[])?;
                }
            }
        }
    }
    Ok(file_key)
}
