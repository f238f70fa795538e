//! An output's space, reserved before it is written, and windows of it mapped for the workers
//! that write a file from many threads (`stream::positional`).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

/// Sets `file`'s length to `len`, reserving its blocks where the filesystem can (Linux
/// `fallocate`: tmpfs, ext4, XFS, btrfs), so that a full disk is one `ENOSPC` here, before any
/// byte is written, and never a `SIGBUS` in a mapped window. Returns whether the blocks are
/// reserved; where they are not (no `fallocate`: ZFS, NFS v3, FUSE, the other Unix systems)
/// the file is only extended, and its writes are not mapped.
pub(crate) fn reserve(file: &File, len: u64) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        let Ok(n) = libc::off_t::try_from(len) else {
            return Err(io::Error::from_raw_os_error(libc::EFBIG));
        };
        // SAFETY: fallocate reads no memory of ours; the descriptor is open for the call.
        let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, n) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL)) {
            return Err(e);
        }
    }
    file.set_len(len)?;
    Ok(false)
}

/// Fails with "No space left on device" where the filesystem holding `file` has fewer than
/// `len` bytes free for this user: the up-front error of a full disk where the space is not
/// reserved. A check, not a reservation (another writer may take the space meanwhile; the
/// write then fails with the same error, and the caller discards its output).
pub(crate) fn check_space(file: &File, len: u64) -> io::Result<()> {
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: fstatvfs fills the struct it is given (checked by its result before it is read);
    // the descriptor is open for the call.
    if unsafe { libc::fstatvfs(file.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Ok(()); // no answer (some FUSE filesystems): the writes will say
    }
    // SAFETY: fstatvfs returned 0, so it initialised the struct.
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)] // narrower than u64 on some systems
    let free = (st.f_bavail as u64).saturating_mul(st.f_frsize as u64);
    match free < len && st.f_blocks > 0 {
        true => Err(io::Error::from_raw_os_error(libc::ENOSPC)),
        false => Ok(()),
    }
}

/// Positional reads and writes that many threads make on one file at once (Unix's `pread` and
/// `pwrite` never use the file position).
pub(crate) fn pread(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buf, offset)
}

pub(crate) fn pwrite(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    file.write_at(buf, offset)
}

/// A writable shared mapping of `len` bytes of a file from `offset`, unmapped when dropped. Only
/// of a file whose blocks [`reserve`] reserved and that no other program can shorten (an
/// unnamed temporary): a store to a page past the end of the file would raise `SIGBUS`.
pub(crate) struct Window {
    base: *mut u8,
    map_len: usize,
    /// Where `offset` falls in the mapping (mappings start on a page boundary).
    skew: usize,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone (as a `Vec`'s buffer is); nothing in it is
// tied to the thread that made it.
unsafe impl Send for Window {}

impl Window {
    pub(crate) fn map(file: &File, offset: u64, len: usize) -> io::Result<Window> {
        let page = page_size();
        let skew = (offset % page as u64) as usize;
        let map_len = skew + len;
        if len == 0 {
            return Ok(Window { base: std::ptr::NonNull::dangling().as_ptr(), map_len: 0, skew: 0, len: 0 });
        }
        let start = libc::off_t::try_from(offset - skew as u64)
            .map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
        // SAFETY: a new mapping at an address of the kernel's choosing, of a descriptor open for
        // the call; no existing memory is touched. The result is checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                start,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Window { base: p.cast(), map_len, skew, len })
    }

    /// The mapped bytes, `len` of them from the offset given.
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: `base..base + map_len` is a live mapping owned by `self` (see `map`), readable
        // and writable; the slice borrows `self` mutably, so it cannot outlive the mapping or
        // alias another slice of it. The file's blocks cover it (the caller reserved them).
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.skew), self.len) }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        if self.map_len > 0 {
            // SAFETY: unmaps exactly the mapping `map` made, once; no slice of it outlives
            // `self` (see `bytes`).
            unsafe { libc::munmap(self.base.cast(), self.map_len) };
        }
    }
}

fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *PAGE.get_or_init(|| usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096))
}

/// Mapped writes exist on this system.
pub(crate) const MAPPED_WRITES: bool = true;
