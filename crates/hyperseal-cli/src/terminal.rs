//! The terminal: the one place the CLI talks to the person at the keyboard. Prompts and
//! passphrases go through the controlling terminal (`/dev/tty`) whenever there is one, whatever
//! stdin, stdout and stderr are redirected to, as age does; without one, a terminal on stdin is
//! used; only with neither does a prompt fail. Passphrases are read with echo off, and the
//! terminal's settings are put back on every way out: normal return, error, and the signals a
//! user sends from the keyboard or a session end (SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP is
//! left alone as it does not end the process), after which the signal is delivered again with
//! its default action, so the exit status is the one the shell expects.
//!
//! Prompts are ephemeral, as age's: after the answer the prompt line is erased (a new line, then
//! "cursor up, erase line"), so the screen keeps no trace of what was asked.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use zeroize::Zeroizing;

/// The longest line read from the terminal (a passphrase, a plugin's answer): 64 KiB.
const MAX_LINE: usize = 64 << 10;

/// Where prompts go and answers come from.
enum Tty {
    /// The controlling terminal, opened read-write.
    Controlling(File),
    /// Standard input, a terminal, used for both directions (as age does without `/dev/tty`).
    Stdin,
}

impl Tty {
    /// `/dev/tty`, else a terminal on stdin, else an error saying both are missing.
    fn open() -> io::Result<Tty> {
        match OpenOptions::new().read(true).write(true).open("/dev/tty") {
            Ok(f) => Ok(Tty::Controlling(f)),
            Err(_) if io::stdin().is_terminal() => Ok(Tty::Stdin),
            Err(e) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "standard input is not a terminal, and /dev/tty is not available: {}",
                    crate::io::reason(&e)
                ),
            )),
        }
    }

    fn fd(&self) -> RawFd {
        match self {
            Tty::Controlling(f) => f.as_raw_fd(),
            Tty::Stdin => 0,
        }
    }

    fn write_all(&self, mut b: &[u8]) -> io::Result<()> {
        while !b.is_empty() {
            // SAFETY: writes from a live slice to a descriptor we hold (fd 0 stays open).
            let n = unsafe { libc::write(self.fd(), b.as_ptr().cast(), b.len()) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            b = &b[n as usize..];
        }
        Ok(())
    }

    /// One byte; `None` at end of input.
    fn read_byte(&self) -> io::Result<Option<u8>> {
        let mut b = [0u8; 1];
        loop {
            // SAFETY: reads at most one byte into a one-byte buffer from a descriptor we hold.
            let n = unsafe { libc::read(self.fd(), b.as_mut_ptr().cast(), 1) };
            match n {
                1 => return Ok(Some(b[0])),
                0 => return Ok(None),
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// "\r\n", then cursor up and erase the line: the prompt does not stay on the screen.
    fn clear_line(&self) {
        let _ = self.write_all(b"\r\n\x1b[F\x1b[K");
    }
}

/// The settings to put back, for the signal handler (which may only touch plain data).
static SAVED_FD: AtomicI32 = AtomicI32::new(-1);
/// A copy of the saved settings the handler can read without a lock.
static mut SAVED_RAW: std::mem::MaybeUninit<libc::termios> = std::mem::MaybeUninit::uninit();
static HANDLERS_SET: AtomicBool = AtomicBool::new(false);

const RESTORE_ON: [libc::c_int; 4] = [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn restore_and_reraise(sig: libc::c_int) {
    let fd = SAVED_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: tcsetattr, signal and raise are async-signal-safe; SAVED_RAW was written
        // before SAVED_FD was set (SeqCst), and is not written again while it is set.
        unsafe {
            libc::tcsetattr(fd, libc::TCSANOW, std::ptr::addr_of!(SAVED_RAW).cast());
        }
    }
    // SAFETY: as above; the default action then ends the process with this signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Echo off on `tty` until dropped; the old settings come back on drop and on the signals above.
struct NoEcho {
    fd: RawFd,
    old: libc::termios,
}

impl NoEcho {
    fn new(tty: &Tty) -> io::Result<NoEcho> {
        let fd = tty.fd();
        let mut old = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills the termios it is given on success, checked before use.
        if unsafe { libc::tcgetattr(fd, old.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: initialised by the successful tcgetattr above.
        let old = unsafe { old.assume_init() };
        // SAFETY: written only here, before SAVED_FD is published, with no handler reading it
        // (SAVED_FD is -1 until the store below).
        unsafe {
            std::ptr::addr_of_mut!(SAVED_RAW).write(std::mem::MaybeUninit::new(old));
        }
        SAVED_FD.store(fd, Ordering::SeqCst);
        if !HANDLERS_SET.swap(true, Ordering::SeqCst) {
            for sig in RESTORE_ON {
                // SAFETY: installs a handler that only calls async-signal-safe functions. A
                // signal that was ignored (nohup) stays ignored.
                unsafe {
                    let prev = libc::signal(
                        sig,
                        restore_and_reraise as extern "C" fn(libc::c_int) as libc::sighandler_t,
                    );
                    if prev == libc::SIG_IGN {
                        libc::signal(sig, libc::SIG_IGN);
                    }
                }
            }
        }
        let mut quiet = old;
        // As Go's term.ReadPassword: no echo, line mode and signals on, CR read as NL.
        quiet.c_lflag &= !libc::ECHO;
        quiet.c_lflag |= libc::ICANON | libc::ISIG;
        quiet.c_iflag |= libc::ICRNL;
        // SAFETY: sets the settings of a terminal descriptor from a valid termios.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) } != 0 {
            let e = io::Error::last_os_error();
            SAVED_FD.store(-1, Ordering::SeqCst);
            return Err(e);
        }
        Ok(NoEcho { fd, old })
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        // SAFETY: restores the settings read in `new` on the same descriptor.
        unsafe {
            libc::tcsetattr(self.fd, libc::TCSANOW, &self.old);
        }
        SAVED_FD.store(-1, Ordering::SeqCst);
    }
}

/// Reads one line (without its end), at most [`MAX_LINE`] bytes; backspace and DEL erase, as in
/// Go's `term.ReadPassword`. The end of input ends the line.
fn read_line(tty: &Tty) -> io::Result<Zeroizing<Vec<u8>>> {
    let mut line = Zeroizing::new(Vec::new());
    loop {
        match tty.read_byte()? {
            None if line.is_empty() => {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "no input from the terminal"))
            }
            None | Some(b'\n') => return Ok(line),
            Some(b'\r') => {}
            Some(8 | 127) => {
                line.pop();
            }
            Some(b) if line.len() < MAX_LINE => line.push(b),
            Some(_) => return Err(io::Error::new(io::ErrorKind::InvalidData, "line too long")),
        }
    }
}

/// Asks for a secret: `prompt` and a space on the terminal, the answer read with echo off.
/// The prompt is erased afterwards.
pub fn read_secret(prompt: &str) -> io::Result<Zeroizing<String>> {
    let tty = Tty::open()?;
    tty.write_all(format!("{prompt} ").as_bytes())?;
    let line = {
        let _quiet = NoEcho::new(&tty)?;
        read_line(&tty)
    };
    tty.clear_line();
    let line = line?;
    let text = std::str::from_utf8(&line)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the answer is not UTF-8"))?;
    Ok(Zeroizing::new(text.to_string()))
}

/// Asks for a value that may be seen (a plugin's public request): echo stays on.
pub fn read_public(prompt: &str) -> io::Result<String> {
    let tty = Tty::open()?;
    tty.write_all(format!("{prompt} ").as_bytes())?;
    let line = read_line(&tty);
    tty.clear_line();
    Ok(String::from_utf8_lossy(&line?).into_owned())
}

/// Prints one line on the terminal (not stderr): what must reach the person only, such as an
/// autogenerated passphrase.
pub fn print(line: &str) -> io::Result<()> {
    Tty::open()?.write_all(format!("{line}\n").as_bytes())
}

/// A passphrase of `groups` random groups of four letters and digits, 20 bits each from the
/// kernel's generator (6 groups: 120 bits). age draws ten words from its own list (110 bits);
/// the strength is the same or better, the shape differs (see the README's age section).
pub fn generate_passphrase(groups: usize) -> io::Result<Zeroizing<String>> {
    const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut bytes = Zeroizing::new(vec![0u8; groups * 4]);
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: getrandom writes at most the remaining length into the buffer.
        let n = unsafe { libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
            continue;
        }
        filled += n as usize;
    }
    let mut out = Zeroizing::new(String::with_capacity(groups * 5));
    for (i, group) in bytes.chunks(4).enumerate() {
        if i > 0 {
            out.push('-');
        }
        // 5 bits of each byte: 32 letters, no bias (256 is a multiple of 32).
        out.extend(group.iter().map(|b| ALPHABET[(b & 31) as usize] as char));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_passphrases_have_their_shape() {
        let p = generate_passphrase(6).unwrap();
        assert_eq!(p.len(), 29);
        assert!(p.split('-').all(|g| g.len() == 4 && g.bytes().all(|b| b.is_ascii_alphanumeric())));
        assert_ne!(*p, *generate_passphrase(6).unwrap());
    }
}
