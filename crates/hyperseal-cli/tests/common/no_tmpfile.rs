//! A child process that sees the filesystems as FAT, older NFS or some FUSE mounts are: every
//! `open`/`openat` with `O_TMPFILE` fails with `EOPNOTSUPP`, the error those filesystems give.
//! hyperseal then writes its output through its named-temporary fallback, so the fault tests
//! reach that path in the very binary that ships (no test hook), with the kernel's own answer.
//!
//! A seccomp filter installed between `fork` and `exec`: it holds for the child and everything
//! it starts, and for nothing else. Other system calls, and `open` without `O_TMPFILE`, pass.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Whether [`deny`] works on this target (the filter names the architecture's system calls).
pub const AVAILABLE: bool =
    cfg!(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")));

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xc000_003e; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xc000_00b7; // AUDIT_ARCH_AARCH64
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: u32 = 0;

/// `__O_TMPFILE`, the bit `O_TMPFILE` adds to `O_DIRECTORY` (the same on both architectures).
const TMPFILE_BIT: u32 = 0o20_000_000;
/// Offsets in `struct seccomp_data`: the call's number, its architecture, then six 8-byte
/// arguments from offset 16 (the low half first on these little-endian targets).
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const fn arg(i: u32) -> u32 {
    16 + 8 * i
}

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JSET: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const NOT_SUPPORTED: u32 = libc::SECCOMP_RET_ERRNO | libc::EOPNOTSUPP as u32;

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter: `openat`'s flags are its third argument; x86-64's old `open` (its second)
/// is covered too, for a libc that still calls it.
fn program() -> Vec<libc::sock_filter> {
    #[cfg(target_arch = "x86_64")]
    let open = libc::SYS_open as u32;
    #[cfg(not(target_arch = "x86_64"))]
    let open = u32::MAX; // no such call: never matches
    vec![
        op(LD_W_ABS, 0, 0, ARCH_AT),
        op(JEQ, 0, 9, ARCH), // another architecture's call: allow
        op(LD_W_ABS, 0, 0, NR),
        op(JEQ, 2, 0, libc::SYS_openat as u32), // -> flags of openat
        op(JEQ, 3, 0, open),                    // -> flags of open
        op(RET, 0, 0, ALLOW),
        op(LD_W_ABS, 0, 0, arg(2)), // openat(dirfd, path, flags, mode)
        op(JSET, 2, 3, TMPFILE_BIT),
        op(LD_W_ABS, 0, 0, arg(1)), // open(path, flags, mode)
        op(JSET, 0, 1, TMPFILE_BIT),
        op(RET, 0, 0, NOT_SUPPORTED),
        op(RET, 0, 0, ALLOW),
    ]
}

/// Runs `cmd` (and all it starts) with `O_TMPFILE` refused. Panics where [`AVAILABLE`] is false.
pub fn deny(cmd: &mut Command) {
    if !AVAILABLE {
        panic!("no O_TMPFILE filter for this target");
    }
    let filter = program();
    // SAFETY: the closure runs in the forked child before exec and makes only two prctl(2)
    // calls, both async-signal-safe; `filter` is moved in and outlives them.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut _ };
            // Without no_new_privs an unprivileged process may not install a filter.
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog as *const _) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
}
