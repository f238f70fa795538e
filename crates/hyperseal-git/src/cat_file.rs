//! Blobs out of git's object store: one `git cat-file --batch` client for every reader of
//! stored blobs (the filter's comparison with what is stored, [`Stored`]; `verify`; and the
//! commands that handle every marked file, `clone` and `rekey`), each read from it under a
//! deadline.
//!
//! Many blobs are read in rounds of bounded size ([`in_rounds`]): git reads the next round
//! while the caller works on this one (git inflating blobs takes one core; opening them takes
//! the others), on the core's executor, and a round's blobs are slices of git's one answer,
//! never copied one by one.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Mutex};
#[cfg(unix)]
use std::time::Instant;
use std::time::{Duration, SystemTime};

use hyperseal::recipient::Identity;

use crate::git::{Git, GitError};
use crate::spool::Spool;

/// Largest blob opened in memory by `unlock`, `clone` and `rekey`; larger ones stream (through
/// the filter, or one at a time).
pub const MOST: u64 = 1 << 20;
/// Blob bytes read from git per round: memory stays bounded whatever the repository's size.
pub const ROUND: u64 = 64 << 20;

/// A deadline for one read from `git cat-file` that a frontend may pass to [`CatFile::start`].
/// git answers from its object store at once; the longest honest wait is building a large
/// deltified blob before its first byte. A child that says nothing for this long is stopped,
/// and its reader fails instead of hanging the git command that runs the filter.
pub const READ_DEADLINE: Duration = Duration::from_secs(120);

/// Blobs per round when no identity unwraps in batches: small enough that git reading the next
/// round's blobs overlaps with opening this one's, large enough that a round's overhead is
/// noise.
const SMALL_ROUND: usize = 1000;

/// Longest answer line git gives before a blob (`<oid> <type> <size>`).
const HEADER: u64 = 256;

/// Blobs per round for `ids`. An identity that unwraps in batches (a plugin: perhaps a PIN or a
/// touch; the agent) is asked once per round, so then a round is as large as the byte bound
/// allows; otherwise rounds are small, so git and the opening overlap.
pub fn round_files(ids: &[Arc<dyn Identity>]) -> usize {
    match ids.iter().any(|id| id.unwraps_in_batches()) {
        true => usize::MAX,
        false => SMALL_ROUND,
    }
}

/// One `git cat-file --batch`, asked for one blob or for many at once.
pub struct CatFile {
    child: Child,
    input: ChildStdin,
    output: BufReader<Timed>,
    // Only Unix bounds the reads and writes (`poll`); elsewhere they block.
    #[cfg_attr(not(unix), allow(dead_code))]
    read_deadline: Duration,
}

/// git's answers, each read waiting at most the deadline.
struct Timed {
    inner: ChildStdout,
    #[cfg_attr(not(unix), allow(dead_code))]
    wait: Duration,
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let deadline = Instant::now() + self.wait;
            crate::sys_pipe::wait_ready([None, Some(self.inner.as_fd())], deadline).map_err(|e| {
                match e.kind() {
                    io::ErrorKind::TimedOut => io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("git cat-file did not answer within {} s", self.wait.as_secs()),
                    ),
                    _ => e,
                }
            })?;
        }
        self.inner.read(buf)
    }
}

/// What git says before each object.
enum Header {
    /// An object of this type and size follows.
    Object { blob: bool, size: u64 },
    /// None follows (`missing`, `ambiguous`).
    Absent,
}

impl CatFile {
    /// Starts `git cat-file --batch`, each read from it bounded by `read_deadline`.
    pub fn start(git: &Git, read_deadline: Duration) -> io::Result<CatFile> {
        let mut child = git
            .command()
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let (input, stdout) = (child.stdin.take().expect("piped"), child.stdout.take().expect("piped"));
        #[cfg(unix)]
        crate::sys_pipe::set_nonblocking(std::os::fd::AsFd::as_fd(&input))?;
        let output = BufReader::new(Timed { inner: stdout, wait: read_deadline });
        Ok(CatFile { child, input, output, read_deadline })
    }

    /// Copies the blob `oid` into `into`; `false` if git does not have it.
    pub fn blob(&mut self, oid: &str, into: &mut dyn Write) -> io::Result<bool> {
        let line = format!("{oid}\n");
        self.send(line.as_bytes(), &mut 0, line.len())?;
        let size = match self.header(&mut Vec::new())? {
            Header::Object { blob: true, size } => size,
            Header::Absent => return Ok(false),
            Header::Object { .. } => {
                return Err(io::Error::other("git cat-file answered something unexpected"))
            }
        };
        let copied = io::copy(&mut (&mut self.output).take(size), into)?;
        let mut newline = [0u8; 1];
        self.output.read_exact(&mut newline)?;
        if copied != size {
            return Err(io::Error::other("git cat-file's blob was cut short"));
        }
        Ok(true)
    }

