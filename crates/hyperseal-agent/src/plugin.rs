//! `age-plugin-hyperseal`: the hyperseal binary started under that name speaks age's plugin
//! protocol and reaches the agent named in the identity (`AGE-PLUGIN-HYPERSEAL-1…`, the socket
//! path). So age, rage and every age client use the agent's keys without a prompt:
//! * `identity-v1` forwards every file's stanzas to the agent, all files of the run in one
//!   request; what a plugin key in the agent asks (a PIN it has not cached, a touch, a
//!   confirmation) comes back here and is asked through the age client's own prompts;
//! * `recipient-v1` with `add-identity` (age's `-e -i agent.txt`) wraps the file key to the
//!   recipients of the keys the agent holds, as age does for an identity file.
//!
//! The client (age) is read as input like any other: lines within one header line's budget,
//! bodies within a stanza's, everything within one agent message's.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use std::sync::Mutex;

use hyperseal::agent::proto::{Answer, Request};
use hyperseal::agent::{self, AgentIdentity};
use hyperseal::format::{decode_b64, encode_b64, Stanza};
use hyperseal::recipient::{self, Callbacks};
use hyperseal::{limits, FileKey};
use zeroize::Zeroizing;

/// Whether the program was started as `age-plugin-hyperseal`.
pub fn invoked_as_plugin(argv0: &std::ffi::OsStr) -> bool {
    std::path::Path::new(argv0).file_stem().is_some_and(|n| n == "age-plugin-hyperseal")
}

/// Each file's answer for one identity, from an identity the plugin opens in its own process.
pub type Answers = Result<Vec<Option<Result<FileKey, hyperseal::Error>>>, hyperseal::Error>;

/// Identities the plugin opens in its own process instead of reaching an agent (the CLI's TPM
/// keys, `AGE-PLUGIN-HYPERSEAL-1…` lines that name no socket): given an identity line, the files'
/// stanzas and the age client's prompts, `Some` answers, or `None` for an identity it does not
/// know (an agent's). Errors are worded for age's user: age prints them as they are.
pub type Local<'a> = &'a dyn Fn(&str, &[Vec<Stanza>], &dyn Callbacks) -> Option<Answers>;

/// The plugin's `main`: `--age-plugin=identity-v1` and `recipient-v1`.
pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    main_with(args, &|_, _, _| None)
}

