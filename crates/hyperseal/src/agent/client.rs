//! [`AgentIdentity`]: the agent as one more identity. Each question is one connection: the
//! request, the answer, and a deadline over both, so an agent that is gone fails at once and
//! one that hangs costs at most the deadline.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zeroize::Zeroizing;

use super::conn::Conn;
use super::proto::{self, Answer, Prompt, Request};
use crate::error::Error;
use crate::file_key::FileKey;
use crate::format::Stanza;
use crate::limits;
use crate::recipient::{Callbacks, Identity};

/// How long one question to the agent may take by default, whatever it is asked; a window of
/// many stanzas gets [`PER_STANZA`] more for each (the agent tries each of its keys on each).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// See [`DEFAULT_TIMEOUT`].
pub const PER_STANZA: Duration = Duration::from_micros(200);

/// The identity agent listening at a socket path (on Windows a pipe name, `\\.\pipe\…`): asks it
/// which file key a file's stanzas open. It never learns a secret key, and the agent never sees
/// a payload.
///
/// ```no_run
/// use hyperseal::agent::AgentIdentity;
/// let agent = AgentIdentity::new("/run/user/1000/hyperseal/agent.sock");
/// let ids: Vec<Box<dyn hyperseal::Identity>> = vec![Box::new(agent)];
/// # let file = vec![];
/// let plaintext = hyperseal::decrypt(&ids, &file)?;
/// # Ok::<(), hyperseal::Error>(())
/// ```
#[derive(Clone)]
pub struct AgentIdentity {
    path: PathBuf,
    timeout: Duration,
    /// Who answers what a plugin key run by the agent asks (its PIN, a touch): `None`, the
    /// agent asks nothing and a key that needs an answer fails.
    callbacks: Option<Arc<dyn Callbacks>>,
}

impl std::fmt::Debug for AgentIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentIdentity")
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .field("asks", &self.callbacks.is_some())
            .finish()
    }
}

impl AgentIdentity {
    /// The agent at `path` (nothing is connected until a question is asked). The library never
    /// reads the environment: the caller says where the agent is.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        AgentIdentity { path: path.into(), timeout: DEFAULT_TIMEOUT, callbacks: None }
    }

    /// Answers through `callbacks` what a plugin key held by the agent asks of the user (a PIN
    /// the agent has not cached, a touch, a confirmation). The time the user takes is not
    /// counted against the deadline.
    pub fn with_callbacks(mut self, callbacks: Arc<dyn Callbacks>) -> Self {
        self.callbacks = Some(callbacks);
        self
    }

    /// The deadline of one question (default [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sends `request` and reads the answer, within the deadline (grown by `stanzas`).
    pub fn ask(&self, request: &Request, stanzas: usize) -> Result<Answer, Error> {
        self.exchange(request, stanzas, None)
    }

    /// Sends `request` and reads the answer; each [`Answer::Ask`] before it is answered through
    /// `callbacks`, and the deadline starts again after each (the user's time is not the
    /// agent's).
    fn exchange(
        &self,
        request: &Request,
        stanzas: usize,
        callbacks: Option<&dyn Callbacks>,
    ) -> Result<Answer, Error> {
        let mut deadline = Instant::now() + self.timeout + PER_STANZA * stanzas as u32;
        let name = self.path.display();
        let conn = Conn::connect(&self.path, deadline)
            .map_err(|e| Error::Agent(format!("cannot connect to the agent at {name}: {}", reason(&e))))?;
        let timed_out = |e: Error| match e {
            Error::Io(io)
                if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
            {
                Error::Agent(format!("the agent at {name} did not answer within {:?}", self.timeout))
            }
            Error::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::UnexpectedEof
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::BrokenPipe
                ) =>
            {
                Error::Agent(format!("the agent at {name} closed the connection without answering"))
            }
            Error::Io(io) => Error::Agent(format!("the agent at {name}: {}", reason(&io))),
            other => other,
        };
        // One deadline over the whole exchange: a read timeout alone would be per read.
        proto::write_message(&mut conn.until(deadline), &request.encode()).map_err(timed_out)?;
        for _ in 0..=limits::PLUGIN_MESSAGES {
            let body = proto::read_message(&mut conn.until(deadline)).map_err(timed_out)?;
            let prompt = match Answer::decode(&body)? {
                Answer::Ask(prompt) => prompt,
                answer => return Ok(answer),
            };
            let Some(cb) = callbacks else {
                return Err(Error::Agent(format!(
                    "the agent at {name} asked a question it was not allowed to"
                )));
            };
            let reply = match prompt {
                Prompt::Message(m) => {
                    cb.display_message(&m);
                    None
                }
                Prompt::Confirm { message, yes, no } => cb
                    .confirm(&message, &yes, no.as_deref())
                    .map(|y| Zeroizing::new(if y { "yes" } else { "no" }.to_string())),
                Prompt::Public(m) => cb.request_public_string(&m).map(Zeroizing::new),
                Prompt::Secret(m) => cb.request_passphrase(&m),
            };
            deadline = Instant::now() + self.timeout + PER_STANZA * stanzas as u32;
            proto::write_message(&mut conn.until(deadline), &Request::Reply(reply).encode())
                .map_err(timed_out)?;
        }
        Err(limits::too_many("questions from the agent in one request", limits::PLUGIN_MESSAGES))
    }

    /// For each file (its stanzas), in one round trip: not the agent's, its file key, or why
    /// it failed. `Err`: the agent could not be asked at all (gone, hung, locked, broken).
    pub fn unwrap_files(
        &self,
        files: Vec<Vec<Stanza>>,
    ) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        self.unwrap_files_with(files, self.callbacks.as_deref())
    }

    /// [`unwrap_files`](Self::unwrap_files), with what the agent asks answered through
    /// `callbacks` (`None`: the agent is told the client cannot ask its user).
    pub fn unwrap_files_with(
        &self,
        files: Vec<Vec<Stanza>>,
        callbacks: Option<&dyn Callbacks>,
    ) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        let (n, stanzas) = (files.len(), files.iter().map(Vec::len).sum());
        let request = match callbacks {
            Some(_) => Request::UnwrapAsking(files),
            None => Request::Unwrap(files),
        };
        match self.exchange(&request, stanzas, callbacks)? {
            Answer::Unwrapped(each) if each.len() == n => {
                Ok(each.into_iter().map(|a| a.map(|r| r.map_err(Error::Agent))).collect())
            }
            Answer::Refused(why) => Err(Error::Agent(why)),
            _ => Err(Error::Agent("the agent answered something else than was asked".into())),
        }
    }
}

fn reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(at) => s[..at].to_lowercase(),
        None => s,
    }
}

impl Identity for AgentIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        self.unwrap_stanzas(std::slice::from_ref(stanza))
    }

    /// One file: one question. An agent that cannot be asked is an error for this file (it
    /// comes after the caller's other identities, so they were tried first).
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        match self.unwrap_files(vec![stanzas.to_vec()]) {
            Ok(mut each) => each.pop().flatten(),
            Err(e) => Some(Err(e)),
        }
    }

    /// Every question costs a connection and a round trip: a tree's window goes in one.
    fn unwraps_in_batches(&self) -> bool {
        true
    }

    fn unwrap_each(&self, stanzas: &[&Stanza]) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        self.unwrap_files(stanzas.iter().map(|s| vec![(*s).clone()]).collect())
    }
}
