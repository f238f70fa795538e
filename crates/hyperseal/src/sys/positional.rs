//! Positional reads and writes in whole buffers, and durable directory entries, over each
//! system's `read_at`/`write_at`/`sync_dir`.

use std::fs::File;
use std::io;

use super::{read_at, sync_dir, write_at};

/// Reads until `buf` is full or the file ends, from `offset`, leaving the file position where it
/// was. Returns the count.
pub(crate) fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match read_at(file, &mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Fills `buf` from `offset`, or fails with `UnexpectedEof`.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    match read_at_most(file, buf, offset)? {
        n if n == buf.len() => Ok(()),
        _ => Err(io::ErrorKind::UnexpectedEof.into()),
    }
}

/// Writes all of `buf` at `offset`.
pub(crate) fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match write_at(file, buf, offset) {
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
