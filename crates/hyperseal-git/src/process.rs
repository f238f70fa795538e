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

use super::filter::{Filter, FilterOutcome, Repo};
use super::pktline::{PktReader, PktWriter};
use super::spool::Spool;
use hyperseal::Error;
use zeroize::Zeroizing;

/// git's end of the filter's standard input, as [`serve`] reads it.
///
/// Between two requests git hashes, compresses and stores the last answer. An input that can
/// tell whether the next request has arrived lets [`serve`] make the next files' encryptors on
/// its own thread in that time (`ahead.rs`), and leaves how to wait after that to the frontend:
/// a process that sleeps in `read` is woken by git's request, and on a virtual machine waking a
/// sleeping core costs more than the filter's work on a small file. [`Blocking`] is an input
/// that cannot tell; the encryptors are then made on a thread of their own.
pub trait Input: Read {
    /// Whether [`Self::ready`] answers without waiting.
    fn tells_ready(&self) -> bool;
    /// Whether a read would return now (data, or the end of the input), without waiting.
    fn ready(&mut self) -> io::Result<bool>;
    /// Returns once a read would return now.
    fn wait(&mut self) -> io::Result<()>;
}

impl<I: Input + ?Sized> Input for &mut I {
    fn tells_ready(&self) -> bool {
        (**self).tells_ready()
    }
    fn ready(&mut self) -> io::Result<bool> {
        (**self).ready()
    }
    fn wait(&mut self) -> io::Result<()> {
        (**self).wait()
    }
}

/// Any `Read` as an [`Input`] that cannot tell whether it has something: reads may block.
pub struct Blocking<R>(pub R);

