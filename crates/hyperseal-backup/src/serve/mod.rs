//! A repository server on a byte stream (`hyperseal backup serve`, run by ssh as a forced
//! command): the requests of [`crate::Store`] over a local folder, one at a time, in frames
//! of bounded size (`wire.rs`). A connection holds at most one frame and one answer in
//! memory (a few MiB): uploads and reads larger than a frame travel in several.
//!
//! Append-only mode is enforced here, by the server, whatever the client runs: it takes only
//! new objects where a writer writes them (`data/`, `index/`, `snapshots/`, `runs/`), reads
//! only the clear id lists (`data/*.ids`, `index/*.ids`), lists, and refuses everything else
//! (deletes, any read of an age object, the config, the reader sets, the repository marks and
//! the prune lock). A taken host with ssh access to it can then add objects and fill the
//! quota, and nothing more.

pub(crate) mod wire;

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::store::{check_name, LocalStore, Store};
use wire::{Msg, Parse};

/// How a server serves.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// Refuse all but what a writer does (module docs).
    pub append_only: bool,
    /// Refuse a put that would bring the repository folder past this many bytes.
    pub quota: Option<u64>,
}

/// The folders a writer adds objects to.
const WRITER_FOLDERS: [&str; 4] = ["data", "index", "snapshots", "runs"];
/// Most objects one listing answers (as the S3 store's bound).
const MAX_LIST: usize = 1 << 22;

/// Serves requests on `root` from `input`, answering on `output`, until the input ends.
/// A request that breaks the protocol (an oversized or malformed frame) is answered with an
/// error and ends the connection with that error; a refused or failed request is answered
/// with its error and the connection goes on.
pub fn serve(
    root: &Path,
    input: &mut dyn Read,
    output: &mut dyn Write,
    opts: &ServeOptions,
) -> io::Result<()> {
    let mut s = Server { root: root.to_path_buf(), store: LocalStore::new(root), opts, used: None, output };
    match s.handshake(input) {
        Ok(true) => {}
        Ok(false) => return Ok(()),
        Err(e) => return Err(s.fatal(e)),
    }
    loop {
        let req = match wire::read_frame(input, wire::MAX_FRAME) {
            Ok(Some(req)) => req,
            Ok(None) => return Ok(()),
            Err(e) => return Err(s.fatal(e)),
        };
        if let Err(e) = s.request(&req, input) {
            return Err(s.fatal(e));
        }
    }
}

struct Server<'a> {
    root: PathBuf,
    store: LocalStore,
    opts: &'a ServeOptions,
    /// Bytes in the folder, counted at the first put and kept up to date by this connection.
    used: Option<u64>,
    output: &'a mut dyn Write,
}

/// What a request does to a name, for the append-only rules.
#[derive(Clone, Copy, PartialEq)]
enum Op {
    Put,
    Read,
    List,
    Delete,
    Rekey,
}

fn refused(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, format!("append-only repository: {msg}"))
}

