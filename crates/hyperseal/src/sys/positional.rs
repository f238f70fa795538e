//! Positional reads and writes in whole buffers, and durable directory entries, over each
//! system's `read_at`/`write_at`/`sync_dir`.

use std::fs::File;
use std::io;

use super::{read_at, sync_dir, write_at};

/// Reads until `buf` is full or the file ends, from `offset`, leaving the file position where it
/// was. Returns the count.
pub(crate) fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    fill(buf, offset, |b, at| read_at(file, b, at))
}

/// Fills `buf` from `offset`, or fails with `UnexpectedEof`.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    match read_at_most(file, buf, offset)? {
        n if n == buf.len() => Ok(()),
        _ => Err(io::ErrorKind::UnexpectedEof.into()),
    }
}

/// Writes all of `buf` at `offset`.
pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    drain(buf, offset, |b, at| write_at(file, b, at))
}

/// [`read_at_most`] for many threads reading one file at once (the file position is left
/// anywhere: see `sys::pread`).
#[cfg(feature = "fs")]
pub(crate) fn pread_most(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    fill(buf, offset, |b, at| super::pread(file, b, at))
}

/// [`write_all_at`] for many threads writing one file at once (see `sys::pwrite`).
#[cfg(feature = "fs")]
pub(crate) fn pwrite_all(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    drain(buf, offset, |b, at| super::pwrite(file, b, at))
}

/// Positional reads into `buf` from `offset` until it is full or `read` says the end (0).
fn fill(
    buf: &mut [u8],
    offset: u64,
    read: impl Fn(&mut [u8], u64) -> io::Result<usize>,
) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match read(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Positional writes of all of `buf` from `offset`.
fn drain(mut buf: &[u8], mut offset: u64, write: impl Fn(&[u8], u64) -> io::Result<usize>) -> io::Result<()> {
    while !buf.is_empty() {
        match write(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Syncs the directory holding `path`, so that a name just created or removed there is durable.
pub(crate) fn sync_parent_dir(path: &std::path::Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    sync_dir(dir)
}
