//! The agent's named pipe on Windows. Every instance is created with a DACL that admits this
//! user's SID alone (`D:P(A;;GA;;;<SID>)`: protected, so nothing is inherited) and refuses
//! remote clients (`PIPE_REJECT_REMOTE_CLIENTS`); the first with `FILE_FLAG_FIRST_PIPE_INSTANCE`,
//! so the agent fails rather than join a pipe someone else made under its name, and one unused
//! instance is always kept, so the name is never free for another user to take between
//! connections. Each end also asks the kernel which process holds the other end and checks
//! that process's user: a client opens no pipe held by another user.
//!
//! All I/O is overlapped, so every read, write and wait for a client has a deadline (synchronous
//! pipe I/O has none) and a connection can be ended from another thread ([`Pipe::close`]).

#![allow(unsafe_code)] // the Win32 pipe, token and security-descriptor calls: no safe wrappers

use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use windows_sys::Win32::Foundation::{
    GetLastError, LocalFree, ERROR_BROKEN_PIPE, ERROR_IO_PENDING, ERROR_NO_DATA, ERROR_OPERATION_ABORTED,
    ERROR_PIPE_BUSY, ERROR_PIPE_CONNECTED, ERROR_PIPE_NOT_CONNECTED, GENERIC_READ, GENERIC_WRITE, HANDLE,
    INVALID_HANDLE_VALUE, WAIT_OBJECT_0,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetLengthSid, GetTokenInformation, TokenUser, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, ReadFile, WriteFile, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED, OPEN_EXISTING,
    PIPE_ACCESS_DUPLEX, SECURITY_IDENTIFICATION, SECURITY_SQOS_PRESENT,
};
use windows_sys::Win32::System::Pipes::{
    ConnectNamedPipe, CreateNamedPipeW, DisconnectNamedPipe, GetNamedPipeClientProcessId,
    GetNamedPipeServerProcessId, PeekNamedPipe, WaitNamedPipeW, PIPE_READMODE_BYTE,
    PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_UNLIMITED_INSTANCES, PIPE_WAIT,
};
use windows_sys::Win32::System::Threading::{
    CreateEventW, GetCurrentProcess, OpenProcess, OpenProcessToken, WaitForSingleObject, INFINITE,
    PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows_sys::Win32::System::IO::{CancelIoEx, GetOverlappedResult, OVERLAPPED};

/// The pipe's buffers each way: a small request or answer passes in one write.
const BUFFER: u32 = 64 << 10;

/// The agent's pipe name for this user: `\\.\pipe\hyperseal-agent-<SID>`.
pub fn default_name() -> io::Result<PathBuf> {
    Ok(PathBuf::from(format!(r"\\.\pipe\hyperseal-agent-{}", sid_string(&process_sid(None)?)?)))
}

/// Which end of a pipe a check is about.
#[derive(Clone, Copy, Debug)]
pub(crate) enum End {
    Client,
    Server,
}

/// One end of a connected pipe instance.
#[derive(Debug)]
pub(crate) struct Pipe {
    handle: OwnedHandle,
    /// Set by [`Pipe::close`]: later I/O fails at once.
    closed: AtomicBool,
}

impl Pipe {
    /// Opens the pipe `path` (waiting for a free instance until `deadline`) and checks that
    /// the process serving it runs as this user.
    pub(crate) fn connect(path: &Path, deadline: Instant) -> io::Result<Pipe> {
        // Anything else would be opened as a file (and then refused as no agent's pipe).
        if !path.as_os_str().to_string_lossy().to_ascii_lowercase().starts_with(r"\\.\pipe\") {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, r"not a named pipe (\\.\pipe\…)"));
        }
        let name = wide(path.as_os_str());
        loop {
            // SAFETY: `name` is NUL-terminated; the other arguments are plain values.
            let h = unsafe {
                CreateFileW(
                    name.as_ptr(),
                    GENERIC_READ | GENERIC_WRITE,
                    0,
                    std::ptr::null(),
                    OPEN_EXISTING,
                    // The agent may identify this client, never act as it.
                    FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
                    std::ptr::null_mut(),
                )
            };
            if h != INVALID_HANDLE_VALUE {
                // SAFETY: `h` is a fresh handle owned by nothing else.
                let pipe = Pipe {
                    handle: unsafe { OwnedHandle::from_raw_handle(h) },
                    closed: AtomicBool::new(false),
                };
                if !pipe.peer_is_same_user(End::Server) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        "the pipe is held by another user's process",
                    ));
                }
                return Ok(pipe);
            }
            // SAFETY: no arguments.
            let err = unsafe { GetLastError() };
            let left = millis_left(deadline);
            if err != ERROR_PIPE_BUSY || left == 0 {
                return Err(io::Error::from_raw_os_error(err as i32));
            }
            // SAFETY: `name` is NUL-terminated. Failing (the pipe gone) is seen by the next open.
            unsafe { WaitNamedPipeW(name.as_ptr(), left.min(100)) };
        }
    }

    fn raw(&self) -> HANDLE {
        self.handle.as_raw_handle() as HANDLE
    }

    /// Reads what comes, until `deadline`; `Ok(0)` when the other end is gone.
    pub(crate) fn read(&self, buf: &mut [u8], deadline: Option<Instant>) -> io::Result<usize> {
        let len = buf.len().min(u32::MAX as usize) as u32;
        let ptr = buf.as_mut_ptr();
        // SAFETY: `buf` outlives the operation: `overlapped` waits for it to end, cancelled or not.
        match self
            .overlapped(deadline, |ov| unsafe { ReadFile(self.raw(), ptr, len, std::ptr::null_mut(), ov) })
        {
            Err(e) if is_gone(&e) => Ok(0),
            other => other,
        }
    }

    /// Writes some of `buf`, until `deadline`.
    pub(crate) fn write(&self, buf: &[u8], deadline: Option<Instant>) -> io::Result<usize> {
        let len = buf.len().min(u32::MAX as usize) as u32;
        let ptr = buf.as_ptr();
        // SAFETY: as in `read`.
        match self
            .overlapped(deadline, |ov| unsafe { WriteFile(self.raw(), ptr, len, std::ptr::null_mut(), ov) })
        {
            Err(e) if is_gone(&e) => Err(io::ErrorKind::BrokenPipe.into()),
            other => other,
        }
    }

    /// Reads what has arrived, without waiting.
    pub(crate) fn read_arrived(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let mut avail = 0u32;
            // SAFETY: only the count is asked for; `avail` is valid for writes.
            let ok = unsafe {
                PeekNamedPipe(
                    self.raw(),
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                    &mut avail,
                    std::ptr::null_mut(),
                )
            };
            if ok == 0 || avail == 0 {
                break;
            }
            let want = (avail as usize).min(buf.len() - n);
            match self
                .read(&mut buf[n..n + want], Some(Instant::now() + std::time::Duration::from_millis(100)))
            {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k,
            }
        }
        Ok(n)
    }

    /// Ends the connection from any thread: waiting I/O is cancelled, later I/O fails.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        // SAFETY: the handle is open while `self` lives; cancelling I/O that is not there and
        // disconnecting a client's end are harmless.
        unsafe {
            CancelIoEx(self.raw(), std::ptr::null());
            DisconnectNamedPipe(self.raw());
        }
    }

    /// Whether the process at `end` runs as this process's user.
    pub(crate) fn peer_is_same_user(&self, end: End) -> bool {
        let mut pid = 0u32;
        // SAFETY: `pid` is valid for writes; the handle is open.
        let ok = unsafe {
            match end {
                End::Client => GetNamedPipeClientProcessId(self.raw(), &mut pid),
                End::Server => GetNamedPipeServerProcessId(self.raw(), &mut pid),
            }
        };
        if ok == 0 {
            return false;
        }
        match (process_sid(Some(pid)), process_sid(None)) {
            (Ok(peer), Ok(me)) => peer == me,
            _ => false,
        }
    }

    /// Starts one overlapped operation and waits for its end until `deadline` (then cancels
    /// it, waits for the cancellation, and fails with `TimedOut`).
    fn overlapped(
        &self,
        deadline: Option<Instant>,
        start: impl FnOnce(*mut OVERLAPPED) -> i32,
    ) -> io::Result<usize> {
        overlapped_on(self.raw(), &self.closed, deadline, start)
    }
}

