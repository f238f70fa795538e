//! Where the TPM is, and how a command reaches it: the kernel's resource manager
//! (`/dev/tpmrm0`: write one command, read one response) or a simulator's socket (swtpm and the
//! Microsoft simulator speak the "mssim" TCP protocol). Every read and write has a deadline, and
//! no response longer than [`MAX_RESPONSE`] is read.
//!
//! Locations are spelled as tpm2-tools spells its TCTI: `device:/dev/tpmrm0`,
//! `swtpm:host=127.0.0.1,port=2321`, `mssim:host=…,port=…`. This module reads no environment
//! variable: the caller passes the location (the CLI reads `TPM2TOOLS_TCTI` and `TCTI`).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

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
}

impl Location {
    /// Parses a tpm2-tools TCTI string; empty means the default device.
    pub fn parse(s: &str) -> Result<Self, TpmError> {
        let bad = |why: &str| TpmError::Protocol(format!("TPM location {s:?}: {why}"));
        let (kind, conf) = s.split_once(':').unwrap_or((s, ""));
        match kind {
            "" => Ok(Location::Device(DEFAULT_DEVICE.into())),
            "device" => {
                Ok(Location::Device(if conf.is_empty() { DEFAULT_DEVICE.into() } else { conf.into() }))
            }
            "swtpm" | "mssim" => {
                let (mut host, mut port) = ("127.0.0.1".to_string(), 2321u16);
                for kv in conf.split(',').filter(|kv| !kv.is_empty()) {
                    match kv.split_once('=') {
                        Some(("host", h)) => host = h.into(),
                        Some(("port", p)) => port = p.parse().map_err(|_| bad("port is not a number"))?,
                        _ => return Err(bad("expected host=…,port=…")),
                    }
                }
                Ok(Location::Socket { host, port })
            }
            _ => Err(bad("expected device:PATH, swtpm:host=…,port=… or mssim:host=…,port=…")),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Device(p) => f.write_str(p),
            Location::Socket { host, port } => write!(f, "swtpm:host={host},port={port}"),
        }
    }
}

/// An open connection to a TPM.
pub(crate) enum Link {
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

impl Link {
    pub(crate) fn open(location: &Location) -> Result<Self, TpmError> {
        match location {
            Location::Device(path) => std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map(Link::Device)
                .map_err(|e| unreachable(location, &e)),
            Location::Socket { host, port } => {
                let addr = (host.as_str(), *port)
                    .to_socket_addrs()
                    .map_err(|e| unreachable(location, &e))?
                    .next()
                    .ok_or_else(|| TpmError::Protocol(format!("{host} has no address")))?;
                let s = TcpStream::connect_timeout(&addr, DEADLINE).map_err(|e| unreachable(location, &e))?;
                s.set_read_timeout(Some(DEADLINE)).and_then(|_| s.set_write_timeout(Some(DEADLINE))).ok();
                s.set_nodelay(true).ok();
                Ok(Link::Socket(s))
            }
        }
    }

    /// Sends one command and returns its whole response.
    pub(crate) fn transact(&mut self, command: &[u8]) -> Result<Vec<u8>, TpmError> {
        let io = |e: std::io::Error| {
            if timed_out(&e) {
                TpmError::Timeout("a command".into())
            } else {
                TpmError::Protocol(format!("talking to the TPM: {e}"))
            }
        };
        match self {
            Link::Device(f) => {
                f.write_all(command).map_err(io)?;
                wait_readable(f)?;
                // The kernel hands over one whole response per read.
                let mut buf = vec![0u8; MAX_RESPONSE];
                let n = f.read(&mut buf).map_err(io)?;
                buf.truncate(n);
                Ok(buf)
            }
            Link::Socket(s) => {
                let mut frame = zeroize::Zeroizing::new(Vec::with_capacity(command.len() + 9));
                frame.extend_from_slice(&TPM_SEND_COMMAND.to_be_bytes());
                frame.push(0); // locality 0
                frame.extend_from_slice(&(command.len() as u32).to_be_bytes());
                frame.extend_from_slice(command);
                s.write_all(&frame).map_err(io)?;
                let len = read_u32(s).map_err(io)? as usize;
                if len > MAX_RESPONSE {
                    return Err(TpmError::Protocol(format!("the TPM announced a {len}-byte answer")));
                }
                let mut buf = vec![0u8; len];
                s.read_exact(&mut buf).map_err(io)?;
                let _ack = read_u32(s).map_err(io)?;
                Ok(buf)
            }
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Link::Socket(s) = self {
            let _ = s.write_all(&TPM_SESSION_END.to_be_bytes());
        }
    }
}

fn read_u32(s: &mut TcpStream) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

/// Waits until the device has a response, at most [`DEADLINE`].
#[cfg(unix)]
fn wait_readable(f: &std::fs::File) -> Result<(), TpmError> {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd { fd: f.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ms = DEADLINE.as_millis() as libc::c_int;
    // SAFETY: one valid pollfd for the duration of the call; the file outlives it.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    match n {
        1.. => Ok(()),
        0 => Err(TpmError::Timeout("a command".into())),
        _ => Err(TpmError::Protocol(format!("waiting for the TPM: {}", std::io::Error::last_os_error()))),
    }
}

/// Windows has no TPM character device (its TPM is reached through TBS, which this crate does
/// not speak): opening one fails first, so this is never reached there.
#[cfg(not(unix))]
fn wait_readable(_: &std::fs::File) -> Result<(), TpmError> {
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
        assert!(Location::parse("swtpm:port=x").is_err());
        assert!(Location::parse("tabrmd:bus_name=com.intel.tss2.Tabrmd").is_err());
    }

    #[test]
    fn a_missing_device_is_unreachable_not_a_protocol_error() {
        let e = Link::open(&Location::Device("/nonexistent/tpmrm0".into())).err().unwrap();
        assert!(matches!(e, TpmError::Unreachable { denied: false, .. }), "{e:?}");
    }
}
