//! `age-plugin-hyperseal`: the hyperseal binary started under that name speaks age's plugin
//! protocol (the `identity-v1` state machine of age's plugin spec) and forwards every file's
//! stanzas to the agent named in the identity (`AGE-PLUGIN-HYPERSEAL-1…`, the socket path), all
//! files of the run in one request. So age, rage and every age client open files with the
//! agent's keys without a prompt.
//!
//! The client (age) is read as input like any other: lines within one header line's budget,
//! bodies within a stanza's, everything within one agent message's.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use hyperseal::agent::{self, AgentIdentity};
use hyperseal::format::{decode_b64, Stanza};
use hyperseal::limits;

/// Whether the program was started as `age-plugin-hyperseal`.
pub fn invoked_as_plugin(argv0: &std::ffi::OsStr) -> bool {
    std::path::Path::new(argv0).file_stem().is_some_and(|n| n == "age-plugin-hyperseal")
}

/// The plugin's `main`: `--age-plugin=identity-v1` is served; `recipient-v1` is refused (the
/// agent holds identities; encrypt to their recipients).
pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let state = args.iter().find_map(|a| a.to_str()?.strip_prefix("--age-plugin=").map(str::to_string));
    let (stdin, stdout) = (io::stdin(), io::stdout());
    let result = match state.as_deref() {
        Some("identity-v1") => identity_v1(&mut stdin.lock(), &mut stdout.lock()),
        Some("recipient-v1") => recipient_v1(&mut stdin.lock(), &mut stdout.lock()),
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
) -> io::Result<()> {
    send(out, args, body)?;
    r.message().map(drop)
}

fn identity_v1(input: &mut impl BufRead, out: &mut impl Write) -> io::Result<()> {
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
        let answers =
            agent::socket_of(id).and_then(|path| AgentIdentity::new(path).unwrap_files(files.clone()));
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
                Some(Ok(key)) => command(out, &mut r, &["file-key", &file], key.expose())?,
                Some(Err(e)) => {
                    command(out, &mut r, &["error", "stanza", &file, "0"], e.to_string().as_bytes())?
                }
                None => continue,
            }
            answered[f] = true;
        }
    }
    send(out, &["done"], &[])
}

fn recipient_v1(input: &mut impl BufRead, out: &mut impl Write) -> io::Result<()> {
    let mut r = Reader { inner: input, left: limits::AGENT_MESSAGE };
    while r.message()?.args.first().map(String::as_str) != Some("done") {}
    command(
        out,
        &mut r,
        &["error", "internal"],
        b"the hyperseal agent holds identities only: encrypt to their recipients (hyperseal agent list)",
    )?;
    send(out, &["done"], &[])
}