fn overlapped_on(
    h: HANDLE,
    closed: &AtomicBool,
    deadline: Option<Instant>,
    start: impl FnOnce(*mut OVERLAPPED) -> i32,
) -> io::Result<usize> {
    if closed.load(Ordering::SeqCst) {
        return Err(io::ErrorKind::BrokenPipe.into());
    }
    let event = Event::new()?;
    // SAFETY: OVERLAPPED is plain data; all zeroes with an event is how it starts.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    ov.hEvent = event.raw();
    if start(&mut ov) == 0 {
        // SAFETY: no arguments.
        let err = unsafe { GetLastError() };
        if err != ERROR_IO_PENDING {
            return Err(io::Error::from_raw_os_error(err as i32));
        }
        let ms = deadline.map_or(INFINITE, millis_left);
        // SAFETY: the event is open.
        if unsafe { WaitForSingleObject(event.raw(), ms) } != WAIT_OBJECT_0 {
            let mut n = 0u32;
            // SAFETY: `ov` is the operation's; waiting for its end keeps `ov` and the buffer
            // alive until the kernel is done with them.
            unsafe {
                CancelIoEx(h, &ov);
                GetOverlappedResult(h, &ov, &mut n, 1);
            }
            return Err(io::ErrorKind::TimedOut.into());
        }
    }
    let mut n = 0u32;
    // SAFETY: the operation has ended (its event is set).
    if unsafe { GetOverlappedResult(h, &ov, &mut n, 1) } == 0 {
        // SAFETY: no arguments.
        let err = unsafe { GetLastError() };
        if err == ERROR_OPERATION_ABORTED && closed.load(Ordering::SeqCst) {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        return Err(io::Error::from_raw_os_error(err as i32));
    }
    Ok(n as usize)
}

fn is_gone(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(|c| c as u32),
        Some(ERROR_BROKEN_PIPE | ERROR_PIPE_NOT_CONNECTED | ERROR_NO_DATA)
    )
}

