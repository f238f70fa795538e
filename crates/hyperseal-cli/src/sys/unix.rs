//! The CLI's Unix side: the controlling terminal with termios, standard input's metadata,
//! SIGPIPE, private key files. The library's own OS seam is `hyperseal`'s `sys` module; this is
//! the little the command line adds (the terminal, mostly).

#![allow(unsafe_code)] // termios, signal handlers and raw reads/writes on the terminal.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Like coreutils, die of SIGPIPE when stdout's reader goes away (`hyperseal … | head`):
/// silently, status 141 in the shell. Rust starts programs with SIGPIPE ignored, which turns the
/// same event into an EPIPE error message. One syscall; nothing else is done at start-up.
pub fn die_on_sigpipe() {
    // SAFETY: restoring the default disposition of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Ignores SIGPIPE again (as Rust starts programs), for the long-running processes git starts
/// (`git filter-process`): a write to a pipe whose reader went away (git itself, or a helper
/// this process started) must fail with an error that is reported, not end the process
/// without a word in the middle of git's command.
pub fn ignore_sigpipe() {
    // SAFETY: setting the disposition of one signal to SIG_IGN; no handler runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Whether a write failed because the pipe's reader went away.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Standard input's metadata (`< f` makes it a file), through a duplicate of fd 0.
pub fn stdin_metadata() -> Option<std::fs::Metadata> {
    io::stdin().as_fd().try_clone_to_owned().ok().and_then(|fd| File::from(fd).metadata().ok())
}

/// A new file (never an existing one) readable and writable by its owner only: 0600.
pub fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

/// Where prompts go and answers come from.
pub(crate) enum Tty {
    /// The controlling terminal, opened read-write.
    Controlling(File),
    /// Standard input, a terminal, used for both directions (as age does without `/dev/tty`).
    Stdin,
}

impl Tty {
    /// `/dev/tty`, else a terminal on stdin, else an error saying both are missing.
    pub(crate) fn open() -> io::Result<Tty> {
        match OpenOptions::new().read(true).write(true).open("/dev/tty") {
            Ok(f) => Ok(Tty::Controlling(f)),
            Err(_) if io::stdin().is_terminal() => Ok(Tty::Stdin),
            Err(e) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "standard input is not a terminal, and /dev/tty is not available: {}",
                    super::reason(&e)
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

    pub(crate) fn write_all(&self, mut b: &[u8]) -> io::Result<()> {
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
    pub(crate) fn read_byte(&self) -> io::Result<Option<u8>> {
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
    pub(crate) fn clear_line(&self) {
        let _ = self.write_all(b"\r\n\x1b[F\x1b[K");
    }
}

/// Echo off on `tty` until dropped; the old settings come back on drop and on every signal
/// that ends or stops the process ([`signals`]).
pub(crate) struct NoEcho {
    fd: RawFd,
    old: libc::termios,
}

impl NoEcho {
    /// `prompt` is what was just shown: it is shown again when the process continues after a
    /// stop.
    pub(crate) fn new(tty: &Tty, prompt: &[u8]) -> io::Result<NoEcho> {
        let fd = tty.fd();
        let mut old = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills the termios it is given on success, checked before use.
        if unsafe { libc::tcgetattr(fd, old.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: initialised by the successful tcgetattr above.
        let old = unsafe { old.assume_init() };
        let mut quiet = old;
        // As Go's term.ReadPassword: no echo, line mode and signals on, CR read as NL.
        quiet.c_lflag &= !libc::ECHO;
        quiet.c_lflag |= libc::ICANON | libc::ISIG;
        quiet.c_iflag |= libc::ICRNL;
        signals::arm(fd, &old, &quiet, prompt);
        // SAFETY: sets the settings of a terminal descriptor from a valid termios.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) } != 0 {
            let e = io::Error::last_os_error();
            signals::disarm();
            return Err(e);
        }
        Ok(NoEcho { fd, old })
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        // The handlers go first, so none of them sets echo off again after the restore.
        signals::disarm();
        // SAFETY: restores the settings read in `new` on the same descriptor.
        unsafe {
            libc::tcsetattr(self.fd, libc::TCSANOW, &self.old);
        }
    }
}

/// The handlers that put the terminal back on the signals that end or stop the process. They
/// are installed for the time of one prompt only, and the dispositions found then come back
/// afterwards, so that what the rest of the program (or the output module, for its temporary
/// files) installed keeps working, and each handler passes the signal on to it.
///
/// A handler may only touch plain data: the settings, the prompt and the old dispositions are
/// written into statics before `FD` publishes them (SeqCst), and not written again until the
/// handlers are gone.
mod signals {
    use std::cell::UnsafeCell;
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

    /// The signals whose default action ends the process (SIGKILL cannot be caught).
    fn fatal() -> Vec<libc::c_int> {
        let mut v = vec![
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGILL,
            libc::SIGTRAP,
            libc::SIGABRT,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGUSR1,
            libc::SIGSEGV,
            libc::SIGUSR2,
            libc::SIGPIPE,
            libc::SIGALRM,
            libc::SIGTERM,
            libc::SIGXCPU,
            libc::SIGXFSZ,
            libc::SIGVTALRM,
            libc::SIGPROF,
            libc::SIGIO,
            libc::SIGSYS,
        ];
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            v.extend([libc::SIGSTKFLT, libc::SIGPWR]);
            v.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
        }
        v
    }

    /// Faults: sent by the kernel for an instruction, they come again when it runs again.
    const FAULTS: [libc::c_int; 5] = [libc::SIGILL, libc::SIGTRAP, libc::SIGBUS, libc::SIGFPE, libc::SIGSEGV];

    type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

    /// Signal numbers are below this on every Unix we build for (Linux: 64).
    const NSIG: usize = 65;
    const PROMPT: usize = 1024;

    struct Shared<T>(UnsafeCell<MaybeUninit<T>>);
    // SAFETY: written only while no handler of ours is installed (see the module's comment),
    // read by the handlers and by `disarm` after that.
    unsafe impl<T> Sync for Shared<T> {}

    impl<T: Copy> Shared<T> {
        const fn new() -> Self {
            Shared(UnsafeCell::new(MaybeUninit::zeroed()))
        }
        /// SAFETY: no handler that reads it may run (none installed).
        unsafe fn set(&self, v: T) {
            unsafe { (*self.0.get()).write(v) };
        }
        fn ptr(&self) -> *const T {
            self.0.get().cast()
        }
    }

    /// The terminal's descriptor while a prompt runs, else -1.
    static FD: AtomicI32 = AtomicI32::new(-1);
    static OLD: Shared<libc::termios> = Shared::new();
    static QUIET: Shared<libc::termios> = Shared::new();
    static PROMPT_TEXT: Shared<[u8; PROMPT]> = Shared::new();
    static PROMPT_LEN: AtomicUsize = AtomicUsize::new(0);
    #[allow(clippy::declare_interior_mutable_const)] // An array initialiser, copied once each.
    const NO_ACTION: Shared<libc::sigaction> = Shared::new();
    /// The disposition each signal had before the prompt.
    static BEFORE: [Shared<libc::sigaction>; NSIG] = [NO_ACTION; NSIG];
    #[allow(clippy::declare_interior_mutable_const)]
    const NOT_OURS: AtomicBool = AtomicBool::new(false);
    /// Which signals have our handler now.
    static OURS: [AtomicBool; NSIG] = [NOT_OURS; NSIG];

    /// Publishes the terminal's settings and installs the handlers.
    pub(super) fn arm(fd: libc::c_int, old: &libc::termios, quiet: &libc::termios, prompt: &[u8]) {
        let n = prompt.len().min(PROMPT);
        let mut text = [0u8; PROMPT];
        text[..n].copy_from_slice(&prompt[..n]);
        // SAFETY: no handler of ours is installed (the last prompt's `disarm` removed them).
        unsafe {
            OLD.set(*old);
            QUIET.set(*quiet);
            PROMPT_TEXT.set(text);
        }
        PROMPT_LEN.store(n, Ordering::SeqCst);
        FD.store(fd, Ordering::SeqCst);
        for sig in fatal() {
            install(sig, on_fatal);
        }
        install(libc::SIGTSTP, on_stop);
        install(libc::SIGCONT, on_continue);
    }

    /// Puts back the dispositions found by `arm`, and unpublishes the settings.
    pub(super) fn disarm() {
        for (sig, ours) in OURS.iter().enumerate() {
            if ours.swap(false, Ordering::SeqCst) {
                // SAFETY: BEFORE[sig] was filled by `install` before our handler went in.
                unsafe { libc::sigaction(sig as libc::c_int, BEFORE[sig].ptr(), std::ptr::null_mut()) };
            }
        }
        FD.store(-1, Ordering::SeqCst);
    }

    /// Installs `handler` for `sig` unless the signal is ignored (then it stays ignored).
    fn install(sig: libc::c_int, handler: Handler) {
        let i = sig as usize;
        if i >= NSIG || OURS[i].load(Ordering::SeqCst) {
            return;
        }
        // SAFETY: sigaction with a null new action only reads the current one into a zeroed,
        // properly sized struct.
        let before = unsafe {
            let mut before = MaybeUninit::<libc::sigaction>::zeroed();
            if libc::sigaction(sig, std::ptr::null(), before.as_mut_ptr()) != 0 {
                return;
            }
            before.assume_init()
        };
        if before.sa_sigaction == libc::SIG_IGN {
            return;
        }
        // SAFETY: our handler is not installed for `sig`, so nothing reads BEFORE[i] now. The
        // action is a zeroed sigaction with an `extern "C"` SA_SIGINFO handler that only makes
        // async-signal-safe calls; it runs on the alternate stack where there is one (a stack
        // overflow is a SIGSEGV).
        unsafe {
            BEFORE[i].set(before);
            let mut action: libc::sigaction = MaybeUninit::zeroed().assume_init();
            action.sa_sigaction = handler as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(sig, &action, std::ptr::null_mut()) == 0 {
                OURS[i].store(true, Ordering::SeqCst);
            }
        }
    }

    /// The settings from before the prompt, back on the terminal.
    fn restore_terminal() {
        let fd = FD.load(Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: tcsetattr is async-signal-safe; OLD was written before FD was published.
            unsafe { libc::tcsetattr(fd, libc::TCSANOW, OLD.ptr()) };
        }
    }

    /// A signal that ends the process: the terminal is put back, the signal's old disposition
    /// too, and the signal is delivered to it as soon as this returns. A fault is not sent
    /// again: the faulting instruction runs again and raises it.
    extern "C" fn on_fatal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        restore_terminal();
        let i = sig as usize;
        if i < NSIG && OURS[i].swap(false, Ordering::SeqCst) {
            // SAFETY: BEFORE[i] was written before our handler was installed for `sig`.
            unsafe { libc::sigaction(sig, BEFORE[i].ptr(), std::ptr::null_mut()) };
        }
        // SAFETY: `info` is the kernel's siginfo for this signal (SA_SIGINFO). A positive
        // si_code is the kernel's own; zero or below, a process sent it (kill, raise).
        let by_kernel = !info.is_null() && unsafe { (*info).si_code } > 0;
        if !(by_kernel && FAULTS.contains(&sig)) {
            // SAFETY: raise is async-signal-safe; the signal is blocked while this handler
            // runs, so it is delivered, to the old disposition, when the handler returns.
            unsafe { libc::raise(sig) };
        }
    }

    /// Ctrl-Z: the terminal is put back and the process stops (SIGTSTP's default action); it
    /// continues here after SIGCONT, whose handler has set echo off again and shown the prompt.
    extern "C" fn on_stop(sig: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
        restore_terminal();
        // SAFETY: sigaction, sigprocmask and raise are async-signal-safe; the structs are
        // zeroed locals, filled by the calls before use.
        unsafe {
            let mut dfl: libc::sigaction = MaybeUninit::zeroed().assume_init();
            dfl.sa_sigaction = libc::SIG_DFL;
            let mut ours = MaybeUninit::<libc::sigaction>::zeroed();
            libc::sigaction(sig, &dfl, ours.as_mut_ptr());
            let mut set = MaybeUninit::<libc::sigset_t>::zeroed();
            libc::sigemptyset(set.as_mut_ptr());
            libc::sigaddset(set.as_mut_ptr(), sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, set.as_ptr(), std::ptr::null_mut());
            libc::raise(sig);
            // Continued: our handler again, for the next Ctrl-Z.
            libc::sigaction(sig, ours.as_ptr(), std::ptr::null_mut());
        }
    }

    /// SIGCONT after a stop: echo off again and the prompt shown again.
    extern "C" fn on_continue(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
        let fd = FD.load(Ordering::SeqCst);
        if fd < 0 {
            return;
        }
        // SAFETY: tcsetattr and write are async-signal-safe; QUIET and the prompt were written
        // before FD was published, PROMPT_LEN is at most their size.
        unsafe {
            libc::tcsetattr(fd, libc::TCSANOW, QUIET.ptr());
            libc::write(fd, PROMPT_TEXT.ptr().cast(), PROMPT_LEN.load(Ordering::SeqCst));
        }
    }
}
