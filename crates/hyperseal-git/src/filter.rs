//! The clean and smudge decisions of the git filter: what goes into git (always an age file,
//! and the stored one again when the plaintext did not change) and what comes out into the
//! work tree (plaintext where an identity opens the file, else the age file as stored).
//!
//! "Unchanged" is proved only by opening the stored blob and comparing its authenticated
//! plaintext with what git sends: nothing keeps a hash of the plaintext, and a fresh file key
//! seals anything that differs, so one key and nonce never seal two plaintexts.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zeroize::Zeroizing;

use super::ahead::Ahead;
use super::recipients;
use super::spool::{read_full, Spool};
use hyperseal::recipient::{Identity, Recipient};
use hyperseal::{Decryptor, Error};

/// The first line of every age v1 file.
pub const AGE_INTRO: &[u8] = b"age-encryption.org/v1\n";

/// Plaintext held in memory while it still matches the stored blob: below this a file that
/// did not change is never sealed at all (no recipient is wrapped for it); above it sealing
/// starts, in case the end differs.
const HOLD: usize = 1 << 20;

/// What the filter needs from the repository and the user, supplied by the frontend.
pub trait Repo {
    /// Parses the text of the recipients file `file` (a work-tree path), as `-R` does.
    fn recipients(&mut self, file: &str, text: &str) -> Result<Vec<Box<dyn Recipient>>, Error>;
    /// The identities that open the repository's files; empty while it is locked. Asked once
    /// per process and kept, so one git command asks for a passphrase or PIN at most once.
    fn identities(&mut self) -> Result<&[Box<dyn Identity>], Error>;
    /// Writes the blob stored for `path` (the index's, else HEAD's) into `into`; `false` for
    /// a path git has not stored.
    fn stored(&mut self, path: &str, into: &mut Spool) -> io::Result<bool>;
}

/// What one clean or smudge did (for the frontend's log; never holds secrets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterOutcome {
    /// Clean: sealed under a fresh file key.
    Sealed,
    /// Clean: the plaintext is the stored blob's, so the stored blob is given back.
    Kept,
    /// Clean: the work-tree file already is an age file (a locked work tree): stored as it is.
    AlreadyAge,
    /// Smudge: opened to plaintext.
    Opened,
    /// Smudge: left as stored (locked, not an age file, or for other recipients).
    Left,
}

/// The filter of one repository.
pub struct Filter<T: Repo> {
    repo: T,
    root: PathBuf,
    spool_dir: PathBuf,
    /// Each recipients file's recipients, parsed once, with the encryptors made ahead for it.
    parsed: HashMap<String, Ahead>,
    /// Where encryptors are made ahead: on a thread, or between requests ([`Self::prepare_ahead`]).
    ahead_on_thread: bool,
    /// The recipients file of the last file cleaned: the next file is most likely under it too.
    last: Option<String>,
    /// The clean side's buffers, kept for the process: a command over thousands of small
    /// files would otherwise fault in fresh pages for each. `buf` and `theirs` hold plaintext
    /// and are wiped after every file; `stored` holds only the stored age file.
    buf: Zeroizing<Vec<u8>>,
    theirs: Zeroizing<Vec<u8>>,
    stored: Spool,
}

/// The clean side's read size.
const CHUNK: usize = 64 << 10;

impl<T: Repo> Filter<T> {
    /// The filter for the work tree at `root`, spooling large files into `spool_dir`.
    pub fn new(repo: T, root: &Path, spool_dir: &Path) -> Self {
        Filter {
            repo,
            root: root.to_path_buf(),
            spool_dir: spool_dir.to_path_buf(),
            parsed: HashMap::new(),
            ahead_on_thread: true,
            last: None,
            buf: Zeroizing::new(vec![0u8; CHUNK]),
            theirs: Zeroizing::new(vec![0u8; CHUNK]),
            stored: Spool::new(spool_dir),
        }
    }

    /// Encryptors made ahead between git's requests ([`Self::prepare_ahead`]) instead of on a
    /// thread; set before the first file.
    pub(crate) fn prepare_between_requests(&mut self) {
        self.ahead_on_thread = false;
    }

    /// Makes one encryptor ahead for the recipients file of the last file sealed; `false` when
    /// there is nothing to make (see `ahead.rs`).
    pub(crate) fn prepare_ahead(&mut self) -> bool {
        let last = self.last.as_ref().and_then(|f| self.parsed.get_mut(f));
        last.is_some_and(Ahead::prepare)
    }

    /// The folder large files are spooled in.
    pub fn spool_dir(&self) -> &Path {
        &self.spool_dir
    }

