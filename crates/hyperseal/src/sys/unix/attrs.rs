//! What a file keeps when it is rewritten rather than written in place: owner, group,
//! permission bits and extended attributes (POSIX ACLs live in `system.posix_acl_access`).
//! New outputs are created 0600 and owned by whoever runs the command; a rewrite of an existing
//! file must not make it private to someone else, or public, behind its owner's back.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

/// Sets `to`'s owner, group, mode and extended attributes to `from`'s.
pub(crate) fn copy_attributes(from: &File, to: &File) -> io::Result<()> {
    let meta = from.metadata()?;
    let now = to.metadata()?;
    if (now.uid(), now.gid()) != (meta.uid(), meta.gid()) {
        // SAFETY: fchown on a descriptor we own, with integer arguments.
        if unsafe { libc::fchown(to.as_raw_fd(), meta.uid(), meta.gid()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // After fchown, which clears set-user-ID and set-group-ID bits.
    // SAFETY: as above.
    if unsafe { libc::fchmod(to.as_raw_fd(), meta.mode() & 0o7777) } != 0 {
        return Err(io::Error::last_os_error());
    }
    copy_xattrs(from, to)
}

#[cfg(target_os = "linux")]
fn copy_xattrs(from: &File, to: &File) -> io::Result<()> {
    let names = match list(from) {
        Ok(n) => n,
        // A filesystem without extended attributes has none to keep.
        Err(e) if e.raw_os_error() == Some(libc::ENOTSUP) => return Ok(()),
        Err(e) => return Err(e),
    };
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let cname = std::ffi::CString::new(name)?;
        let value = get(from, &cname)?;
        // SAFETY: the name is NUL-terminated and the value slice is valid for its length.
        let r =
            unsafe { libc::fsetxattr(to.as_raw_fd(), cname.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
        if r != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("extended attribute {}: {e}", String::from_utf8_lossy(name)),
            ));
        }
    }
    Ok(())
}

/// The attribute names of `f`, NUL-separated.
#[cfg(target_os = "linux")]
fn list(f: &File) -> io::Result<Vec<u8>> {
    // SAFETY: the pointer and length describe a buffer valid for writes (or null and 0, which
    // asks for the size only).
    sized(|buf, len| unsafe { libc::flistxattr(f.as_raw_fd(), buf, len) })
}

#[cfg(target_os = "linux")]
fn get(f: &File, name: &std::ffi::CStr) -> io::Result<Vec<u8>> {
    // SAFETY: as in `list`; the name is NUL-terminated.
    sized(|buf, len| unsafe { libc::fgetxattr(f.as_raw_fd(), name.as_ptr(), buf.cast(), len) })
}

/// The xattr calls' protocol: ask for the size, then fill a buffer of it; ERANGE means it grew
/// between the two calls, so ask again.
#[cfg(target_os = "linux")]
fn sized(call: impl Fn(*mut libc::c_char, usize) -> isize) -> io::Result<Vec<u8>> {
    loop {
        let n = call(std::ptr::null_mut(), 0);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut buf = vec![0u8; n as usize];
        match call(buf.as_mut_ptr().cast(), buf.len()) {
            m if m >= 0 => {
                buf.truncate(m as usize);
                return Ok(buf);
            }
            _ if io::Error::last_os_error().raw_os_error() == Some(libc::ERANGE) => continue,
            _ => return Err(io::Error::last_os_error()),
        }
    }
}

/// Other Unix systems: owner, group and mode only (their xattr calls differ); said in the docs.
#[cfg(not(target_os = "linux"))]
fn copy_xattrs(_: &File, _: &File) -> io::Result<()> {
    Ok(())
}
