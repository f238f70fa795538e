//! The agent's wire format (docs/FORMAT.md, "The identity agent protocol"): one request and
//! one answer per connection, each a message of a 4-byte big-endian length and a body that
//! starts with the protocol version. Every length and count is checked against
//! [`limits`](crate::limits) before anything it announces is kept, so a hostile peer (client
//! or agent) costs a bounded buffer and is told apart from a broken one by [`Error::Limit`].

use std::io::{Read, Write};

use zeroize::Zeroizing;

use crate::error::Error;
use crate::file_key::FileKey;
use crate::format::Stanza;
use crate::limits;

/// The one protocol version; a body with another is refused.
pub const VERSION: u8 = 1;

/// What a client asks.
pub enum Request {
    /// For each file, its stanzas: which file key do they open?
    Unwrap(Vec<Vec<Stanza>>),
    /// The same, from a client that can ask its user: before its answer the agent may send
    /// [`Answer::Ask`] (a plugin key's PIN, a touch, a confirmation), each answered by a
    /// [`Request::Reply`] on the same connection.
    UnwrapAsking(Vec<Vec<Stanza>>),
    /// The user's answer to an [`Answer::Ask`]: `None` when none could be had (no terminal,
    /// declined). A confirmation is answered `yes` or `no`; a message is acknowledged with `None`.
    Reply(Option<Zeroizing<String>>),
    /// Load an identity file's bytes.
    Add {
        /// Where it came from (shown by `List`, a selector of `Remove`).
        name: String,
        /// The identity file as read (it may be an `age -p` file).
        bytes: Zeroizing<Vec<u8>>,
        /// What opens a protected one.
        passphrase: Option<Zeroizing<String>>,
        /// Seconds until it is forgotten (0: kept until removed).
        lifetime: u64,
        /// Seconds a plugin's PIN stays cached once the plugin took it (0: as long as the key
        /// is kept, until `Lock` or `Stop`).
        pin_ttl: u64,
        /// The remote hosts whose forwards may use it (`*`: any); empty: none.
        forward: Vec<String>,
        /// Whether each forwarded use is confirmed on the agent's host first.
        confirm: bool,
    },
    /// Open a socket for the remote host `name` (its path is the answer), or with `close`
    /// close that host's sockets.
    Forward {
        /// The remote host's name, as grants name it.
        name: String,
        /// Close instead of open.
        close: bool,
    },
    /// The loaded identities: their recipients and fingerprints, never a secret.
    List,
    /// Wrap each file key to the agent's plugin keys (their plugins' `recipient-v1` with
    /// `add-identity`, as age encrypts to a plugin identity file): they have no recipient a
    /// client could write. Answered [`Answer::Wrapped`].
    Wrap(Vec<FileKey>),
    /// Forget the identities whose fingerprint or file name is `selector` (empty: all of them).
    Remove(String),
    /// Seal the identities under this passphrase and forget them in the clear.
    Lock(Zeroizing<String>),
    /// Open what `Lock` sealed.
    Unlock(Zeroizing<String>),
    /// Forget everything and end.
    Stop,
}

/// One loaded identity, as `List` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file it was added from.
    pub name: String,
    /// Its recipient (public key), or the kind where none can be written.
    pub recipient: String,
    /// A short SHA-256 fingerprint of the recipient.
    pub fingerprint: String,
    /// Seconds until it is forgotten (0: never).
    pub expires_in: u64,
    /// The remote hosts it is granted to (`*`: any).
    pub forward: Vec<String>,
    /// Whether a forwarded use is confirmed on the agent's host.
    pub confirm: bool,
}

/// What the agent answers.
pub enum Answer {
    /// For each file of an `Unwrap`, in order: not ours, its file key, or why it failed.
    Unwrapped(Vec<Option<Result<FileKey, String>>>),
    /// `List`'s answer.
    Entries(Vec<Entry>),
    /// Done; the text says what (`Add`: the recipients added, `Remove`: how many).
    Done(String),
    /// An `Add` of a protected identity without (or with a wrong) passphrase: ask, then again.
    NeedPassphrase(String),
    /// Refused (locked, malformed, a wrong passphrase): the text says why.
    Refused(String),
    /// For each file key of a `Wrap`, in order: its stanzas to the agent's plugin keys.
    Wrapped(Vec<Vec<Stanza>>),
    /// Before an [`Request::UnwrapAsking`]'s answer: a plugin asks the client's user this; the
    /// client answers with a [`Request::Reply`], and the agent goes on.
    Ask(Prompt),
}