    /// git's answer for `oids` as it gives it (each object's line, its content and a newline),
    /// the ids given as git reads them, so neither side waits on a full pipe.
    pub fn answers(&mut self, oids: &[&str]) -> io::Result<Vec<u8>> {
        let mut list = Vec::with_capacity(oids.len() * 65);
        let mut ends = Vec::with_capacity(oids.len());
        for o in oids {
            list.extend_from_slice(o.as_bytes());
            list.push(b'\n');
            ends.push(list.len());
        }
        let (mut out, mut sent) = (Vec::new(), 0);
        for end in ends {
            self.send(&list, &mut sent, end)?;
            if let Header::Object { size, .. } = self.header(&mut out)? {
                let size = usize::try_from(size).map_err(io::Error::other)?;
                let at = out.len();
                out.resize(at + size + 1, 0);
                self.output.read_exact(&mut out[at..])?;
            }
        }
        Ok(out)
    }

    /// Writes `list` from `*sent` on: at least up to `least`, waiting for room if it must,
    /// and as much more as git's input takes now.
    fn send(&mut self, list: &[u8], sent: &mut usize, least: usize) -> io::Result<()> {
        #[cfg(unix)]
        let deadline = Instant::now() + self.read_deadline;
        while *sent < list.len() {
            match self.input.write(&list[*sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => *sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && *sent >= least => return Ok(()),
                #[cfg(unix)]
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    crate::sys_pipe::wait_ready([Some(std::os::fd::AsFd::as_fd(&self.input))], deadline)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads the line git gives before an object, appended to `raw`.
    fn header(&mut self, raw: &mut Vec<u8>) -> io::Result<Header> {
        let at = raw.len();
        (&mut self.output).take(HEADER).read_until(b'\n', raw)?;
        let line = std::str::from_utf8(&raw[at..]).map_err(io::Error::other)?;
        let f: Vec<&str> = line.trim_end().split(' ').collect();
        match f.as_slice() {
            [_, kind, size] if line.ends_with('\n') => match size.parse::<u64>() {
                Ok(size) => Ok(Header::Object { blob: *kind == "blob", size }),
                Err(e) => Err(io::Error::other(e)),
            },
            [_, _] if line.ends_with('\n') => Ok(Header::Absent),
            _ => Err(io::Error::other("git cat-file answered something unexpected")),
        }
    }
}

impl Drop for CatFile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Each blob's size (`git cat-file --batch-check`), in the order of `oids`; `u64::MAX` for one
/// git does not have.
pub fn sizes(git: &Git, oids: &[&str]) -> Result<Vec<u64>, GitError> {
    let list: String = oids.iter().map(|o| format!("{o}\n")).collect();
    let out = git.run(&["cat-file", "--batch-check=%(objectname) %(objectsize)"], Some(list.as_bytes()))?;
    let known: HashMap<&str, u64> = std::str::from_utf8(&out)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' ').and_then(|(oid, n)| Some((oid, n.parse().ok()?))))
        .collect();
    Ok(oids.iter().map(|o| known.get(o).copied().unwrap_or(u64::MAX)).collect())
}

/// A round's answer, once git gave it.
type Slot = Arc<Mutex<Option<io::Result<Vec<u8>>>>>;

/// Reads the blobs `oids` (of `sizes`, from [`sizes`]) through `cat` in rounds of at most
/// `files` blobs and `bytes` bytes (a larger blob alone), and calls `each(first, blobs)` for
/// each round in order: `first` is the round's first index in `oids`, and `blobs[i]` the blob
/// of `oids[first + i]` (`None`: git did not give it as asked). A failed read or `each` ends
/// the reading there. While `each` runs, a helper of the core's executor reads the next round
/// (one round waiting: memory stays at about two rounds); with none free, it is read after.
pub fn in_rounds<E: From<io::Error>>(
    cat: CatFile,
    oids: &[&str],
    sizes: &[u64],
    files: usize,
    bytes: u64,
    mut each: impl FnMut(usize, &mut [Option<&[u8]>]) -> Result<(), E>,
) -> Result<(), E> {
    let mut rounds = Vec::new();
    let mut start = 0;
    while start < oids.len() {
        let (mut end, mut used) = (start, 0u64);
        while end < oids.len() && end - start < files.max(1) && (end == start || used + sizes[end] <= bytes) {
            used = used.saturating_add(sizes[end]);
            end += 1;
        }
        rounds.push(start..end);
        start = end;
    }
    let cat = Arc::new(Mutex::new(cat));
    let offer = |r: &std::ops::Range<usize>| {
        let list: Vec<String> = oids[r.clone()].iter().map(|o| o.to_string()).collect();
        let slot = Slot::default();
        let (filled, cat) = (Arc::clone(&slot), Arc::clone(&cat));
        // Any number of copies may run (the job's contract): only the first reads the round.
        let body = move || {
            let mut into = filled.lock().unwrap_or_else(|p| p.into_inner());
            if into.is_none() {
                let ids: Vec<&str> = list.iter().map(String::as_str).collect();
                *into = Some(cat.lock().unwrap_or_else(|p| p.into_inner()).answers(&ids));
            }
        };
        (hyperseal::exec::start(2, Arc::new(body)), slot)
    };
    let mut next = rounds.first().map(offer);
    for (k, round) in rounds.iter().enumerate() {
        let (job, slot) = next.take().expect("offered");
        job.join();
        let got = slot.lock().unwrap_or_else(|p| p.into_inner()).take().expect("read by the job");
        next = rounds.get(k + 1).map(offer);
        let out = got?;
        let mut blobs = parse_batch(&out, &oids[round.clone()]);
        each(round.start, &mut blobs)?;
    }
    Ok(())
}

/// The blobs git stored, as the filter compares with them ([`crate::Repo::stored`]): each
/// path's blob in the index (else in HEAD), read through one [`CatFile`] for the whole filter
/// process.
pub struct Stored {
    git: Git,
    read_deadline: Duration,
    index_file: PathBuf,
    /// The index file's size and modification time when `index` was read.
    index_stamp: Option<(u64, Option<SystemTime>)>,
    index: Option<HashMap<String, String>>,
    head: Option<HashMap<String, String>>,
    cat: Option<CatFile>,
}

impl Stored {
    /// The blobs `git` sees, with the index in `index_file` (the repository's, or the one git
    /// handed its filter), each read from `git cat-file` bounded by `read_deadline`.
    pub fn new(git: Git, index_file: PathBuf, read_deadline: Duration) -> Self {
        Stored { git, read_deadline, index_file, index_stamp: None, index: None, head: None, cat: None }
    }

    /// Forgets the index and HEAD read earlier when git wrote a new index since: one git
    /// command (a rebase, a checkout) moves the index several times, and comparing with an
    /// old blob would seal unchanged plaintext again. `git add` writes its index only at the
    /// end, so it reads the index once.
    fn refresh(&mut self) {
        let stamp = std::fs::metadata(&self.index_file).ok().map(|m| (m.len(), m.modified().ok()));
        if stamp != self.index_stamp {
            self.index_stamp = stamp;
            self.index = None;
            self.head = None;
        }
    }

    /// Writes the blob stored for `path` into `into`; `false` for a path git has not stored.
    pub fn stored(&mut self, path: &str, into: &mut Spool) -> io::Result<bool> {
        // The index first: `git add` compares with what is staged, and `stash` or `commit -a`
        // point git's filter at their own index. HEAD for a path that was removed from the
        // index and is added again.
        self.refresh();
        if self.index.is_none() {
            self.index = Some(tree(&self.git.run(&["ls-files", "-s", "-z"], None)?, true));
        }
        let mut oid = self.index.as_ref().and_then(|m| m.get(path)).cloned();
        if oid.is_none() {
            if self.head.is_none() {
                let listed = self.git.run(&["ls-tree", "-r", "-z", "HEAD"], None).unwrap_or_default();
                self.head = Some(tree(&listed, false));
            }
            oid = self.head.as_ref().and_then(|m| m.get(path)).cloned();
        }
        let Some(oid) = oid else { return Ok(false) };
        let cat = match &mut self.cat {
            Some(cat) => cat,
            None => self.cat.insert(CatFile::start(&self.git, self.read_deadline)?),
        };
        cat.blob(&oid, into)
    }
}

/// Path → object id from `ls-files -s -z` (`MODE OID STAGE\tPATH`, stage 0 only) or from
/// `ls-tree -r -z` (`MODE TYPE OID\tPATH`, blobs only).
pub fn tree(listed: &[u8], index: bool) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for entry in listed.split(|b| *b == 0) {
        let text = String::from_utf8_lossy(entry);
        let Some((meta, path)) = text.split_once('\t') else { continue };
        let f: Vec<&str> = meta.split(' ').collect();
        let oid = match (index, f.as_slice()) {
            (true, [_, oid, "0"]) => oid,
            (false, [_, "blob", oid]) => oid,
            _ => continue,
        };
        map.insert(path.to_string(), oid.to_string());
    }
    map
}

/// `git cat-file --batch`'s answer for `oids`, one blob per id in order (`None` for one git did
/// not give as asked), each a slice of `out`.
fn parse_batch<'a>(mut out: &'a [u8], oids: &[&str]) -> Vec<Option<&'a [u8]>> {
    let mut blobs = Vec::with_capacity(oids.len());
    for want in oids {
        // "<oid> blob <size>\n<content>\n", or "<oid> missing\n".
        let Some(nl) = out.iter().position(|&b| b == b'\n') else { break };
        let mut f = out[..nl].split(|&b| b == b' ');
        out = &out[nl + 1..];
        let (oid, kind) = (f.next(), f.next());
        let Some(size) = f.next().and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok()) else {
            blobs.push(None);
            continue;
        };
        // An answer cut short: nothing after it can be trusted.
        if size >= out.len() {
            break;
        }
        let fits = oid == Some(want.as_bytes()) && kind == Some(b"blob".as_slice());
        blobs.push(fits.then(|| &out[..size]));
        out = &out[size + 1..];
    }
    blobs.resize(oids.len(), None);
    blobs
}

