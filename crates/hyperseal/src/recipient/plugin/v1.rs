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
    /// The most messages: [`limits::PLUGIN_MESSAGES`], more for a batch of files.
    most: usize,
    stanzas: usize,
}

impl<'a> Counts<'a> {
    /// The budget of one exchange, and `more` messages.
    fn new(name: &'a str, more: usize) -> Self {
        Counts { name, messages: 0, most: limits::PLUGIN_MESSAGES + more, stanzas: 0 }
    }

    /// Counts a message other than a stanza (`msg`, `labels`, an unknown command…).
    fn message(&mut self) -> Result<(), Error> {
        self.messages += 1;
        if self.messages > self.most {
            let what = format!("messages from age-plugin-{} in one exchange", self.name);
            return Err(limits::too_many(&what, self.most));
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

    let (mut stanzas, mut labels, mut counts) = (Vec::new(), None, Counts::new(name, 0));
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
    let file: Vec<&Stanza> = stanzas.iter().collect();
    match unwrap_files(name, binary, encoding, &[&file], cb)?.pop().flatten() {
        Some(key) => key.map(Some),
        None => Ok(None),
    }
}

/// What a batch gives for each file: its file key, `None` (the plugin opened none of its
/// stanzas), or the plugin's error for that file.
pub(super) type Answers = Vec<Option<Result<FileKey, Error>>>;

/// `identity-v1` over many files in one run: the stanzas of file *i* are sent as
/// `recipient-stanza i …`, and the plugin answers each file with a `file-key i`, an
/// `error stanza i …` (that file's failure, the exchange goes on), or nothing. Any other error,
/// or a broken exchange, fails the batch. The plugin's output is budgeted per file and its
/// deadline starts again at each file answered ([`Connection::progress`]). Every file must
/// have a stanza (the protocol cannot send an empty one).
pub(super) fn unwrap_files(
    name: &str,
    binary: &Path,
    encoding: &str,
    files: &[&[&Stanza]],
    cb: &dyn Callbacks,
) -> Result<Answers, Error> {
    let mut answers: Answers = files.iter().map(|_| None).collect();
    if files.is_empty() {
        return Ok(answers);
    }
    debug_assert!(files.iter().all(|f| !f.is_empty()), "every file has a stanza");
    let more = files.len() - 1;
    let budget = limits::PLUGIN_BYTES + more * limits::PLUGIN_BYTES_PER_STANZA;
    let mut conn = Connection::start_for(name, binary, "identity-v1", cb.plugin_timeout(), budget)?;
    conn.send("add-identity", &[encoding], &[])?;
    conn.grease()?;
    for (i, file) in files.iter().enumerate() {
        let index = i.to_string();
        for s in file.iter() {
            conn.send_wrapped(&["recipient-stanza", &index], s)?;
        }
    }
    conn.send("done", &[], &[])?;

    let mut counts = Counts::new(name, more * limits::PLUGIN_MESSAGES_PER_STANZA);
    loop {
        let s = conn.recv()?;
        match s.tag.as_str() {
            "file-key" => {
                counts.message().map_err(|e| conn.abort(e))?;
                let Some(i) = file_index(s.args.first(), files.len()).filter(|_| s.args.len() == 1) else {
                    return Err(conn.error("sent a malformed file-key"));
                };
                if answers[i].is_some() {
                    return Err(conn.error("sent two answers for one file"));
                }
                let mut body = s.body;
                let key = FileKey::from_slice(&body);
                body.zeroize();
                let key = key.ok_or_else(|| conn.error("sent a file key of the wrong size"))?;
                answers[i] = Some(Ok(key));
                conn.progress();
                conn.send("ok", &[], &[])?;
            }
            "error" => {
                counts.message().map_err(|e| conn.abort(e))?;
                let failed = conn.error(&format!("failed: {}", printable(&s.body)));
                // `error stanza FILE STANZA`: that file failed, the others go on.
                let file = match s.args.as_slice() {
                    [kind, file, _] if kind == "stanza" => file_index(Some(file), files.len()),
                    _ => None,
                };
                match file {
                    Some(i) if answers[i].is_none() => {
                        answers[i] = Some(Err(failed));
                        conn.progress();
                        conn.send("ok", &[], &[])?;
                    }
                    _ => {
                        let _ = conn.send("ok", &[], &[]);
                        return Err(failed);
                    }
                }
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
    Ok(answers)
}

/// A file index the plugin sent, if it names one of the `files` offered.
fn file_index(arg: Option<&String>, files: usize) -> Option<usize> {
    let a = arg?;
    // Digits only, no sign or leading zero (`parse` would take "+1" and "01").
    if a.is_empty() || !a.bytes().all(|b| b.is_ascii_digit()) || (a.len() > 1 && a.starts_with('0')) {
        return None;
    }
    a.parse::<usize>().ok().filter(|&i| i < files)
}