/// What a plugin run by the agent asks of the user, relayed to the client that asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prompt {
    /// A note to show (a touch to give): acknowledged, never answered.
    Message(String),
    /// A choice between `yes` and, if given, `no`.
    Confirm {
        /// What is asked.
        message: String,
        /// The label of yes.
        yes: String,
        /// The label of no, if there is a choice.
        no: Option<String>,
    },
    /// A value shown while typed.
    Public(String),
    /// A secret (a PIN): hidden while typed.
    Secret(String),
}

const UNWRAP: u8 = 1;
const ADD: u8 = 2;
const LIST: u8 = 3;
const REMOVE: u8 = 4;
const LOCK: u8 = 5;
const UNLOCK: u8 = 6;
const STOP: u8 = 7;
const UNWRAP_ASKING: u8 = 8;
const REPLY: u8 = 9;
const FORWARD: u8 = 10;
const WRAP: u8 = 11;

/// The most remote hosts one key may be granted to.
pub const MAX_GRANTS: usize = 64;

const UNWRAPPED: u8 = 0x81;
const ENTRIES: u8 = 0x82;
const DONE: u8 = 0x83;
const NEED_PASSPHRASE: u8 = 0x84;
const REFUSED: u8 = 0x85;
const ASK: u8 = 0x86;
const WRAPPED: u8 = 0x87;

const PROMPT_MESSAGE: u8 = 0;
const PROMPT_CONFIRM: u8 = 1;
const PROMPT_PUBLIC: u8 = 2;
const PROMPT_SECRET: u8 = 3;

/// Writes one message: the length, then `body` (which begins with the version).
pub fn write_message(w: &mut impl Write, body: &[u8]) -> Result<(), Error> {
    if body.len() > limits::AGENT_MESSAGE {
        return Err(limits::too_long("a message to the agent", limits::AGENT_MESSAGE));
    }
    let mut framed = Zeroizing::new(Vec::with_capacity(4 + body.len()));
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(body);
    w.write_all(&framed)?;
    w.flush()?;
    Ok(())
}

/// Reads one message's body: the length is checked before the body is read, and the body is
/// read as it arrives (never allocated from the length alone).
pub fn read_message(r: &mut impl Read) -> Result<Zeroizing<Vec<u8>>, Error> {
    let len = read_length(r)?;
    read_body(r, len)
}

/// Reads a message's length, refused past [`limits::AGENT_MESSAGE`] (a reader that budgets
/// memory across connections reserves it before [`read_body`]).
pub fn read_length(r: &mut impl Read) -> Result<usize, Error> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > limits::AGENT_MESSAGE {
        return Err(limits::too_long("a message to or from the agent", limits::AGENT_MESSAGE));
    }
    Ok(len)
}

/// Reads a body of `len` bytes as they arrive.
pub fn read_body(r: &mut impl Read, len: usize) -> Result<Zeroizing<Vec<u8>>, Error> {
    let mut body = Zeroizing::new(Vec::new());
    r.take(len as u64).read_to_end(&mut body)?;
    if body.len() != len {
        return Err(Error::Agent("the connection closed in the middle of a message".into()));
    }
    Ok(body)
}

