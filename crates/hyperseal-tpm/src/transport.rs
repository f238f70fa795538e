//! Where the TPM is, and how a command reaches it: the kernel's resource manager
//! (`/dev/tpmrm0`: write one command, read one response) or a simulator's socket (swtpm and the
//! Microsoft simulator speak the "mssim" TCP protocol). Each command has one deadline for all
//! its writes and reads together, no response longer than [`MAX_RESPONSE`] is read, and a
//! connection whose exchange failed part-way is never used again.
//!
//! Locations are spelled as tpm2-tools spells its TCTI: `device:/dev/tpmrm0`,
//! `swtpm:host=127.0.0.1,port=2321`, `mssim:host=…,port=…`. This module reads no environment
//! variable: the caller passes the location (the CLI reads `TPM2TOOLS_TCTI` and `TCTI`).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::error::TpmError;

/// The default location: the kernel's resource manager, which flushes what a process leaves.
pub const DEFAULT_DEVICE: &str = "/dev/tpmrm0";
/// TPM 2.0 implementations answer in at most 4 KiB (`TPM_PT_MAX_RESPONSE_SIZE` is 4096 on
/// every chip and simulator we know); a longer answer is refused before it is buffered.
pub const MAX_RESPONSE: usize = 4096;
/// How long one command may take: key creation on a slow chip takes seconds, not minutes.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The mssim protocol's command codes (the simulator's `TpmTcpProtocol.h`).
const TPM_SEND_COMMAND: u32 = 8;
const TPM_SESSION_END: u32 = 20;

/// A parsed TPM location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A character device (`/dev/tpmrm0`).
    Device(String),
    /// A simulator's command port.
    Socket { host: String, port: u16 },
    /// A location no TPM can be reached at (tabrmd's, or a malformed one), as `spelled`, and
    /// `why`: opening it fails with [`TpmError::BadLocation`].
    Unusable { spelled: String, why: String },
}

impl Location {
    /// Parses a tpm2-tools TCTI string; empty means the default device.
    ///
    /// It does not fail: a location this crate cannot use parses to [`Location::Unusable`],
    /// and the error comes when a TPM is first needed, as a missing device's does, so that it
    /// reaches the user as a TPM error with its hint, from the command that needed the TPM
    /// (and a run that needs no TPM is not stopped by `TPM2TOOLS_TCTI=tabrmd` in its
    /// environment). [`Location::check`] asks early.
    pub fn parse(s: &str) -> Result<Self, TpmError> {
        let unusable = |why: &str| Location::Unusable { spelled: s.into(), why: why.into() };
        let (kind, conf) = s.split_once(':').unwrap_or((s, ""));
        Ok(match kind {
            "" => Location::Device(DEFAULT_DEVICE.into()),
            "device" => Location::Device(if conf.is_empty() { DEFAULT_DEVICE.into() } else { conf.into() }),
            "swtpm" | "mssim" => {
                let (mut host, mut port) = ("127.0.0.1".to_string(), 2321u16);
                for kv in conf.split(',').filter(|kv| !kv.is_empty()) {
                    match kv.split_once('=') {
                        Some(("host", h)) => host = h.into(),
                        Some(("port", p)) => match p.parse() {
                            Ok(p) => port = p,
                            Err(_) => return Ok(unusable("its port is not a number")),
                        },
                        _ => return Ok(unusable("expected host=…,port=… after the colon")),
                    }
                }
                Location::Socket { host, port }
            }
            // tpm2-tools' other TCTIs reach the TPM through a library this crate does not
            // link (the static binary loads none): named, so the user knows it is the kind.
            "tabrmd" => unusable("tabrmd (the TPM access broker on D-Bus) is not supported"),
            _ => unusable(&format!("the {kind:?} TCTI is not supported")),
        })
    }

    /// The error opening this location would give, if it is [`Location::Unusable`].
    pub fn check(&self) -> Result<(), TpmError> {
        match self {
            Location::Unusable { spelled, why } => Err(refused(spelled, why)),
            _ => Ok(()),
        }
    }
}

fn refused(spelled: &str, why: &str) -> TpmError {
    TpmError::BadLocation { spelled: spelled.into(), why: why.into() }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Device(p) => f.write_str(p),
            Location::Socket { host, port } => write!(f, "swtpm:host={host},port={port}"),
            Location::Unusable { spelled, .. } => f.write_str(spelled),
        }
    }
}