impl<R: Read> Read for Blocking<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> Input for Blocking<R> {
    fn tells_ready(&self) -> bool {
        false
    }
    fn ready(&mut self) -> io::Result<bool> {
        Ok(true)
    }
    fn wait(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One request's end, for the frontend's log: the path, and what was done or what failed.
pub type Report<'a> = &'a mut dyn FnMut(&str, Result<FilterOutcome, &Error>);

/// Serves git on `input` and `output` (the process's standard input and output) until git
/// closes `input`. Fails only where the conversation itself broke (a protocol error or a
/// closed pipe); a file that cannot be cleaned or smudged is answered `status=error`.
pub fn serve<T: Repo>(
    filter: &mut Filter<T>,
    input: impl Input,
    output: impl Write,
    report: Report<'_>,
) -> Result<(), Error> {
    let between = input.tells_ready();
    if between {
        filter.prepare_between_requests();
    }
    let mut r = PktReader::new(input);
    let mut w = PktWriter::new(output);
    handshake(&mut r, &mut w)?;
    let mut spool = Spool::new(filter.spool_dir());
    // One buffer for the process (a command over thousands of small files would otherwise
    // fault in fresh pages for every file); it moves plaintext, so it is wiped after each use.
    let mut buf = Zeroizing::new(vec![0u8; COPY_BUF]);
    loop {
        if between {
            until_next_request(filter, r.get_mut())?;
        }
        let Some(list) = r.read_list_or_end()? else { break };
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

/// While git works on the last answer: encryptors made ahead until git's next request arrives
/// or none is needed, then the input's own wait.
fn until_next_request<T: Repo>(filter: &mut Filter<T>, input: &mut impl Input) -> io::Result<()> {
    while !input.ready()? {
        if !filter.prepare_ahead() {
            return input.wait();
        }
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
    hyperseal::wipe(buf);
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

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use hyperseal::format::Stanza;
    use hyperseal::recipient::{self, Identity, Kind, Labels, Recipient};
    use hyperseal::FileKey;

    /// An X25519 recipient that counts its wraps.
    struct Counting(Box<dyn Recipient>, Arc<AtomicUsize>);

    impl Recipient for Counting {
        fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
            self.1.fetch_add(1, Ordering::SeqCst);
            self.0.wrap_file_key(file_key)
        }
        fn wraps_offline(&self) -> bool {
            true
        }
    }

    /// A locked repository (nothing stored, no identities) whose recipients file gives one
    /// counting recipient.
    struct Locked(String, Arc<AtomicUsize>);

    impl Repo for Locked {
        fn recipients(&mut self, _: &str, _: &str) -> Result<Vec<Box<dyn Recipient>>, Error> {
            let r = recipient::parse_recipient(&self.0)?;
            Ok(vec![Box::new(Counting(r, Arc::clone(&self.1)))])
        }
        fn identities(&mut self) -> Result<&[Box<dyn Identity>], Error> {
            Ok(&[])
        }
        fn stored(&mut self, _: &str, _: &mut Spool) -> io::Result<bool> {
            Ok(false)
        }
    }

    /// git's side of a conversation, told "not yet" `gap` times after each read before it
    /// says a request is there.
    struct Scripted {
        data: Cursor<Vec<u8>>,
        gap: usize,
        left: usize,
        waits: usize,
    }

    impl Read for Scripted {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.left = self.gap;
            self.data.read(buf)
        }
    }

    impl Input for Scripted {
        fn tells_ready(&self) -> bool {
            true
        }
        fn ready(&mut self) -> io::Result<bool> {
            let now = self.left == 0;
            self.left = self.left.saturating_sub(1);
            Ok(now)
        }
        fn wait(&mut self) -> io::Result<()> {
            self.waits += 1;
            self.left = 0;
            Ok(())
        }
    }

    fn conversation(files: &[&str]) -> Vec<u8> {
        let mut data = Vec::new();
        let mut w = PktWriter::new(&mut data);
        w.text("git-filter-client").unwrap();
        w.text("version=2").unwrap();
        w.flush_packet().unwrap();
        w.text("capability=clean").unwrap();
        w.text("capability=smudge").unwrap();
        w.flush_packet().unwrap();
        for (i, f) in files.iter().enumerate() {
            w.text("command=clean").unwrap();
            w.text(&format!("pathname={f}")).unwrap();
            w.flush_packet().unwrap();
            let mut c = w.framed();
            write!(c, "secret number {i}").unwrap();
            c.finish().unwrap();
            w.flush_packet().unwrap();
        }
        w.flush().unwrap();
        drop(w);
        data
    }

    /// The age files in `serve`'s answers, in order.
    fn answers(out: &[u8]) -> Vec<Vec<u8>> {
        let mut r = PktReader::new(out);
        while r.read_text().unwrap().is_some() {}
        while r.read_text().unwrap().is_some() {}
        let mut files = Vec::new();
        while let Some(list) = r.read_list_or_end().unwrap() {
            assert_eq!(list, [("status".to_string(), "success".to_string())]);
            let mut file = Vec::new();
            r.content().read_to_end(&mut file).unwrap();
            assert_eq!(r.read_list_or_end().unwrap(), Some(Vec::new()), "status unchanged");
            files.push(file);
        }
        files
    }

    #[test]
    fn while_git_works_the_next_files_encryptors_are_made_and_each_is_used_once() {
        let dir = tempfile::tempdir().unwrap();
        let key = recipient::generate(Kind::X25519).unwrap();
        std::fs::write(dir.path().join(".age-recipients"), format!("{}\n", key.public)).unwrap();
        let wraps = Arc::new(AtomicUsize::new(0));
        let mut filter = Filter::new(Locked(key.public.clone(), Arc::clone(&wraps)), dir.path(), dir.path());
        let names = ["a.env", "b.env", "c.env", "d.env"];
        let mut input = Scripted { data: Cursor::new(conversation(&names)), gap: 1, left: 0, waits: 0 };
        let mut out = Vec::new();
        let mut report =
            |_: &str, done: Result<FilterOutcome, &Error>| assert_eq!(done.unwrap(), FilterOutcome::Sealed);
        serve(&mut filter, &mut input, &mut out, &mut report).unwrap();

        // Before the first file nothing is made (no recipients yet): the input's wait. After
        // each file one encryptor is made in the gap, which the next file uses; the one made
        // after the last file is thrown away unused.
        assert_eq!(input.waits, 1);
        assert_eq!(wraps.load(Ordering::SeqCst), names.len() + 1);
        let ids = recipient::parse_identities(&key.secret).unwrap();
        let files = answers(&out);
        assert_eq!(files.len(), names.len());
        let header = |f: &[u8]| f[..f.windows(4).position(|w| w == b"\n---").unwrap()].to_vec();
        for (i, f) in files.iter().enumerate() {
            assert_eq!(hyperseal::decrypt(&ids, f).unwrap(), format!("secret number {i}").as_bytes());
            assert!(files[..i].iter().all(|g| header(f) != header(g)), "two files share a header");
        }
    }
}