    /// The recipients file of `path` (its text parsed once per process, kept under the name
    /// returned; only looked up again for each later file). A path with no `.age-recipients`
    /// above it is an error: it is never sealed, and never stored as plaintext either.
    fn recipients_for(&mut self, path: &str) -> Result<String, Error> {
        let parsed = &self.parsed;
        let found =
            recipients::nearest_with(&self.root, path, |p| parsed.contains_key(p))?.ok_or_else(|| {
                Error::InvalidRecipient(format!(
                    "no {} file in its folder or any folder above it",
                    recipients::FILE_NAME
                ))
            })?;
        if !self.parsed.contains_key(&found.path) {
            let list = self.repo.recipients(&found.path, &found.text)?;
            if list.is_empty() {
                return Err(Error::InvalidRecipient(format!("{}: no recipients in it", found.path)));
            }
            self.parsed.insert(found.path.clone(), Ahead::new(Arc::new(list), self.ahead_on_thread));
        }
        Ok(found.path)
    }

    /// The clean side: `input` (the work-tree file) becomes the age file written to `out`.
    pub fn clean(
        &mut self,
        path: &str,
        input: &mut dyn Read,
        out: &mut Spool,
    ) -> Result<FilterOutcome, Error> {
        let done = self.clean_with(path, input, out);
        // Whole, whatever happened: 128 KiB is a few microseconds, and no count of how far
        // plaintext went can be wrong.
        hyperseal::wipe(&mut self.buf[..]);
        hyperseal::wipe(&mut self.theirs[..]);
        done
    }

    /// [`Self::clean`] with the kept buffers.
    fn clean_with(
        &mut self,
        path: &str,
        input: &mut dyn Read,
        out: &mut Spool,
    ) -> Result<FilterOutcome, Error> {
        let mut head = [0u8; AGE_INTRO.len()];
        let n = read_full(input, &mut head)?;
        // Plaintext until proved otherwise: only a whole age header passes through as stored (a
        // locked work tree's files); a secret that merely begins with age's first line is sealed.
        let mut prefix = Zeroizing::new(head[..n].to_vec());
        hyperseal::wipe(&mut head);
        if prefix[..] == *AGE_INTRO && age_header_follows(input, &mut prefix)? {
            out.write_all(&prefix)?;
            io::copy(input, out)?;
            return Ok(FilterOutcome::AlreadyAge);
        }
        self.seal_or_keep(path, &mut io::Cursor::new(&prefix[..]).chain(input), out)
    }

    /// The clean side for plaintext: the stored blob again where it holds the same plaintext,
    /// else a fresh sealing.
    fn seal_or_keep(
        &mut self,
        path: &str,
        input: &mut dyn Read,
        out: &mut Spool,
    ) -> Result<FilterOutcome, Error> {
        // Looked up now, needed only to seal: plaintext that did not change gets its stored
        // blob back even where the recipients file is not in the work tree (a sparse checkout).
        let file = self.recipients_for(path);
        if let Some(f) = file.as_ref().ok().filter(|&f| self.last.as_ref() != Some(f)) {
            self.last = Some(f.clone());
        }
        let Filter { repo, parsed, buf, theirs, stored, .. } = self;
        stored.clear()?;
        let unlocked = !repo.identities()?.is_empty();
        let known = unlocked && repo.stored(path, stored)? && stored.starts_with(AGE_INTRO)?;
        let ids = repo.identities()?;
        let mut earlier = match known {
            true => Decryptor::new(stored.reader()?).and_then(|d| d.into_reader(ids)).ok(),
            false => None,
        };
        let (ahead, missing) = match file {
            Ok(f) => (parsed.get_mut(&f), None),
            Err(e) => (None, Some(e)),
        };
        let mut seal =
            Sealing { ahead, missing, out: Some(&mut *out), sealer: None, held: Zeroizing::new(Vec::new()) };
        let mut same = earlier.is_some();
        let mut len = read_full(input, &mut buf[..])?;
        loop {
            if same {
                let e = earlier.as_mut().expect("same implies an opened blob");
                same = matches!(read_full(e, &mut theirs[..len]), Ok(got) if got == len)
                    && theirs[..len] == buf[..len];
            }
            seal.push(&buf[..len], same)?;
            len = input.read(&mut buf[..])?;
            if len == 0 {
                break;
            }
        }
        // Same only if the stored plaintext ends here too, its final chunk authenticated.
        if let (true, Some(e)) = (same, earlier.as_mut()) {
            same = matches!(e.read(&mut theirs[..1]), Ok(0));
        }
        drop(earlier);
        if same {
            drop(seal);
            out.clear()?;
            stored.copy_to(out)?;
            return Ok(FilterOutcome::Kept);
        }
        seal.finish()?;
        Ok(FilterOutcome::Sealed)
    }