impl Server<'_> {
    /// The error that ends the connection, told to the client first where the pipe still
    /// takes it (so it can say why rather than "connection closed").
    fn fatal(&mut self, e: io::Error) -> io::Error {
        let _ = wire::write_frame(self.output, &wire::error_answer(&e));
        e
    }

    fn answer(&mut self, done: io::Result<Vec<u8>>) -> io::Result<()> {
        match done {
            Ok(body) => wire::write_frame(self.output, &body),
            Err(e) => wire::write_frame(self.output, &wire::error_answer(&e)),
        }
    }

    /// The client's hello and the server's: the magic, the version, and whether this server
    /// is append-only (so a client can say why a read is refused before it tries).
    fn handshake(&mut self, input: &mut dyn Read) -> io::Result<bool> {
        let Some(hello) = wire::read_frame(input, wire::MAX_FRAME)? else { return Ok(false) };
        let mut p = Parse(&hello);
        let ok = p.u8()? == wire::HELLO
            && p.rest().strip_prefix(wire::MAGIC) == Some(&wire::VERSION.to_be_bytes());
        if !ok {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a hyperseal backup client of protocol version {}", wire::VERSION),
            ));
        }
        let body = Msg::new(wire::OK).bytes(wire::MAGIC).u32(wire::VERSION).u8(self.opts.append_only as u8);
        wire::write_frame(self.output, &body.0)?;
        Ok(true)
    }

    /// One request. An `Err` breaks the protocol and ends the connection; a refusal is an
    /// answer.
    fn request(&mut self, req: &[u8], input: &mut dyn Read) -> io::Result<()> {
        let mut p = Parse(req);
        match p.u8()? {
            wire::PUT => {
                let (name, size) = (p.str()?.to_string(), p.u64()?);
                p.end()?;
                self.put(&name, size, input)
            }
            wire::GET => {
                let (name, offset, len) = (p.str()?, p.u64()?, p.u32()? as usize);
                p.end()?;
                let done = self.get(name, offset, len);
                self.answer(done)
            }
            wire::LIST => {
                let folder = p.str()?;
                p.end()?;
                self.list(folder)
            }
            wire::DELETE => {
                let name = p.str()?;
                p.end()?;
                let done = self.check(Op::Delete, name).and_then(|_| self.store.delete(name));
                self.answer(done.map(|_| vec![wire::OK]))
            }
            wire::REHEAD => {
                let (name, old_len) = (p.str()?, p.u32()? as usize);
                let old = p.0.get(..old_len).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
                let new = &p.0[old_len..];
                let done = self.rehead(name, old, new);
                self.answer(done.map(|n| Msg::new(wire::OK).u64(n).0))
            }
            _ => Err(io::Error::new(io::ErrorKind::InvalidData, "an unknown or unexpected request")),
        }
    }

    /// The crate's name rules, no temporaries, and the append-only rules.
    fn check(&self, op: Op, name: &str) -> io::Result<()> {
        check_name(name)?;
        let parts: Vec<&str> = name.split('/').collect();
        if parts.iter().any(|c| c.starts_with('.')) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name}: names beginning with . are temporaries"),
            ));
        }
        if op == Op::List && parts.len() != 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name}: a listing is of one folder"),
            ));
        }
        if !self.opts.append_only {
            return Ok(());
        }
        let folder = (parts.len() == 2).then_some(parts[0]);
        match op {
            Op::List => Ok(()),
            Op::Put if folder.is_some_and(|f| WRITER_FOLDERS.contains(&f)) => Ok(()),
            Op::Put => Err(refused(format!(
                "{name} is not a place a writer adds to (data/, index/, snapshots/, runs/)"
            ))),
            Op::Read if matches!(folder, Some("data" | "index")) && name.ends_with(".ids") => Ok(()),
            Op::Read => {
                Err(refused(format!("reading {name} (a writer reads only data/*.ids and index/*.ids)")))
            }
            Op::Delete => Err(refused(format!("deleting {name}"))),
            Op::Rekey => Err(refused(format!("re-keying {name}"))),
        }
    }

    /// The bytes under the folder now (files at its top and one folder down, where objects
    /// are).
    fn measure(&self) -> io::Result<u64> {
        let mut total = 0;
        let rd = match fs::read_dir(&self.root) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            r => r?,
        };
        for e in rd {
            let e = e?;
            let meta = e.metadata()?;
            if meta.is_dir() {
                for f in fs::read_dir(e.path())? {
                    total += f?.metadata()?.len();
                }
            } else {
                total += meta.len();
            }
        }
        Ok(total)
    }

    /// A put: the header is answered (refused, or go on), then `size` bytes come in data
    /// frames and the put's end is answered. The object is written under a temporary name and
    /// linked into place, as the local store does: whole, or not at all, and never over a
    /// taken name.
    fn put(&mut self, name: &str, size: u64, input: &mut dyn Read) -> io::Result<()> {
        let started = self.start_put(name, size);
        let (tmp, mut file) = match started {
            Ok(t) => t,
            Err(e) => return self.answer(Err(e)),
        };
        self.answer(Ok(vec![wire::OK]))?;
        let mut got = 0u64;
        let mut failed: Option<io::Error> = None;
        while got < size {
            let Some(f) = wire::read_frame(input, wire::MAX_FRAME)? else {
                return Err(io::ErrorKind::UnexpectedEof.into());
            };
            let (op, bytes) = f.split_first().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
            if *op != wire::DATA || got + bytes.len() as u64 > size {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{name}: data past the put's size"),
                ));
            }
            got += bytes.len() as u64;
            // A failed write is told at the end: the frames already on their way are read, so
            // the connection stays in step.
            if failed.is_none() {
                failed = file.write_all(bytes).err();
            }
        }
        let done = match failed {
            Some(e) => Err(e),
            None => file.sync_all().and_then(|_| self.link(&tmp.0, name)),
        };
        if done.is_ok() {
            self.used = self.used.map(|u| u + size);
        }
        self.answer(done.map(|_| vec![wire::OK]))
    }

    fn start_put(&mut self, name: &str, size: u64) -> io::Result<(Temp, File)> {
        self.check(Op::Put, name)?;
        if let Some(quota) = self.opts.quota {
            let used = match self.used {
                Some(u) => u,
                None => self.measure()?,
            };
            self.used = Some(used);
            if used.saturating_add(size) > quota {
                return Err(io::Error::new(
                    io::ErrorKind::QuotaExceeded,
                    format!("{name} ({size} bytes) would bring the repository to {} bytes, past its quota of {quota}", used + size),
                ));
            }
        }
        let path = self.root.join(name);
        // Told before the bytes travel; the link below is what decides.
        if fs::symlink_metadata(&path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{name} exists (an object is never replaced)"),
            ));
        }
        let dir = path.parent().expect("names have a folder");
        fs::create_dir_all(dir)?;
        let tmp = Temp(dir.join(format!(".tmp-{}", crate::keys::random_name())));
        let file = File::options().write(true).create_new(true).open(&tmp.0)?;
        Ok((tmp, file))
    }

    fn link(&self, tmp: &Path, name: &str) -> io::Result<()> {
        let path = self.root.join(name);
        fs::hard_link(tmp, &path).map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))?;
        File::open(path.parent().expect("names have a folder"))?.sync_all()
    }

    /// A re-key's new header: the object is replaced by `new` and its bytes past `old` (its
    /// old header, as the client read it, which must still be there). The payload is copied
    /// here, on the server, byte for byte; only headers cross the link. The new object is
    /// written under a temporary and renamed over the old one, so a crash leaves one or the
    /// other whole. Returns the new object's length.
    fn rehead(&self, name: &str, old: &[u8], new: &[u8]) -> io::Result<u64> {
        self.check(Op::Rekey, name)?;
        let path = self.root.join(name);
        let mut f = File::open(&path).map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))?;
        let mut head = vec![0u8; old.len()];
        if f.read_exact(&mut head).is_err() || head != old {
            return Err(io::Error::other(format!(
                "{name} changed since its header was read: run rekey again"
            )));
        }
        let dir = path.parent().expect("names have a folder");
        let tmp = Temp(dir.join(format!(".tmp-{}", crate::keys::random_name())));
        let mut out = File::options().write(true).create_new(true).open(&tmp.0)?;
        out.write_all(new)?;
        let copied = io::copy(&mut f, &mut out)?;
        out.set_permissions(f.metadata()?.permissions())?;
        out.sync_all()?;
        fs::rename(&tmp.0, &path)?;
        crate::sys::sync_dir(dir)?;
        Ok(new.len() as u64 + copied)
    }

    /// A ranged read: the object's size, then at most `len` bytes from `offset`.
    fn get(&self, name: &str, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.check(Op::Read, name)?;
        if len > wire::MAX_DATA {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a read of {len} bytes, over the bound"),
            ));
        }
        let mut f =
            File::open(self.root.join(name)).map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))?;
        let size = f.metadata()?.len();
        let mut out = Msg::new(wire::OK).u64(size).0;
        let want = len.min(size.saturating_sub(offset) as usize);
        if want > 0 {
            f.seek(SeekFrom::Start(offset))?;
            f.take(want as u64).read_to_end(&mut out)?;
        }
        Ok(out)
    }

    /// A listing, in frames of about [`wire::LIST_BATCH`] bytes: each an `OK`, a "more
    /// follows" byte and entries (name in the folder, size, modification time), the folder
    /// read as it is sent rather than held whole.
    fn list(&mut self, folder: &str) -> io::Result<()> {
        let folder = folder.trim_end_matches('/');
        if let Err(e) = self.check(Op::List, folder) {
            return self.answer(Err(e));
        }
        let rd = match fs::read_dir(self.root.join(folder)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return self.answer(Ok(vec![wire::OK, 0])),
            Err(e) => return self.answer(Err(e)),
            Ok(rd) => rd,
        };
        let mut batch = Vec::new();
        let mut count = 0usize;
        for e in rd {
            let entry = e.and_then(|e| Ok((e.file_name(), e.metadata()?)));
            let (n, meta) = match entry {
                Ok(x) => x,
                Err(e) => return self.answer(Err(e)),
            };
            let Some(n) = n.to_str() else { continue };
            if n.starts_with('.') || !meta.is_file() {
                continue;
            }
            count += 1;
            if count > MAX_LIST {
                return self
                    .answer(Err(io::Error::other(format!("{folder}/ holds over {MAX_LIST} objects"))));
            }
            let t = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
            let (secs, nanos) = t.map_or((u64::MAX, 0), |d| (d.as_secs(), d.subsec_nanos()));
            batch = Msg(batch).str(n).u64(meta.len()).u64(secs).u32(nanos).0;
            if batch.len() >= wire::LIST_BATCH {
                wire::write_frame(self.output, &Msg::new(wire::OK).u8(1).bytes(&batch).0)?;
                batch.clear();
            }
        }
        wire::write_frame(self.output, &Msg::new(wire::OK).u8(0).bytes(&batch).0)
    }
}

/// A put's temporary, removed however the put ends (after a link, the object keeps its bytes).
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}
