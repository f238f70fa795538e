//! The `git` table's floor for a filter: a long-running filter process (git's
//! `filter.<driver>.process` protocol, the one `hyperseal git` speaks) that returns every file
//! exactly as it came. Like hyperseal's filter it reads git's pipe without sleeping between
//! requests (for a while) and answers each request in one write, and it does no other work; so
//! `git add` through it costs what git itself spends on a filter process (the packets, the pipe
//! round trip per file, a blob of the size the filter returns), which no filter can go below.
//! `hyperseal-bench --git-null-filter` runs it; the table configures it as a driver of its own,
//! on files of the age files' size.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;

use anyhow::{bail, Result};

/// The largest payload of one packet (git's LARGE_PACKET_DATA_MAX).
const MAX_DATA: usize = 65516;

/// Serves git on standard input and output until git closes the pipe.
pub fn serve() -> Result<()> {
    // git's pipe read as hyperseal's filter reads it (a filter asleep in `read` is woken for
    // every file; see `hyperseal_git::pipe`), through the pipe's own buffer.
    #[cfg(unix)]
    let pipe = hyperseal_git::GitPipe::stdin(hyperseal_git::pipe::SPIN);
    #[cfg(not(unix))]
    let pipe: Option<BufReader<io::Stdin>> = None;
    let mut input: Box<dyn BufRead> = match pipe {
        Some(p) => Box::new(p),
        None => Box::new(BufReader::with_capacity(1 << 16, io::stdin().lock())),
    };
    // A duplicate of standard output, unbuffered: Rust's `Stdout` writes up to a line's end and
    // holds the rest, which would split each answer in two writes.
    let mut out = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let mut answer = Vec::new();
    // The handshake: git's welcome and versions, then its capabilities; both end with a flush.
    while packet(&mut input, &mut Vec::new())?.is_some() {}
    put(&mut answer, b"git-filter-server\n");
    put(&mut answer, b"version=2\n");
    answer.extend_from_slice(b"0000");
    send(&mut out, &mut answer)?;
    while packet(&mut input, &mut Vec::new())?.is_some() {}
    put(&mut answer, b"capability=clean\n");
    put(&mut answer, b"capability=smudge\n");
    answer.extend_from_slice(b"0000");
    send(&mut out, &mut answer)?;

    let mut content = Vec::new();
    let mut scratch = Vec::new();
    loop {
        // A request: its keys up to a flush (none at all: git closed the pipe), then the
        // content up to a flush.
        if input.fill_buf()?.is_empty() {
            return Ok(());
        }
        while packet(&mut input, &mut scratch)?.is_some() {}
        content.clear();
        while let Some(n) = packet(&mut input, &mut scratch)? {
            content.extend_from_slice(&scratch[..n]);
        }
        // The answer: success, the content as it came, and an empty list (status unchanged).
        put(&mut answer, b"status=success\n");
        answer.extend_from_slice(b"0000");
        for piece in content.chunks(MAX_DATA) {
            put(&mut answer, piece);
        }
        answer.extend_from_slice(b"00000000");
        send(&mut out, &mut answer)?;
    }
}

/// Reads one packet into `buf`: `Some(length)` of its payload, `None` for a flush.
fn packet(input: &mut impl Read, buf: &mut Vec<u8>) -> Result<Option<usize>> {
    let mut head = [0u8; 4];
    input.read_exact(&mut head)?;
    let len = usize::from_str_radix(std::str::from_utf8(&head)?, 16)?;
    if len == 0 {
        return Ok(None);
    }
    if !(5..=MAX_DATA + 4).contains(&len) {
        bail!("a packet of {len} bytes");
    }
    buf.resize(len - 4, 0);
    input.read_exact(buf)?;
    Ok(Some(len - 4))
}

fn put(answer: &mut Vec<u8>, data: &[u8]) {
    answer.extend_from_slice(format!("{:04x}", data.len() + 4).as_bytes());
    answer.extend_from_slice(data);
}

fn send(out: &mut impl Write, answer: &mut Vec<u8>) -> Result<()> {
    out.write_all(answer)?;
    answer.clear();
    Ok(())
}