#[cfg(test)]
mod tests {
    use super::parse_batch;

    #[test]
    fn git_s_batch_answer_is_read_blob_by_blob_and_a_short_one_stops_it() {
        let oids = ["aa", "bb", "cc", "dd", "ee"];
        // A blob, one missing, a tree where a blob was asked, another blob; then one cut short.
        let out = b"aa blob 3\nabc\nbb missing\ncc tree 2\nxy\ndd blob 0\n\nee blob 9\nshort";
        let got = parse_batch(out, &oids);
        assert_eq!(got, vec![Some(&b"abc"[..]), None, None, Some(&b""[..]), None]);
        // Answers out of order are not taken for the ids asked.
        assert_eq!(parse_batch(b"bb blob 1\nz\n", &oids[..1]), vec![None]);
    }
}

#[cfg(test)]
mod with_git {
    use super::*;

    /// A repository holding `blobs`, and their ids.
    fn repo(blobs: &[Vec<u8>]) -> (tempfile::TempDir, Git, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let git = Git::new("git", Duration::from_secs(60)).in_dir(dir.path());
        git.run(&["init", "-q"], None).unwrap();
        let mut paths = Vec::new();
        for (i, b) in blobs.iter().enumerate() {
            let p = dir.path().join(format!("b{i}"));
            std::fs::write(&p, b).unwrap();
            paths.extend_from_slice(format!("{}\n", p.display()).as_bytes());
        }
        let out = git.run(&["hash-object", "-w", "--stdin-paths"], Some(&paths)).unwrap();
        let oids = String::from_utf8(out).unwrap().lines().map(str::to_string).collect();
        (dir, git, oids)
    }

