//! Asking a request's client: its connection, able to ask its user (a plugin key's PIN, a
//! touch, a message of the agent's own), and the deadlines that bound the request and the
//! user's answers. Below every other room of the agent: the PIN cache, the keys, a forward's
//! policy and the server ask through it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyperseal::agent::conn::Conn;
use hyperseal::agent::proto::{self, Answer, Prompt, Request};
use hyperseal::limits;
use zeroize::Zeroizing;

/// How long a connection may take to send its request and read the answer. It bounds the
/// work of a request too: an UNWRAP tries each file against each key only while its
/// connection's deadline has not passed (a file of stanzas crafted to cost a private-key
/// operation each, against an RSA key, is otherwise unbounded work).
pub const CONNECTION_DEADLINE: Duration = Duration::from_secs(10);

/// What an UNWRAP's work leaves of its connection's deadline, to write the answer in (a
/// window's answer is a few hundred KiB), and the least time a connection's answer gets to be
/// written however late its work ended. On a loaded machine every slot's work ends at once, and 32
/// answers of 500 KB each (5,000 files "not tried") missed a 1 s window.
pub const ANSWER_TIME: Duration = Duration::from_secs(2);

/// What a file is answered when its request's time ran out before it was tried.
pub const NOT_TRIED: &str =
    "not tried: the request's work passed the agent's budget (8 s a request); ask for fewer files at once";

/// The client connection a request came on, able to ask its user.
pub trait Relay {
    /// Asks the client's user; `None`: no answer (declined, no terminal, the client is gone).
    fn ask(&self, prompt: Prompt) -> Option<Zeroizing<String>>;

    /// Whether what its user types may be cached: not from a forward, since the cache answers
    /// every local client with no question.
    fn caches(&self) -> bool {
        true
    }

    /// When the request's work must stop, so its answer goes out in time (`None`: no limit).
    fn work_until(&self) -> Option<Instant> {
        None
    }
}

/// How long the user of a client may take to answer a plugin key's question (a PIN, a touch).
const USER_TIME: Duration = Duration::from_secs(300);

/// The most a client's reply to a question may be (a PIN or a choice).
const REPLY_BYTES: usize = 4096;

/// A request's connection and its deadline. The client of an UNWRAP_ASKING can ask its user:
/// each question goes out as an ASK, and the deadline starts again once the reply is in (the
/// user's time is not the request's work), as it does after a confirmation on this host.
pub struct ConnRelay {
    pub conn: Arc<Conn>,
    pub deadline: Mutex<Instant>,
    /// Whether the client said it can ask its user (UNWRAP_ASKING).
    pub asking: bool,
    /// The client failed to answer once: it is asked nothing more.
    pub gone: AtomicBool,
    /// The request came from a forward: what its user types is not cached.
    pub forwarded: bool,
}

impl ConnRelay {
    pub fn deadline(&self) -> Instant {
        *self.deadline.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The deadline starts again from now.
    pub fn restart(&self) {
        *self.deadline.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now() + CONNECTION_DEADLINE;
    }

    /// Shows the client's user a message of the agent's own. Its acknowledgement is due within
    /// the connection's deadline, not a user's time: a message needs no one to answer it, and
    /// a client that leaves it unanswered must not hold its connection for minutes.
    pub fn tell(&self, message: String) {
        self.exchange(Prompt::Message(message), CONNECTION_DEADLINE);
    }

    /// Sends `prompt` and reads the client's reply, due within `wait`.
    fn exchange(&self, prompt: Prompt, wait: Duration) -> Option<Zeroizing<String>> {
        if !self.asking || self.gone.load(Ordering::SeqCst) {
            return None;
        }
        let asked = proto::write_message(
            &mut self.conn.until(Instant::now() + CONNECTION_DEADLINE),
            &Answer::Ask(prompt).encode(),
        )
        .and_then(|()| {
            let mut r = self.conn.until(Instant::now() + wait);
            match proto::read_length(&mut r)? {
                len if len <= REPLY_BYTES => proto::read_body(&mut r, len),
                _ => Err(limits::too_long("a reply to the agent's question", REPLY_BYTES)),
            }
        })
        .and_then(|body| Request::decode(&body));
        match asked {
            Ok(Request::Reply(value)) => {
                self.restart();
                value
            }
            _ => {
                self.gone.store(true, Ordering::SeqCst);
                None
            }
        }
    }
}

impl Relay for ConnRelay {
    fn ask(&self, prompt: Prompt) -> Option<Zeroizing<String>> {
        self.exchange(prompt, USER_TIME)
    }

    fn caches(&self) -> bool {
        !self.forwarded
    }

    fn work_until(&self) -> Option<Instant> {
        let d = self.deadline();
        Some(d.checked_sub(ANSWER_TIME).unwrap_or(d))
    }
}
