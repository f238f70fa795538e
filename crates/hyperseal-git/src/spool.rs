//! Where the filter keeps a file while git is still sending it. git writes a whole file to the
//! filter before it reads any answer, so the answer waits somewhere: in memory up to
//! [`IN_MEMORY`], then in an unnamed file (created, then unlinked at once) in a folder the
//! caller chooses, inside `.git`. Only ciphertext is ever spooled: the clean side spools what it
//! sealed, the smudge side what git stored; plaintext goes from git's pipe to the cipher and
//! from the cipher to git's pipe.

use std::fs::{File, OpenOptions};
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Reads until `buf` is full or the input ends; how many bytes were read.
pub fn read_full(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Bytes kept in memory before the spool moves to a file: large enough that a typical secret
/// file never touches the disk, small enough for the filter's 64 MiB memory budget.
pub const IN_MEMORY: usize = 4 << 20;

/// A `Read` and `Seek` over spooled bytes.
pub trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

/// Bytes written once, then read back (perhaps several times).
pub struct Spool {
    dir: PathBuf,
    mem: Vec<u8>,
    file: Option<File>,
    len: u64,
}

impl Spool {
    /// An empty spool that moves past [`IN_MEMORY`] into an unnamed file in `dir`.
    pub fn new(dir: &Path) -> Self {
        Spool { dir: dir.to_path_buf(), mem: Vec::new(), file: None, len: 0 }
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the bytes begin with `prefix` (an age file's first line, say).
    pub fn starts_with(&self, prefix: &[u8]) -> io::Result<bool> {
        let mut start = vec![0u8; prefix.len()];
        let mut r = self.reader()?;
        let got = read_full(&mut r, &mut start)?;
        Ok(got == prefix.len() && start == prefix)
    }

    /// A reader from the first byte.
    pub fn reader(&self) -> io::Result<Box<dyn ReadSeek + Send + '_>> {
        match self.file.as_ref() {
            Some(mut f) => {
                f.seek(SeekFrom::Start(0))?;
                Ok(Box::new(f))
            }
            None => Ok(Box::new(Cursor::new(&self.mem[..]))),
        }
    }

    /// Forgets what was written (the file, if any, is truncated and reused).
    pub fn clear(&mut self) -> io::Result<()> {
        self.mem.clear();
        if let Some(f) = &mut self.file {
            f.set_len(0)?;
            f.seek(SeekFrom::Start(0))?;
        }
        self.len = 0;
        Ok(())
    }

    /// Copies everything spooled to `out`.
    pub fn copy_to(&self, out: &mut dyn Write) -> io::Result<u64> {
        io::copy(&mut self.reader()?, out)
    }

    fn move_to_file(&mut self) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut name = [0u8; 12];
        hyperseal::fill_random(&mut name).map_err(hyperseal::Error::into_io)?;
        let path = self.dir.join(format!("spool-{}", hex(&name)));
        let mut f = OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
        // Unnamed from here on: nothing to clean up after a killed filter (on Unix; elsewhere
        // removal fails while the file is open, and the name stays until the next run).
        let _ = std::fs::remove_file(&path);
        f.write_all(&self.mem)?;
        self.mem = Vec::new();
        self.file = Some(f);
        Ok(())
    }
}

impl Write for Spool {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.mem.len() + data.len() > IN_MEMORY {
            self.move_to_file()?;
        }
        match &mut self.file {
            Some(f) => f.write_all(data)?,
            None => self.mem.extend_from_slice(data),
        }
        self.len += data.len() as u64;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_to_an_unnamed_file_past_the_memory_bound() {
        let dir = std::env::temp_dir().join(format!("hyperseal-spool-{}", std::process::id()));
        let mut s = Spool::new(&dir);
        let block = vec![7u8; 1 << 20];
        for _ in 0..5 {
            s.write_all(&block).unwrap();
        }
        assert!(s.file.is_some());
        assert_eq!(s.len(), 5 << 20);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the spool file has no name");
        let mut back = Vec::new();
        s.reader().unwrap().read_to_end(&mut back).unwrap();
        assert_eq!(back.len(), 5 << 20);
        s.clear().unwrap();
        s.write_all(b"age").unwrap();
        assert!(s.starts_with(b"age").unwrap() && !s.starts_with(b"agex").unwrap());
        let _ = std::fs::remove_dir(&dir);
    }
}