/// An open connection to a TPM, and whether it may carry another command.
pub(crate) struct Link {
    io: Io,
    /// How long one whole command may take, from its first byte written to its last read.
    deadline: Duration,
    /// Set once an exchange failed part-way (a timeout, a broken or oversized answer, or the
    /// command layer's [`Link::abandon`]): the next answer read could be this one's, arriving
    /// late, and would be taken for the next command's. Nothing more is sent on it.
    broken: bool,
}

enum Io {
    Device(std::fs::File),
    Socket(TcpStream),
}

fn unreachable(location: &Location, e: &std::io::Error) -> TpmError {
    TpmError::Unreachable {
        location: location.to_string(),
        reason: e.to_string(),
        denied: e.kind() == std::io::ErrorKind::PermissionDenied,
    }
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

fn timeout() -> TpmError {
    TpmError::Timeout("a command".into())
}

/// The time left before `end`, or a timeout once none is.
fn left(end: Instant) -> Result<Duration, TpmError> {
    end.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()).ok_or_else(timeout)
}

impl Link {
    pub(crate) fn open(location: &Location) -> Result<Self, TpmError> {
        let io = match location {
            Location::Unusable { spelled, why } => return Err(refused(spelled, why)),
            Location::Device(path) => {
                open_device(path).map(Io::Device).map_err(|e| unreachable(location, &e))?
            }
            Location::Socket { host, port } => {
                let addr = (host.as_str(), *port)
                    .to_socket_addrs()
                    .map_err(|e| unreachable(location, &e))?
                    .next()
                    .ok_or_else(|| TpmError::Protocol(format!("{host} has no address")))?;
                let s = TcpStream::connect_timeout(&addr, DEADLINE).map_err(|e| unreachable(location, &e))?;
                s.set_nodelay(true).ok();
                Io::Socket(s)
            }
        };
        Ok(Link { io, deadline: DEADLINE, broken: false })
    }

    /// Another deadline for each command (tests: a fraction of a second).
    #[cfg(test)]
    pub(crate) fn set_deadline(&mut self, d: Duration) {
        self.deadline = d;
    }

    /// Marks the connection unusable: the command layer found the last answer broken (its
    /// framing, or a session HMAC that does not verify), so what follows on it is not trusted.
    pub(crate) fn abandon(&mut self) {
        self.broken = true;
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// A new connection in place of this broken one (for `Tpm::flush` only). The old socket is
    /// shut first: a simulator serves one connection at a time.
    pub(crate) fn reopen(&mut self, location: &Location) -> Result<(), TpmError> {
        if let Io::Socket(s) = &self.io {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        let deadline = self.deadline;
        *self = Link::open(location)?;
        self.deadline = deadline;
        Ok(())
    }

    /// Sends one command and returns its whole response, all within one deadline. A failure
    /// leaves the connection unusable (see `broken`).
    pub(crate) fn transact(&mut self, command: &[u8]) -> Result<Vec<u8>, TpmError> {
        if self.broken {
            return Err(TpmError::Protocol(
                "an earlier exchange with the TPM failed part-way: its connection is not used again".into(),
            ));
        }
        let end = Instant::now() + self.deadline;
        let r = match &mut self.io {
            Io::Device(f) => device_transact(f, command, end),
            Io::Socket(s) => socket_transact(s, command, end),
        };
        self.broken = r.is_err();
        r
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let (Io::Socket(s), false) = (&mut self.io, self.broken) {
            s.set_write_timeout(Some(Duration::from_secs(1))).ok();
            let _ = s.write_all(&TPM_SESSION_END.to_be_bytes());
        }
    }
}

fn io_error(e: std::io::Error) -> TpmError {
    if timed_out(&e) {
        timeout()
    } else {
        TpmError::Protocol(format!("talking to the TPM: {e}"))
    }
}

/// One mssim exchange; every write and read waits at most until `end`, so an answer that
/// trickles in byte by byte cannot stretch the command past its deadline.
fn socket_transact(s: &mut TcpStream, command: &[u8], end: Instant) -> Result<Vec<u8>, TpmError> {
    let mut frame = zeroize::Zeroizing::new(Vec::with_capacity(command.len() + 9));
    frame.extend_from_slice(&TPM_SEND_COMMAND.to_be_bytes());
    frame.push(0); // locality 0
    frame.extend_from_slice(&(command.len() as u32).to_be_bytes());
    frame.extend_from_slice(command);
    let mut sent = 0;
    while sent < frame.len() {
        s.set_write_timeout(Some(left(end)?)).map_err(io_error)?;
        match s.write(&frame[sent..]) {
            Ok(0) => return Err(TpmError::Protocol("the TPM closed the connection".into())),
            Ok(n) => sent += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(e)),
        }
    }
    let mut len = [0u8; 4];
    read_by(s, &mut len, end)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_RESPONSE {
        return Err(TpmError::Protocol(format!("the TPM announced a {len}-byte answer")));
    }
    let mut buf = vec![0u8; len];
    read_by(s, &mut buf, end)?;
    let mut ack = [0u8; 4];
    read_by(s, &mut ack, end)?;
    Ok(buf)
}

/// Fills `buf` from the socket, giving up at `end`.
fn read_by(s: &mut TcpStream, buf: &mut [u8], end: Instant) -> Result<(), TpmError> {
    let mut got = 0;
    while got < buf.len() {
        s.set_read_timeout(Some(left(end)?)).map_err(io_error)?;
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err(TpmError::Protocol("the TPM closed the connection mid-answer".into())),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(e)),
        }
    }
    Ok(())
}