/// [`main`] with identities of the caller's opened in this process ([`Local`]).
pub fn main_with(args: &[std::ffi::OsString], local: Local) -> ExitCode {
    let state = args.iter().find_map(|a| a.to_str()?.strip_prefix("--age-plugin=").map(str::to_string));
    // Unlocked handles: the age client's prompts are asked from the agent's client thread.
    let (mut stdin, mut stdout) = (io::BufReader::new(io::stdin()), io::stdout());
    let result = match state.as_deref() {
        Some("identity-v1") => identity_v1(&mut stdin, &mut stdout, local),
        Some("recipient-v1") => recipient_v1(&mut stdin, &mut stdout),
        _ => {
            eprintln!("age-plugin-hyperseal: run by age (age -d -i FILE, with FILE from `hyperseal agent identity`)");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("age-plugin-hyperseal: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One message from the client: a command, its arguments, its body.
struct Message {
    args: Vec<String>,
    body: Vec<u8>,
}

/// Reads messages within a budget of bytes for the whole run.
struct Reader<'a, R> {
    inner: &'a mut R,
    left: usize,
}

impl<R: BufRead> Reader<'_, R> {
    fn line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        let room = limits::HEADER_LINE.min(self.left) as u64 + 1;
        io::Read::take(&mut *self.inner, room).read_until(b'\n', &mut line)?;
        self.left = self.left.saturating_sub(line.len());
        match line.pop() {
            Some(b'\n') => Ok(line),
            _ if line.len() as u64 >= room - 1 => Err(bad("a line past the budget")),
            _ => Err(io::ErrorKind::UnexpectedEof.into()),
        }
    }

    /// `-> ARGS…` and body lines up to the first shorter than 64 columns.
    fn message(&mut self) -> io::Result<Message> {
        let line = self.line()?;
        let text = String::from_utf8(line).map_err(|_| bad("a line that is not UTF-8"))?;
        let args: Vec<String> = match text.strip_prefix("-> ") {
            Some(rest) => rest.split(' ').map(str::to_string).collect(),
            None => return Err(bad("a line that does not start a message")),
        };
        let mut b64 = Vec::new();
        loop {
            let l = self.line()?;
            let last = l.len() < 64;
            b64.extend_from_slice(&l);
            if b64.len() > limits::STANZA_BODY * 4 / 3 + 64 {
                return Err(bad("a body past the budget"));
            }
            if last {
                break;
            }
        }
        let body = decode_b64(&b64).map_err(|_| bad("a body that is not base64"))?;
        Ok(Message { args, body })
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("age sent {what}"))
}

/// Writes one message: `-> ARGS…` and the body in 64-column base64 lines.
fn send(out: &mut impl Write, args: &[&str], body: &[u8]) -> io::Result<()> {
    let mut s = Vec::new();
    Stanza {
        tag: args[0].to_string(),
        args: args[1..].iter().map(|a| a.to_string()).collect(),
        body: body.to_vec(),
    }
    .write_to(&mut s);
    out.write_all(&s)?;
    out.flush()
}

/// Sends a command and reads the client's `ok` or `fail`.
fn command<R: BufRead>(
    out: &mut impl Write,
    r: &mut Reader<R>,
    args: &[&str],
    body: &[u8],
) -> io::Result<Message> {
    send(out, args, body)?;
    r.message()
}

/// The age client as the user's prompt: what a plugin key in the agent asks is asked through
/// age's `msg`, `confirm`, `request-public` and `request-secret` (age shows them on its
/// terminal, or answers `fail` where it has none).
struct AgeClient<'c, 'r, R, W> {
    io: Mutex<(&'c mut Reader<'r, R>, &'c mut W)>,
}

impl<R: BufRead + Send, W: Write + Send> AgeClient<'_, '_, R, W> {
    /// Sends one request; `Some` with the answer's arguments and body if age said `ok`.
    fn ask(&self, args: &[&str], body: &[u8]) -> Option<Message> {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        let (r, out) = &mut *io;
        let reply = command(*out, r, args, body).ok()?;
        (reply.args.first().map(String::as_str) == Some("ok")).then_some(reply)
    }
}

impl<R: BufRead + Send, W: Write + Send> Callbacks for AgeClient<'_, '_, R, W> {
    fn display_message(&self, message: &str) {
        self.ask(&["msg"], message.as_bytes());
    }

    fn confirm(&self, message: &str, yes: &str, no: Option<&str>) -> Option<bool> {
        let (yes, no) = (encode_b64(yes.as_bytes()), no.map(|n| encode_b64(n.as_bytes())));
        let mut args = vec!["confirm", yes.as_str()];
        args.extend(no.as_deref());
        let reply = self.ask(&args, message.as_bytes())?;
        match reply.args.get(1).map(String::as_str) {
            Some("yes") => Some(true),
            Some("no") => Some(false),
            _ => None,
        }
    }

    fn request_public_string(&self, description: &str) -> Option<String> {
        String::from_utf8(self.ask(&["request-public"], description.as_bytes())?.body).ok()
    }

    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
        let body = Zeroizing::new(self.ask(&["request-secret"], description.as_bytes())?.body);
        std::str::from_utf8(&body).ok().map(|s| Zeroizing::new(s.to_string()))
    }
}

fn identity_v1<R: BufRead + Send, W: Write + Send>(
    input: &mut R,
    out: &mut W,
    local: Local,
) -> io::Result<()> {
    let mut r = Reader { inner: input, left: limits::AGENT_MESSAGE };
    let mut identities = Vec::new();
    let mut files: Vec<Vec<Stanza>> = Vec::new();
    let mut stanzas = 0;
    loop {
        let m = r.message()?;
        match m.args.first().map(String::as_str) {
            Some("add-identity") if m.args.len() == 2 => identities.push(m.args[1].clone()),
            Some("recipient-stanza") if m.args.len() >= 3 => {
                let file: usize = m.args[1].parse().map_err(|_| bad("a file index that is not a number"))?;
                if file >= limits::AGENT_STANZAS || stanzas >= limits::AGENT_STANZAS {
                    return Err(bad("stanzas past the budget"));
                }
                if file >= files.len() {
                    files.resize_with(file + 1, Vec::new);
                }
                stanzas += 1;
                let (tag, args) = (m.args[2].clone(), m.args[3..].to_vec());
                files[file].push(Stanza { tag, args, body: m.body });
            }
            Some("done") => break,
            // Anything else (grease) is ignored, as the spec asks.
            _ => {}
        }
    }
    let mut answered = vec![false; files.len()];
    for (i, id) in identities.iter().enumerate() {
        let index = i.to_string();
        let answers = {
            let client = AgeClient { io: Mutex::new((&mut r, &mut *out)) };
            match local(id, &files, &client) {
                Some(answers) => answers,
                None => agent::socket_of(id).and_then(|path| {
                    AgentIdentity::new(path).unwrap_files_with(files.clone(), Some(&client))
                }),
            }
        };
        let answers = match answers {
            Ok(a) => a,
            Err(e) => {
                command(out, &mut r, &["error", "identity", &index], e.to_string().as_bytes())?;
                continue;
            }
        };
        for (f, answer) in answers.into_iter().enumerate() {
            if answered[f] {
                continue;
            }
            let file = f.to_string();
            match answer {
                Some(Ok(key)) => drop(command(out, &mut r, &["file-key", &file], key.expose())?),
                Some(Err(e)) => {
                    command(out, &mut r, &["error", "stanza", &file, "0"], e.to_string().as_bytes())?;
                }
                None => continue,
            }
            answered[f] = true;
        }
    }
    send(out, &["done"], &[])
}

/// `recipient-v1`: each `add-identity` (an agent's identity) stands for the keys that agent
/// holds (`list`): every file key is wrapped here to those with a recipient, with the
/// library's own recipients, and by the agent to its plugin keys (`WRAP`: it runs their
/// plugins' `recipient-v1`, as age does for a plugin identity file). An agent with no key at
/// all is an error for its identity.
fn recipient_v1(input: &mut impl BufRead, out: &mut impl Write) -> io::Result<()> {
    let mut r = Reader { inner: input, left: limits::AGENT_MESSAGE };
    let (mut identities, mut keys, mut labels_asked) = (Vec::new(), Vec::new(), false);
    loop {
        let m = r.message()?;
        match m.args.first().map(String::as_str) {
            Some("add-identity") if m.args.len() == 2 => identities.push(m.args[1].clone()),
            Some("add-recipient") => {
                command(out, &mut r, &["error", "internal"], b"age-plugin-hyperseal has no recipients of its own: use the agent's identity (hyperseal agent identity)")?;
                return send(out, &["done"], &[]);
            }
            Some("wrap-file-key") if keys.len() < limits::PLUGIN_STANZAS => {
                let key =
                    FileKey::from_slice(&m.body).ok_or_else(|| bad("a file key of the wrong length"))?;
                keys.push(key);
            }
            Some("extension-labels") => labels_asked = true,
            Some("done") => break,
            _ => {}
        }
    }
    let mut recipients: Vec<Box<dyn recipient::Recipient>> = Vec::new();
    // Each file key's stanzas to the agents' plugin keys.
    let mut wrapped: Vec<Vec<hyperseal::format::Stanza>> = keys.iter().map(|_| Vec::new()).collect();
    for (i, id) in identities.iter().enumerate() {
        match agent_recipients(id).and_then(|(found, plugins)| {
            Ok((found, if plugins > 0 { agent_wraps(id, &keys)? } else { Vec::new() }))
        }) {
            Ok((found, by_agent)) => {
                recipients.extend(found);
                for (w, more) in wrapped.iter_mut().zip(by_agent) {
                    w.extend(more);
                }
            }
            Err(why) => {
                command(out, &mut r, &["error", "identity", &i.to_string()], why.as_bytes())?;
                return send(out, &["done"], &[]);
            }
        }
    }
    // The agent's keys share one label set (the label rule of `wrap_all`): a post-quantum
    // agent says so, and age keeps it from being mixed with classic recipients.
    if let (true, Some(first), Some(key)) = (labels_asked, recipients.first(), keys.first()) {
        if let Ok((_, labels)) = first.wrap_file_key(key) {
            let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
            command(out, &mut r, &[&["labels"][..], &labels].concat(), &[])?;
        }
    }
    for (f, key) in keys.iter().enumerate() {
        // An agent of plugin keys alone: the agent's stanzas are all there are.
        let own = match recipients.is_empty() {
            true => Ok(Vec::new()),
            false => recipient::wrap_all(&recipients, key),
        };
        let stanzas = match own {
            Ok(mut stanzas) => {
                stanzas.append(&mut wrapped[f]);
                stanzas
            }
            Err(e) => {
                command(out, &mut r, &["error", "internal"], e.to_string().as_bytes())?;
                return send(out, &["done"], &[]);
            }
        };
        let file = f.to_string();
        for s in stanzas {
            let mut args = vec!["recipient-stanza", file.as_str(), s.tag.as_str()];
            args.extend(s.args.iter().map(String::as_str));
            command(out, &mut r, &args, &s.body)?;
        }
    }
    send(out, &["done"], &[])
}

/// The recipients of the keys the agent at `identity` holds (`list`), and how many plugin keys
/// were left out; `Err`: why none can be had.
fn agent_recipients(identity: &str) -> Result<(Vec<Box<dyn recipient::Recipient>>, usize), String> {
    let agent = AgentIdentity::new(agent::socket_of(identity).map_err(|e| e.to_string())?);
    let entries = match agent.ask(&Request::List, 0).map_err(|e| e.to_string())? {
        Answer::Entries(e) => e,
        Answer::Refused(why) => return Err(why),
        _ => return Err("the agent answered something else than was asked".into()),
    };
    let (mut found, mut skipped) = (Vec::new(), 0);
    for e in entries {
        match recipient::parse_recipients_file(&e.recipient.replace(' ', "\n")) {
            Ok(r) if !r.is_empty() => found.extend(r),
            _ => skipped += 1,
        }
    }
    if found.is_empty() && skipped == 0 {
        return Err("the agent holds no key with a recipient to encrypt to (hyperseal agent list)".into());
    }
    Ok((found, skipped))
}

/// The stanzas of each of `keys` to the plugin keys the agent at `identity` holds, wrapped by
/// the agent (which holds their identities).
fn agent_wraps(identity: &str, keys: &[FileKey]) -> Result<Vec<Vec<hyperseal::format::Stanza>>, String> {
    let agent = AgentIdentity::new(agent::socket_of(identity).map_err(|e| e.to_string())?);
    let copies = keys.iter().map(|k| FileKey::from_slice(k.expose()).expect("a file key's length")).collect();
    match agent.ask(&Request::Wrap(copies), keys.len()).map_err(|e| e.to_string())? {
        Answer::Wrapped(each) if each.len() == keys.len() => Ok(each),
        Answer::Refused(why) => Err(why),
        _ => Err("the agent answered something else than was asked".into()),
    }
}
