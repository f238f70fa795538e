//! git's long-running filter process (`filter.<driver>.process`): one process per git command
//! serves every file of it, so a command over ten thousand files starts one filter, unlocks
//! the identities once and parses each recipients file once.
//!
//! The conversation (gitattributes(5), "Long Running Filter Process"): a handshake naming
//! version 2 and the capabilities `clean` and `smudge`, then one request per file, each a list
//! (`command=`, `pathname=`, …), the content, and an answer: a status, the content, and an
//! optional second status. A failure answers `status=error` for that file only; git then fails
//! the command when the driver is `required`, which is what keeps plaintext out of git.

use std::io::{self, Read, Write};

use super::filter::{Filter, Outcome, Repo};
use super::pktline::{PktReader, PktWriter};
use super::spool::Spool;
use crate::Error;
use zeroize::Zeroizing;

/// One request's end, for the frontend's log: the path, and what was done or what failed.
pub type Report<'a> = &'a mut dyn FnMut(&str, Result<Outcome, &Error>);

/// Serves git on `input` and `output` (the process's standard input and output) until git
/// closes `input`. Fails only where the conversation itself broke (a protocol error or a
/// closed pipe); a file that cannot be cleaned or smudged is answered `status=error`.
pub fn serve<T: Repo>(
    filter: &mut Filter<T>,
    input: impl Read,
    output: impl Write,
    report: Report<'_>,
) -> Result<(), Error> {
    let mut r = PktReader::new(input);
    let mut w = PktWriter::new(output);
    handshake(&mut r, &mut w)?;
    let mut spool = Spool::new(filter.spool_dir());
    // One buffer for the process (a command over thousands of small files would otherwise
    // fault in fresh pages for every file); it moves plaintext, so it is wiped after each use.
    let mut buf = Zeroizing::new(vec![0u8; COPY_BUF]);
    while let Some(list) = r.read_list_or_end()? {
        let get = |k: &str| list.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let command = get("command").unwrap_or_default().to_string();
        let path = get("pathname").unwrap_or_default().to_string();
        spool.clear()?;
        let mut content = r.content();
        match command.as_str() {
            "clean" => {
                let done = filter.clean(&path, &mut content, &mut spool);
                content.drain()?;
                match done {
                    Ok(outcome) => {
                        w.text("status=success")?;
                        w.flush_packet()?;
                        let mut f = w.framed();
                        spool.copy_to(&mut f)?;
                        f.finish()?;
                        w.flush_packet()?;
                        w.flush_packet()?;
                        report(&path, Ok(outcome));
                    }
                    Err(e) => failed(&mut w, &path, &e, report)?,
                }
            }
            "smudge" => {
                let done = filter.smudge(&mut content, &mut spool);
                content.drain()?;
                match done {
                    Ok((outcome, mut reader)) => {
                        w.text("status=success")?;
                        w.flush_packet()?;
                        let mut f = w.framed();
                        let copied = copy(&mut reader, &mut f, &mut buf);
                        match copied {
                            Ok(()) => {
                                f.finish()?;
                                w.flush_packet()?;
                                w.flush_packet()?;
                                report(&path, Ok(outcome));
                            }
                            // A chunk that fails to authenticate: git drops what it got so far
                            // when the second status says error.
                            Err(e) => {
                                drop(f);
                                w.flush_packet()?;
                                failed(&mut w, &path, &e, report)?;
                            }
                        }
                    }
                    Err(e) => failed(&mut w, &path, &e, report)?,
                }
            }
            other => {
                content.drain()?;
                let e = Error::InvalidArgument(format!("git asked for an unknown filter command {other:?}"));
                failed(&mut w, &path, &e, report)?;
            }
        }
        // git reads the whole answer before it sends the next request: one write for all of
        // it, rather than one (and a wake-up of git) per flush packet.
        w.flush()?;
    }
    Ok(())
}

/// The smudge side's copy buffer.
const COPY_BUF: usize = 64 << 10;

/// Copies through `buf`, wiped whole before returning (the smudge side moves plaintext, and a
/// failed read may have written into it too).
fn copy(from: &mut dyn Read, to: &mut dyn Write, buf: &mut [u8]) -> Result<(), Error> {
    let done = loop {
        match from.read(buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                if let Err(e) = to.write_all(&buf[..n]) {
                    break Err(Error::from(e));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(Error::from(e)),
        }
    };
    crate::wipe(buf);
    done
}

fn failed<W: Write>(w: &mut PktWriter<W>, path: &str, e: &Error, report: Report<'_>) -> Result<(), Error> {
    w.text("status=error")?;
    w.flush_packet()?;
    report(path, Err(e));
    Ok(())
}

/// Version 2, and the capabilities both sides have among `clean` and `smudge`.
fn handshake<R: Read, W: Write>(r: &mut PktReader<R>, w: &mut PktWriter<W>) -> Result<(), Error> {
    let bad = |what: &str| Error::InvalidArgument(format!("git's filter protocol: {what}"));
    if r.read_text()?.as_deref() != Some("git-filter-client") {
        return Err(bad("no git-filter-client welcome"));
    }
    let mut v2 = false;
    while let Some(line) = r.read_text()? {
        v2 |= line == "version=2";
    }
    if !v2 {
        return Err(bad("git does not offer version 2"));
    }
    w.text("git-filter-server")?;
    w.text("version=2")?;
    w.flush_packet()?;
    w.flush()?;
    let offered = r.read_list_or_end()?.ok_or_else(|| bad("no capabilities"))?;
    for cap in ["clean", "smudge"] {
        if offered.iter().any(|(k, v)| k == "capability" && v == cap) {
            w.text(&format!("capability={cap}"))?;
        }
    }
    w.flush_packet()?;
    w.flush()?;
    Ok(())
}