    /// The smudge side: reads the stored blob from `input` into `spool` (git sends all of it
    /// before it reads an answer) and returns a reader of what the work tree gets.
    pub fn smudge<'s>(
        &mut self,
        input: &mut dyn Read,
        spool: &'s mut Spool,
    ) -> Result<(FilterOutcome, Box<dyn Read + 's>), Error> {
        io::copy(input, spool)?;
        let spool = &*spool;
        let ids = self.repo.identities()?;
        if ids.is_empty() || !spool.starts_with(AGE_INTRO)? {
            return Ok((FilterOutcome::Left, spool.reader()?));
        }
        let opened = Decryptor::new(spool.reader()?).and_then(|d| d.into_reader(ids));
        match left_for_others(opened) {
            Ok(Some(r)) => Ok((FilterOutcome::Opened, Box::new(r))),
            Ok(None) => Ok((FilterOutcome::Left, spool.reader()?)),
            Err(e) => Err(e),
        }
    }
}

/// Whether `prefix` (age's first line, as read from `input`) begins a whole age v1 header: read
/// on from `input` into `prefix` until the header parses, fails, or `input` ends. Reads double
/// each time, so a header at the format's size limit is parsed a few times, not once per read.
fn age_header_follows(input: &mut dyn Read, prefix: &mut Zeroizing<Vec<u8>>) -> Result<bool, Error> {
    let mut want = 4 << 10;
    loop {
        match hyperseal::format::Header::parse_prefix(prefix) {
            Ok(Some((header, _))) => return Ok(header.profile == hyperseal::Profile::Age),
            Ok(None) => {}
            Err(_) => return Ok(false),
        }
        let at = prefix.len();
        // Grown by hand, not by `resize` on a full vector: a reallocation would leave a copy
        // of what may be plaintext behind, unwiped.
        let mut grown = Zeroizing::new(Vec::with_capacity(at + want));
        grown.extend_from_slice(prefix);
        grown.resize(at + want, 0);
        let got = read_full(input, &mut grown[at..])?;
        grown.truncate(at + got);
        *prefix = grown;
        if got == 0 {
            return Ok(false);
        }
        want = (want * 2).min(hyperseal::limits::HEADER_BYTES);
    }
}

/// A file for other recipients stays as stored: this user is not one of them.
pub(super) fn left_for_others<R>(opened: Result<R, Error>) -> Result<Option<R>, Error> {
    match opened {
        Ok(r) => Ok(Some(r)),
        Err(Error::NoIdentityMatched) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The clean side's sealer, started only once the plaintext is known to differ (or is too
/// large to hold): until then the matching plaintext waits in `held` (zeroized on drop).
struct Sealing<'r, 'o> {
    /// The encryptors of the path's recipients file (`None` with `missing`).
    ahead: Option<&'r mut Ahead>,
    /// Why there are no recipients (fail closed: the first seal fails with it).
    missing: Option<Error>,
    out: Option<&'o mut Spool>,
    sealer: Option<hyperseal::StreamWriter<&'o mut Spool>>,
    held: Zeroizing<Vec<u8>>,
}

impl Sealing<'_, '_> {
    fn push(&mut self, data: &[u8], same: bool) -> Result<(), Error> {
        if self.sealer.is_none() && same && self.held.len() + data.len() <= HOLD {
            self.held.extend_from_slice(data);
            return Ok(());
        }
        self.start()?;
        self.sealer.as_mut().expect("started").write_all(data)?;
        Ok(())
    }

    fn start(&mut self) -> Result<(), Error> {
        if let Some(e) = self.missing.take() {
            return Err(e);
        }
        if let Some(out) = self.out.take() {
            // A fresh file key for every sealing: two repositories (or two edits) with the same
            // plaintext store different blobs.
            let ahead = self.ahead.as_mut().expect("recipients, or `missing` failed above");
            let mut w = ahead.next()?.wrap_output(out)?;
            w.write_all(&self.held)?;
            hyperseal::wipe(&mut self.held);
            self.held.clear();
            self.sealer = Some(w);
        }
        Ok(())
    }

    fn finish(mut self) -> Result<(), Error> {
        self.start()?;
        self.sealer.take().expect("started").finish()?;
        Ok(())
    }
}