/// The agent's end: the pipe name, its security descriptor, and the next instance waiting.
#[derive(Debug)]
pub(crate) struct Listener {
    name: Vec<u16>,
    descriptor: Descriptor,
    next: Option<OwnedHandle>,
}

impl Listener {
    /// Creates the first instance of the pipe `path`; fails if the name exists.
    pub(crate) fn bind(path: &Path) -> io::Result<Listener> {
        let sid = sid_string(&process_sid(None)?)?;
        let descriptor = Descriptor::new(&format!("D:P(A;;GA;;;{sid})"))?;
        let mut l = Listener { name: wide(path.as_os_str()), descriptor, next: None };
        l.next = Some(l.instance(true)?);
        Ok(l)
    }

    fn instance(&self, first: bool) -> io::Result<OwnedHandle> {
        let sa = SECURITY_ATTRIBUTES {
            nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: self.descriptor.0,
            bInheritHandle: 0,
        };
        let first = if first { FILE_FLAG_FIRST_PIPE_INSTANCE } else { 0 };
        // SAFETY: `name` is NUL-terminated, `sa` and its descriptor outlive the call.
        let h = unsafe {
            CreateNamedPipeW(
                self.name.as_ptr(),
                PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | first,
                PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                PIPE_UNLIMITED_INSTANCES,
                BUFFER,
                BUFFER,
                0,
                &sa,
            )
        };
        if h == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh handle owned by nothing else.
        Ok(unsafe { OwnedHandle::from_raw_handle(h) })
    }

    /// Waits for a client on the waiting instance; makes the next one before handing it out.
    pub(crate) fn accept(&mut self) -> io::Result<Pipe> {
        let h = match self.next.take() {
            Some(h) => h,
            None => self.instance(false)?,
        };
        let raw = h.as_raw_handle() as HANDLE;
        let never = AtomicBool::new(false);
        // SAFETY: `ov` lives until the wait ends (no deadline: it ends with a client).
        let connected = overlapped_on(raw, &never, None, |ov| unsafe { ConnectNamedPipe(raw, ov) });
        let connected = match connected {
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_CONNECTED as i32) => Ok(0),
            other => other,
        };
        self.next = Some(self.instance(false)?);
        connected.map(|_| Pipe { handle: h, closed: AtomicBool::new(false) })
    }
}

