//! An output's space, checked before it is written, and the positional reads and writes of the
//! workers that write one file from many threads (`stream::positional`).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

/// Fails with "No space left on device" where the filesystem holding `file` has fewer than
/// `len` bytes free for this user: the up-front error of a full disk. A check, not a reservation (another writer may take the space meanwhile; the
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