/// The device opened non-blocking, as tpm2-tss's device TCTI opens it: the kernel then runs a
/// command in the background of `write` and signals its answer through `poll`, so the
/// deadline holds for the TPM's own work; on a blocking descriptor `write` itself would wait
/// for the TPM, beyond any deadline.
#[cfg(unix)]
fn open_device(path: &str) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(unix))]
fn open_device(path: &str) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().read(true).write(true).open(path)
}

fn device_transact(f: &mut std::fs::File, command: &[u8], end: Instant) -> Result<Vec<u8>, TpmError> {
    // The kernel takes a whole command per write, and hands over one whole response per read.
    let n = f.write(command).map_err(io_error)?;
    if n != command.len() {
        return Err(TpmError::Protocol(format!("the TPM device took {n} of {} bytes", command.len())));
    }
    wait_readable(f, left(end)?)?;
    let mut buf = vec![0u8; MAX_RESPONSE];
    let n = f.read(&mut buf).map_err(io_error)?;
    buf.truncate(n);
    Ok(buf)
}

/// Waits until the device has a response, at most `wait`.
#[cfg(unix)]
fn wait_readable(f: &std::fs::File, wait: Duration) -> Result<(), TpmError> {
    use std::os::fd::AsRawFd;
    let end = Instant::now() + wait;
    loop {
        let mut p = libc::pollfd { fd: f.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // Rounded up, so that a wait under a millisecond is not a zero-timeout poll.
        let ms = left(end)?.as_micros().div_ceil(1000).min(libc::c_int::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd for the duration of the call; the file outlives it.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        match n {
            1.. => return Ok(()),
            0 => return Err(timeout()),
            _ => {
                let e = std::io::Error::last_os_error();
                // A signal cut the wait short: wait again for what is left.
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(TpmError::Protocol(format!("waiting for the TPM: {e}")));
                }
            }
        }
    }
}

/// Windows has no TPM character device (its TPM is reached through TBS, which this crate does
/// not speak): opening one fails first, so this is never reached there.
#[cfg(not(unix))]
fn wait_readable(_: &std::fs::File, _: Duration) -> Result<(), TpmError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_spelled_as_tpm2_tools_spells_them() {
        assert_eq!(Location::parse("").unwrap(), Location::Device("/dev/tpmrm0".into()));
        assert_eq!(Location::parse("device:/dev/tpm0").unwrap(), Location::Device("/dev/tpm0".into()));
        assert_eq!(
            Location::parse("swtpm:host=localhost,port=2400").unwrap(),
            Location::Socket { host: "localhost".into(), port: 2400 }
        );
        assert_eq!(
            Location::parse("mssim:").unwrap(),
            Location::Socket { host: "127.0.0.1".into(), port: 2321 }
        );
        for bad in ["swtpm:port=x", "mssim:2321", "tabrmd:bus_name=com.intel.tss2.Tabrmd", "libtpms"] {
            let location = Location::parse(bad).unwrap();
            assert!(matches!(location, Location::Unusable { .. }), "{bad}");
            let e = Link::open(&location).err().unwrap();
            assert!(matches!(&e, TpmError::BadLocation { spelled, .. } if spelled == bad), "{e:?}");
            assert_eq!(location.check().err(), Some(e));
        }
        let e = Location::parse("tabrmd").unwrap().check().unwrap_err().to_string();
        assert_eq!(e, "TPM location \"tabrmd\": tabrmd (the TPM access broker on D-Bus) is not supported");
    }

    #[test]
    fn a_missing_device_is_unreachable_not_a_protocol_error() {
        let e = Link::open(&Location::Device("/nonexistent/tpmrm0".into())).err().unwrap();
        assert!(matches!(e, TpmError::Unreachable { denied: false, .. }), "{e:?}");
    }
}