impl Request {
    /// The message body of this request.
    pub fn encode(&self) -> Zeroizing<Vec<u8>> {
        let mut b = Zeroizing::new(vec![VERSION]);
        match self {
            Request::Unwrap(files) | Request::UnwrapAsking(files) => {
                b.push(if matches!(self, Request::Unwrap(_)) { UNWRAP } else { UNWRAP_ASKING });
                put_files(&mut b, files);
            }
            Request::Wrap(keys) => {
                b.push(WRAP);
                put_u32(&mut b, keys.len());
                for k in keys {
                    put_bytes(&mut b, k.expose());
                }
            }
            Request::Add { name, bytes, passphrase, lifetime, pin_ttl, forward, confirm } => {
                b.push(ADD);
                put_str(&mut b, name);
                b.extend_from_slice(&lifetime.to_be_bytes());
                b.extend_from_slice(&pin_ttl.to_be_bytes());
                put_strs(&mut b, forward);
                b.push(u8::from(*confirm));
                match passphrase {
                    None => b.push(0),
                    Some(p) => {
                        b.push(1);
                        put_str(&mut b, p);
                    }
                }
                put_bytes(&mut b, bytes);
            }
            Request::List => b.push(LIST),
            Request::Remove(s) => {
                b.push(REMOVE);
                put_str(&mut b, s);
            }
            Request::Lock(p) | Request::Unlock(p) => {
                b.push(if matches!(self, Request::Lock(_)) { LOCK } else { UNLOCK });
                put_str(&mut b, p);
            }
            Request::Stop => b.push(STOP),
            Request::Forward { name, close } => {
                b.push(FORWARD);
                put_str(&mut b, name);
                b.push(u8::from(*close));
            }
            Request::Reply(value) => {
                b.push(REPLY);
                match value {
                    None => b.push(0),
                    Some(v) => {
                        b.push(1);
                        put_str(&mut b, v);
                    }
                }
            }
        }
        b
    }