    #[test]
    fn one_client_reads_one_blob_many_at_once_and_in_rounds() {
        let blobs: Vec<Vec<u8>> = (0..300u32).map(|i| vec![i as u8; (i as usize * 997) % 5000]).collect();
        let (_dir, git, oids) = repo(&blobs);
        let ids: Vec<&str> = oids.iter().map(String::as_str).collect();
        let mut cat = CatFile::start(&git, READ_DEADLINE).unwrap();
        let mut one = Vec::new();
        assert!(cat.blob(ids[7], &mut one).unwrap());
        assert_eq!(one, blobs[7]);
        assert!(!cat.blob(&"0".repeat(40), &mut Vec::new()).unwrap(), "missing");
        let answer = cat.answers(&ids).unwrap();
        let got = parse_batch(&answer, &ids);
        assert!(got.iter().zip(&blobs).all(|(g, b)| *g == Some(b.as_slice())));

        let sizes = sizes(&git, &ids).unwrap();
        assert!(sizes.iter().zip(&blobs).all(|(s, b)| *s == b.len() as u64));
        let mut seen = vec![false; ids.len()];
        in_rounds::<io::Error>(cat, &ids, &sizes, 40, 50_000, |first, round| {
            assert!(round.len() <= 40);
            for (k, blob) in round.iter().enumerate() {
                assert_eq!(*blob, Some(blobs[first + k].as_slice()));
                seen[first + k] = true;
            }
            Ok(())
        })
        .unwrap();
        assert!(seen.iter().all(|s| *s));
    }
}