#[cfg(test)]
pub(crate) mod fake {
    //! A one-connection mssim server whose answer to the first command a test writes.
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::mpsc;
    use std::time::Duration;

    use super::Location;

    /// Serves one connection: reads the first command frame, lets `answer` write to the stream,
    /// then sends back (on the channel) every byte the client wrote after that first command,
    /// until it closed or went quiet for a second.
    pub(crate) fn serve(
        answer: impl FnOnce(&mut TcpStream, &[u8]) + Send + 'static,
    ) -> (Location, mpsc::Receiver<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut head = [0u8; 9];
            s.read_exact(&mut head).unwrap();
            let mut cmd = vec![0u8; u32::from_be_bytes(head[5..].try_into().unwrap()) as usize];
            s.read_exact(&mut cmd).unwrap();
            answer(&mut s, &cmd);
            s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
            let mut after = Vec::new();
            let mut buf = [0u8; 256];
            while let Ok(n @ 1..) = s.read(&mut buf) {
                after.extend_from_slice(&buf[..n]);
            }
            let _ = tx.send(after);
        });
        (Location::Socket { host: "127.0.0.1".into(), port }, rx)
    }

    /// A well-formed answer: `TPM_RC_SUCCESS`, no handles, no parameters, and the ack.
    pub(crate) fn ok_answer(s: &mut TcpStream) {
        let resp = [0x80, 0x01, 0, 0, 0, 10, 0, 0, 0, 0];
        let _ = s.write_all(&(resp.len() as u32).to_be_bytes());
        let _ = s.write_all(&resp);
        let _ = s.write_all(&0u32.to_be_bytes());
    }
}

#[cfg(test)]
mod deadline_tests {
    use std::io::Write;
    use std::time::{Duration, Instant};

    use super::*;

    const GET_RANDOM: [u8; 12] = [0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x7B, 0, 8];

    #[test]
    fn a_trickled_answer_meets_one_deadline_for_the_whole_command() {
        // Each byte comes well within any per-read timeout; the whole answer takes 3 s.
        let (location, _) = fake::serve(|s, _| {
            let _ = s.write_all(&60u32.to_be_bytes());
            for _ in 0..60 {
                std::thread::sleep(Duration::from_millis(50));
                if s.write_all(&[0]).is_err() {
                    return;
                }
            }
        });
        let mut link = Link::open(&location).unwrap();
        link.set_deadline(Duration::from_millis(400));
        let start = Instant::now();
        let r = link.transact(&GET_RANDOM);
        assert!(matches!(r, Err(TpmError::Timeout(_))), "{r:?}");
        assert!(start.elapsed() < Duration::from_millis(1500), "{:?}", start.elapsed());
    }

    #[test]
    fn a_late_answer_is_never_taken_for_the_next_commands() {
        // The answer comes after the deadline: the stream is then one answer behind.
        let (location, after) = fake::serve(|s, _| {
            std::thread::sleep(Duration::from_millis(600));
            fake::ok_answer(s);
        });
        let mut link = Link::open(&location).unwrap();
        link.set_deadline(Duration::from_millis(300));
        assert!(matches!(link.transact(&GET_RANDOM), Err(TpmError::Timeout(_))));
        std::thread::sleep(Duration::from_millis(500));
        let again = link.transact(&GET_RANDOM);
        assert!(again.is_err(), "the late answer was taken for the next command's: {again:?}");
        drop(link);
        let sent = after.recv().unwrap();
        assert!(sent.is_empty(), "{} more bytes went over the failed connection", sent.len());
    }

    #[test]
    fn an_oversized_answer_ends_the_connection() {
        let (location, after) = fake::serve(|s, _| {
            let _ = s.write_all(&(MAX_RESPONSE as u32 + 1).to_be_bytes());
            let _ = s.write_all(&[0; 64]);
        });
        let mut link = Link::open(&location).unwrap();
        assert!(matches!(link.transact(&GET_RANDOM), Err(TpmError::Protocol(_))));
        assert!(link.transact(&GET_RANDOM).is_err());
        drop(link);
        assert!(after.recv().unwrap().is_empty(), "nothing more is sent on it");
    }
}
