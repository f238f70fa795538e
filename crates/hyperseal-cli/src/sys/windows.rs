//! The CLI's Windows side: the console (`CONIN$`/`CONOUT$`, as age opens it there), echo off
//! through the console mode, standard input's metadata, private key files.

#![allow(unsafe_code)] // Console mode and control-handler calls: no safe wrappers exist.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::windows::io::{AsHandle, AsRawHandle, RawHandle};
use std::path::Path;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    GetConsoleMode, SetConsoleCtrlHandler, SetConsoleMode, CONSOLE_MODE, ENABLE_ECHO_INPUT,
    ENABLE_LINE_INPUT, ENABLE_PROCESSED_INPUT,
};

/// Windows has no SIGPIPE: a write to a closed pipe (`hyperseal … | more` quit early) fails.
/// Errors the CLI returns are reported quietly (`errors::report`); the standard library's
/// `println!` panics instead, so this one panic ends the process as quietly as SIGPIPE does on
/// Unix, with the same status. Every other panic goes to the default hook.
pub fn die_on_sigpipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg =
            payload.downcast_ref::<String>().map(String::as_str).or(payload.downcast_ref::<&str>().copied());
        // ERROR_BROKEN_PIPE, ERROR_NO_DATA (a pipe being closed), ERROR_PIPE_NOT_CONNECTED.
        let closed = ["(os error 109)", "(os error 232)", "(os error 233)"];
        if msg.is_some_and(|m| {
            m.starts_with("failed printing to stdout") && closed.iter().any(|c| m.contains(c))
        }) {
            std::process::exit(i32::from(super::BROKEN_PIPE));
        }
        default(info)
    }));
}

/// Whether a write failed because the pipe's reader went away: ERROR_BROKEN_PIPE and
/// ERROR_NO_DATA (the standard library's `BrokenPipe`), and ERROR_PIPE_NOT_CONNECTED, which Wine
/// gives for the same event.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe || e.raw_os_error() == Some(233)
}

/// Standard input's metadata (`< f` makes it a file), through a duplicate of its handle.
pub fn stdin_metadata() -> Option<std::fs::Metadata> {
    io::stdin().as_handle().try_clone_to_owned().ok().and_then(|h| File::from(h).metadata().ok())
}

/// A new file (never an existing one) for a private key. Windows has no mode bits: the file
/// gets the ACL its directory passes on (in the user's profile: the user, SYSTEM and
/// Administrators), as age's key files do there. Documented in the README's Windows notes.
pub fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// The console: input from `CONIN$`, prompts to `CONOUT$`, whatever the standard streams are
/// redirected to.
pub(crate) struct Tty {
    input: File,
    output: File,
}

impl Tty {
    pub(crate) fn open() -> io::Result<Tty> {
        let open = |name: &str| OpenOptions::new().read(true).write(true).open(name);
        match (open("CONIN$"), open("CONOUT$")) {
            (Ok(input), Ok(output)) => Ok(Tty { input, output }),
            (Err(e), _) | (_, Err(e)) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no console to ask on (CONIN$/CONOUT$): {}", super::reason(&e)),
            )),
        }
    }

    pub(crate) fn write_all(&self, b: &[u8]) -> io::Result<()> {
        (&self.output).write_all(b)
    }

    /// One byte; `None` at end of input (Ctrl-Z, Enter).
    pub(crate) fn read_byte(&self) -> io::Result<Option<u8>> {
        let mut b = [0u8; 1];
        loop {
            match (&self.input).read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) if b[0] == 0x1a => return Ok(None),
                Ok(_) => return Ok(Some(b[0])),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// A new line, then cursor up and erase the line (the console understands VT sequences
    /// since Windows 10).
    pub(crate) fn clear_line(&self) {
        let _ = self.write_all(b"\r\n\x1b[F\x1b[K");
    }
}

/// The console input handle and mode to put back; read by the control handler.
static HANDLE: AtomicPtr<std::ffi::c_void> = AtomicPtr::new(std::ptr::null_mut());
static MODE: AtomicU32 = AtomicU32::new(0);

/// Echo off on the console input until dropped. Ctrl-C, Ctrl-Break and closing the console
/// run [`restore`] first (a control handler installed for the prompt only), then the default
/// action ends the process: the console is never left without echo.
pub(crate) struct NoEcho {
    handle: RawHandle,
    old: CONSOLE_MODE,
}

impl NoEcho {
    pub(crate) fn new(tty: &Tty, _prompt: &[u8]) -> io::Result<NoEcho> {
        let handle = tty.input.as_raw_handle();
        let mut old: CONSOLE_MODE = 0;
        // SAFETY: the handle is open for the call; the mode is written into a local.
        if unsafe { GetConsoleMode(handle, &mut old) } == 0 {
            return Err(io::Error::last_os_error());
        }
        HANDLE.store(handle, Ordering::SeqCst);
        MODE.store(old, Ordering::SeqCst);
        // SAFETY: a valid handler function for the life of the process.
        unsafe { SetConsoleCtrlHandler(Some(restore), 1) };
        let quiet = (old & !ENABLE_ECHO_INPUT) | ENABLE_LINE_INPUT | ENABLE_PROCESSED_INPUT;
        // SAFETY: as for GetConsoleMode.
        if unsafe { SetConsoleMode(handle, quiet) } == 0 {
            let e = io::Error::last_os_error();
            // SAFETY: removes the handler added above.
            unsafe { SetConsoleCtrlHandler(Some(restore), 0) };
            return Err(e);
        }
        Ok(NoEcho { handle, old })
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        // SAFETY: the handle is the console input `Tty` keeps open; the handler is ours.
        unsafe {
            SetConsoleMode(self.handle, self.old);
            SetConsoleCtrlHandler(Some(restore), 0);
        }
    }
}

/// The control handler: puts the console mode back and lets the next handler (by default,
/// the end of the process) act.
unsafe extern "system" fn restore(_event: u32) -> BOOL {
    let handle = HANDLE.load(Ordering::SeqCst);
    if !handle.is_null() {
        // SAFETY: the handle was stored while open and a prompt is in progress.
        unsafe { SetConsoleMode(handle, MODE.load(Ordering::SeqCst)) };
    }
    0
}

/// Keeps this process's standard handles out of the processes it starts. Windows passes every
/// inheritable handle on, whatever the child's own standard handles are: the agent started in
/// the background would otherwise hold the caller's pipe open, and `… | Invoke-Expression`
/// would wait for it to end.
pub fn keep_std_handles() {
    use windows_sys::Win32::Foundation::{SetHandleInformation, HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Console::{
        GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
    };
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: plain values; a handle that is not there is skipped, and clearing the flag of
        // one that is changes nothing but its inheritance.
        unsafe {
            let h = GetStdHandle(which);
            if !h.is_null() && h != INVALID_HANDLE_VALUE {
                SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
}
