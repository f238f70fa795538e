//! [`AgentIdentity`]: the agent as one more identity. Each question is one connection: the
//! request, the answer, and a deadline over both, so an agent that is gone fails at once and
//! one that hangs costs at most the deadline.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::conn::Conn;
use super::proto::{self, Answer, Request};
use crate::error::Error;
use crate::file_key::FileKey;
use crate::format::Stanza;
use crate::recipient::Identity;

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
#[derive(Clone, Debug)]
pub struct AgentIdentity {
    path: PathBuf,
    timeout: Duration,
}

impl AgentIdentity {
    /// The agent at `path` (nothing is connected until a question is asked). The library never
    /// reads the environment: the caller says where the agent is.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        AgentIdentity { path: path.into(), timeout: DEFAULT_TIMEOUT }
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
        let deadline = Instant::now() + self.timeout + PER_STANZA * stanzas as u32;
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
        let body = proto::read_message(&mut conn.until(deadline)).map_err(timed_out)?;
        Answer::decode(&body)
    }

    /// For each file (its stanzas), in one round trip: not the agent's, its file key, or why
    /// it failed. `Err`: the agent could not be asked at all (gone, hung, locked, broken).
    pub fn unwrap_files(
        &self,
        files: Vec<Vec<Stanza>>,
    ) -> Result<Vec<Option<Result<FileKey, Error>>>, Error> {
        let (n, stanzas) = (files.len(), files.iter().map(Vec::len).sum());
        match self.ask(&Request::Unwrap(files), stanzas)? {
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