/// A security descriptor made from SDDL, freed with `LocalFree`.
#[derive(Debug)]
struct Descriptor(*mut core::ffi::c_void);

// SAFETY: the descriptor is immutable after creation and only read by the kernel.
unsafe impl Send for Descriptor {}
unsafe impl Sync for Descriptor {}

impl Descriptor {
    fn new(sddl: &str) -> io::Result<Descriptor> {
        let text = wide(OsStr::new(sddl));
        let mut sd = std::ptr::null_mut();
        // SAFETY: `text` is NUL-terminated; `sd` is valid for writes.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                text.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            )
        };
        match ok {
            0 => Err(io::Error::last_os_error()),
            _ => Ok(Descriptor(sd)),
        }
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(self.0) };
    }
}

/// A manual-reset event for one overlapped operation.
struct Event(OwnedHandle);

impl Event {
    fn new() -> io::Result<Event> {
        // SAFETY: no name, no attributes.
        let h = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
        if h.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh handle owned by nothing else.
        Ok(Event(unsafe { OwnedHandle::from_raw_handle(h) }))
    }

    fn raw(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }
}

/// The user SID (its bytes) of process `pid`, or of this process.
fn process_sid(pid: Option<u32>) -> io::Result<Vec<u8>> {
    let process = match pid {
        // SAFETY: plain values; the handle is checked and closed below.
        Some(pid) => match unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) } {
            h if h.is_null() => return Err(io::Error::last_os_error()),
            // SAFETY: a fresh handle owned by nothing else.
            h => Some(unsafe { OwnedHandle::from_raw_handle(h) }),
        },
        None => None,
    };
    // SAFETY: the pseudo-handle of this process needs no closing.
    let raw =
        process.as_ref().map_or_else(|| unsafe { GetCurrentProcess() }, |h| h.as_raw_handle() as HANDLE);
    let mut token = std::ptr::null_mut();
    // SAFETY: `token` is valid for writes.
    if unsafe { OpenProcessToken(raw, TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh handle owned by nothing else.
    let token = unsafe { OwnedHandle::from_raw_handle(token) };
    let mut buf = vec![0u64; 64]; // TOKEN_USER and its SID: 8-byte aligned, 512 bytes
    let mut len = 0u32;
    // SAFETY: `buf` is valid for writes of the size given.
    let ok = unsafe {
        GetTokenInformation(
            token.as_raw_handle() as HANDLE,
            TokenUser,
            buf.as_mut_ptr().cast(),
            (buf.len() * 8) as u32,
            &mut len,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: GetTokenInformation wrote a TOKEN_USER at the start of `buf`, whose SID points
    // into `buf`; GetLengthSid reads a valid SID.
    unsafe {
        let user = &*(buf.as_ptr() as *const TOKEN_USER);
        let sid = user.User.Sid;
        let n = GetLengthSid(sid) as usize;
        Ok(std::slice::from_raw_parts(sid as *const u8, n).to_vec())
    }
}

/// A SID's text form (`S-1-5-21-…`).
fn sid_string(sid: &[u8]) -> io::Result<String> {
    let mut text = std::ptr::null_mut();
    // SAFETY: `sid` holds a whole SID (from `process_sid`); `text` is valid for writes.
    if unsafe { ConvertSidToStringSidW(sid.as_ptr() as *mut _, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `text` is a NUL-terminated string from the call above, freed with LocalFree.
    unsafe {
        let len = (0..).take_while(|&i| *text.add(i) != 0).count();
        let s = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
        LocalFree(text.cast());
        Ok(s)
    }
}

fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(Some(0)).collect()
}

fn millis_left(deadline: Instant) -> u32 {
    let left = deadline.saturating_duration_since(Instant::now()).as_millis();
    left.min(u128::from(INFINITE - 1)) as u32
}