    /// Reads a request body; every count is checked against the limits first.
    pub fn decode(body: &[u8]) -> Result<Request, Error> {
        let mut r = Cursor::new(body)?;
        let request = match r.u8()? {
            kind @ (UNWRAP | UNWRAP_ASKING) => {
                let out = read_files(&mut r)?;
                match kind {
                    UNWRAP => Request::Unwrap(out),
                    _ => Request::UnwrapAsking(out),
                }
            }
            ADD => {
                let name = r.str()?;
                let lifetime = u64::from_be_bytes(r.take(8)?.try_into().expect("8 bytes"));
                let pin_ttl = u64::from_be_bytes(r.take(8)?.try_into().expect("8 bytes"));
                let forward = r.strs(MAX_GRANTS)?;
                let confirm = r.flag()?;
                let passphrase = match r.u8()? {
                    0 => None,
                    1 => Some(Zeroizing::new(r.str()?)),
                    _ => return Err(malformed("a passphrase flag that is neither 0 nor 1")),
                };
                let bytes = Zeroizing::new(r.bytes(limits::KEY_FILE)?.to_vec());
                Request::Add { name, bytes, passphrase, lifetime, pin_ttl, forward, confirm }
            }
            LIST => Request::List,
            REMOVE => Request::Remove(r.str()?),
            LOCK => Request::Lock(Zeroizing::new(r.str()?)),
            UNLOCK => Request::Unlock(Zeroizing::new(r.str()?)),
            STOP => Request::Stop,
            FORWARD => Request::Forward { name: r.str()?, close: r.flag()? },
            WRAP => {
                let n = r.count(limits::PLUGIN_STANZAS, "file keys")?;
                let keys = (0..n)
                    .map(|_| {
                        FileKey::from_slice(r.bytes(64)?).ok_or_else(|| malformed("a file key's length"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Request::Wrap(keys)
            }
            REPLY => Request::Reply(match r.u8()? {
                0 => None,
                1 => Some(Zeroizing::new(r.str()?)),
                _ => return Err(malformed("a reply flag that is neither 0 nor 1")),
            }),
            other => return Err(malformed(&format!("unknown request {other}"))),
        };
        r.end()?;
        Ok(request)
    }
}

impl Answer {
    /// The message body of this answer.
    pub fn encode(&self) -> Zeroizing<Vec<u8>> {
        let mut b = Zeroizing::new(vec![VERSION]);
        match self {
            Answer::Unwrapped(each) => {
                b.push(UNWRAPPED);
                put_u32(&mut b, each.len());
                for a in each {
                    match a {
                        None => b.push(0),
                        Some(Ok(key)) => {
                            b.push(1);
                            put_bytes(&mut b, key.expose());
                        }
                        Some(Err(why)) => {
                            b.push(2);
                            put_str(&mut b, why);
                        }
                    }
                }
            }
            Answer::Entries(entries) => {
                b.push(ENTRIES);
                put_u32(&mut b, entries.len());
                for e in entries {
                    put_str(&mut b, &e.name);
                    put_str(&mut b, &e.recipient);
                    put_str(&mut b, &e.fingerprint);
                    b.extend_from_slice(&e.expires_in.to_be_bytes());
                    put_strs(&mut b, &e.forward);
                    b.push(u8::from(e.confirm));
                }
            }
            Answer::Done(s) | Answer::NeedPassphrase(s) | Answer::Refused(s) => {
                b.push(match self {
                    Answer::Done(_) => DONE,
                    Answer::NeedPassphrase(_) => NEED_PASSPHRASE,
                    _ => REFUSED,
                });
                put_str(&mut b, s);
            }
            Answer::Wrapped(files) => {
                b.push(WRAPPED);
                put_files(&mut b, files);
            }
            Answer::Ask(prompt) => {
                b.push(ASK);
                match prompt {
                    Prompt::Message(m) => {
                        b.push(PROMPT_MESSAGE);
                        put_str(&mut b, m);
                    }
                    Prompt::Confirm { message, yes, no } => {
                        b.push(PROMPT_CONFIRM);
                        put_str(&mut b, message);
                        put_str(&mut b, yes);
                        put_str(&mut b, no.as_deref().unwrap_or(""));
                    }
                    Prompt::Public(m) | Prompt::Secret(m) => {
                        b.push(if matches!(prompt, Prompt::Public(_)) {
                            PROMPT_PUBLIC
                        } else {
                            PROMPT_SECRET
                        });
                        put_str(&mut b, m);
                    }
                }
            }
        }
        b
    }

    /// Reads an answer body (from an agent, which is as untrusted as any peer).
    pub fn decode(body: &[u8]) -> Result<Answer, Error> {
        let mut r = Cursor::new(body)?;
        let answer = match r.u8()? {
            UNWRAPPED => {
                let n = r.count(limits::AGENT_STANZAS, "answers")?;
                let mut each = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    each.push(match r.u8()? {
                        0 => None,
                        1 => Some(Ok(FileKey::from_slice(r.bytes(32)?)
                            .ok_or_else(|| malformed("a file key of the wrong length"))?)),
                        2 => Some(Err(r.str()?)),
                        _ => return Err(malformed("an answer that is neither none, a key nor an error")),
                    });
                }
                Answer::Unwrapped(each)
            }
            ENTRIES => {
                let n = r.count(limits::AGENT_STANZAS, "entries")?;
                let mut out = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    let (name, recipient, fingerprint) = (r.str()?, r.str()?, r.str()?);
                    let expires_in = u64::from_be_bytes(r.take(8)?.try_into().expect("8 bytes"));
                    let (forward, confirm) = (r.strs(MAX_GRANTS)?, r.flag()?);
                    out.push(Entry { name, recipient, fingerprint, expires_in, forward, confirm });
                }
                Answer::Entries(out)
            }
            WRAPPED => Answer::Wrapped(read_files(&mut r)?),
            DONE => Answer::Done(r.str()?),
            NEED_PASSPHRASE => Answer::NeedPassphrase(r.str()?),
            REFUSED => Answer::Refused(r.str()?),
            ASK => Answer::Ask(match r.u8()? {
                PROMPT_MESSAGE => Prompt::Message(r.str()?),
                PROMPT_CONFIRM => {
                    let (message, yes, no) = (r.str()?, r.str()?, r.str()?);
                    Prompt::Confirm { message, yes, no: (!no.is_empty()).then_some(no) }
                }
                PROMPT_PUBLIC => Prompt::Public(r.str()?),
                PROMPT_SECRET => Prompt::Secret(r.str()?),
                other => return Err(malformed(&format!("unknown prompt {other}"))),
            }),
            other => return Err(malformed(&format!("unknown answer {other}"))),
        };
        r.end()?;
        Ok(answer)
    }
}

/// A stanza's tag or argument as the format allows it: visible ASCII, not empty.
/// Each file's stanzas (an UNWRAP's question, a WRAP's answer).
fn put_files(b: &mut Vec<u8>, files: &[Vec<Stanza>]) {
    put_u32(b, files.len());
    for file in files {
        put_u32(b, file.len());
        for s in file {
            put_str(b, &s.tag);
            put_u32(b, s.args.len());
            for a in &s.args {
                put_str(b, a);
            }
            put_bytes(b, &s.body);
        }
    }
}

/// What [`put_files`] wrote, every count checked against the limits first.
fn read_files(r: &mut Cursor<'_>) -> Result<Vec<Vec<Stanza>>, Error> {
    let files = r.count(limits::AGENT_STANZAS, "files")?;
    let mut total = 0;
    let mut out = Vec::with_capacity(files.min(4096));
    for _ in 0..files {
        let n = r.count(limits::AGENT_STANZAS - total, "stanzas")?;
        total += n;
        let mut file = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let tag = r.str()?;
            let args = r.count(limits::HEADER_LINE / 2, "stanza arguments")?;
            let args = (0..args).map(|_| r.str()).collect::<Result<Vec<_>, _>>()?;
            let body = r.bytes(limits::STANZA_BODY)?.to_vec();
            // Checked here: `Stanza::new` takes bad arguments for a programming error.
            if !std::iter::once(&tag).chain(&args).all(|a| is_arg(a)) {
                return Err(malformed("a stanza argument that is not visible ASCII"));
            }
            file.push(Stanza { tag, args, body });
        }
        out.push(file);
    }
    Ok(out)
}

fn is_arg(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

fn malformed(what: &str) -> Error {
    Error::Agent(format!("malformed message: {what}"))
}

fn put_u32(b: &mut Vec<u8>, n: usize) {
    b.extend_from_slice(&(n as u32).to_be_bytes());
}

/// A text: u16 length and UTF-8 (every text is at most one header line).
fn put_str(b: &mut Vec<u8>, s: &str) {
    let s = &s.as_bytes()[..s.len().min(limits::HEADER_LINE)];
    b.extend_from_slice(&(s.len() as u16).to_be_bytes());
    b.extend_from_slice(s);
}

/// A list of texts: n:u16 ‖ n × str.
fn put_strs(b: &mut Vec<u8>, strs: &[String]) {
    b.extend_from_slice(&(strs.len().min(MAX_GRANTS) as u16).to_be_bytes());
    strs.iter().take(MAX_GRANTS).for_each(|s| put_str(b, s));
}

fn put_bytes(b: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(b, bytes.len());
    b.extend_from_slice(bytes);
}

/// Reads a body front to back; every read is checked against what is left.
struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn new(body: &'a [u8]) -> Result<Self, Error> {
        match body.split_first() {
            Some((&VERSION, rest)) => Ok(Cursor { rest }),
            Some((v, _)) => {
                Err(Error::Agent(format!("protocol version {v} is not supported (this is {VERSION})")))
            }
            None => Err(malformed("an empty message")),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.rest.len() {
            return Err(malformed("it ends early"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<usize, Error> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")) as usize)
    }

    /// A count of at most `limit` items.
    fn count(&mut self, limit: usize, what: &str) -> Result<usize, Error> {
        match self.u32()? {
            n if n > limit => Err(limits::too_many(&format!("{what} in a message to the agent"), limit)),
            n => Ok(n),
        }
    }

    fn str(&mut self) -> Result<String, Error> {
        let n = u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize;
        if n > limits::HEADER_LINE {
            return Err(limits::too_long("a text in a message to the agent", limits::HEADER_LINE));
        }
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| malformed("a text that is not UTF-8"))
    }

    /// A list of at most `limit` texts.
    fn strs(&mut self, limit: usize) -> Result<Vec<String>, Error> {
        let n = u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize;
        if n > limit {
            return Err(limits::too_many("names in a message to the agent", limit));
        }
        (0..n).map(|_| self.str()).collect()
    }

    /// A flag: 0 or 1.
    fn flag(&mut self) -> Result<bool, Error> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(malformed("a flag that is neither 0 nor 1")),
        }
    }

    fn bytes(&mut self, limit: usize) -> Result<&'a [u8], Error> {
        let n = self.u32()?;
        if n > limit {
            return Err(limits::too_long("a field of a message to the agent", limit));
        }
        self.take(n)
    }

    fn end(&self) -> Result<(), Error> {
        match self.rest.is_empty() {
            true => Ok(()),
            false => Err(malformed("bytes after its end")),
        }
    }
}

#[cfg(test)]
#[path = "proto_tests.rs"]
mod tests;
