//! [`IdentityFile`]: the identities of an age identity file, as age reads them, with age
//! v1.3's post-quantum identities (`AGE-SECRET-KEY-PQ-1…`) beside X25519 ones.

use std::fs::File;
use std::io::{self, BufRead, Read};

use zeroize::Zeroizing;

use crate::{pq, x25519, Callbacks, DecryptError, EncryptError, IdentityFileConvertError, NoCallbacks};

/// The most an identity file may hold (as age).
const IDENTITY_SIZE_LIMIT: u64 = 1 << 24;

/// One identity of an [`IdentityFile`].
#[derive(Clone)]
pub(crate) enum IdentityFileEntry {
    /// An X25519 identity.
    Native(x25519::Identity),
    /// A post-quantum identity (ML-KEM-768 + X25519).
    PostQuantum(pq::Identity),
    /// A plugin's identity.
    #[cfg(feature = "plugin")]
    Plugin(crate::plugin::Identity),
}

impl IdentityFileEntry {
    /// Parses one line of an identity file.
    fn parse(line: &str) -> Option<Self> {
        if let Ok(id) = line.parse::<x25519::Identity>() {
            return Some(IdentityFileEntry::Native(id));
        }
        if let Ok(id) = line.parse::<pq::Identity>() {
            return Some(IdentityFileEntry::PostQuantum(id));
        }
        #[cfg(feature = "plugin")]
        if let Ok(id) = line.parse::<crate::plugin::Identity>() {
            return Some(IdentityFileEntry::Plugin(id));
        }
        None
    }

    #[allow(unused_variables)]
    pub(crate) fn into_identity(
        self,
        callbacks: impl Callbacks,
    ) -> Result<Box<dyn crate::Identity + Send + Sync>, DecryptError> {
        match self {
            IdentityFileEntry::Native(i) => Ok(Box::new(i)),
            IdentityFileEntry::PostQuantum(i) => Ok(Box::new(i)),
            #[cfg(feature = "plugin")]
            IdentityFileEntry::Plugin(i) => {
                let plugin = crate::plugin::Plugin::new(i.plugin()).map_err(DecryptError::PluginResolve)?;
                Ok(Box::new(crate::plugin::IdentityPluginV1::from_parts(plugin, vec![i], callbacks)))
            }
        }
    }
}

/// A list of identities parsed from an identity file (at most 16 MiB).
///
/// Lines are X25519 identities (`AGE-SECRET-KEY-1…`), post-quantum identities
/// (`AGE-SECRET-KEY-PQ-1…`) and, with the `plugin` feature, plugin identities; empty lines and
/// lines starting with `#` are skipped.
pub struct IdentityFile<C: Callbacks> {
    filename: Option<String>,
    identities: Vec<IdentityFileEntry>,
    pub(crate) callbacks: C,
}

impl IdentityFile<NoCallbacks> {
    /// Parses one or more identities from a file containing valid UTF-8.
    pub fn from_file(filename: String) -> io::Result<Self> {
        let file = File::open(&filename)?;
        Self::parse_identities(Some(filename), io::BufReader::new(file))
    }

    /// Parses one or more identities from a buffered input containing valid UTF-8.
    pub fn from_buffer<R: BufRead>(data: R) -> io::Result<Self> {
        Self::parse_identities(None, data)
    }

    /// Parses one or more identities from an [`InputReader`](crate::cli_common::file_io::InputReader).
    #[cfg(feature = "cli-common")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli-common")))]
    pub fn from_input_reader(reader: crate::cli_common::file_io::InputReader) -> io::Result<Self> {
        let filename = reader.filename().map(String::from);
        Self::parse_identities(filename, io::BufReader::new(reader))
    }

    fn parse_identities<R: BufRead>(filename: Option<String>, data: R) -> io::Result<Self> {
        let mut text = Zeroizing::new(String::new());
        let mut limited = data.take(IDENTITY_SIZE_LIMIT + 1);
        limited.read_to_string(&mut text)?;
        if text.len() as u64 > IDENTITY_SIZE_LIMIT {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "identity file is larger than 16 MiB"));
        }
        let mut identities = vec![];
        for (number, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            // The line number stands in for the line, which may be a secret.
            let Some(entry) = IdentityFileEntry::parse(line) else {
                let at = match &filename {
                    Some(f) => format!("identity file {f} contains non-identity data on line {}", number + 1),
                    None => format!("identity file contains non-identity data on line {}", number + 1),
                };
                return Err(io::Error::new(io::ErrorKind::InvalidData, at));
            };
            identities.push(entry);
        }
        Ok(IdentityFile { filename, identities, callbacks: NoCallbacks })
    }
}

impl<C: Callbacks> IdentityFile<C> {
    /// Sets the callbacks a plugin identity in this file may ask the user through.
    pub fn with_callbacks<D: Callbacks>(self, callbacks: D) -> IdentityFile<D> {
        IdentityFile { filename: self.filename, identities: self.identities, callbacks }
    }

    /// Writes a recipients file with the recipient of each identity in this file.
    ///
    /// Fails on an empty file, and on a plugin identity (only the plugin knows its recipient).
    pub fn write_recipients_file<W: io::Write>(&self, mut output: W) -> Result<(), IdentityFileConvertError> {
        if self.identities.is_empty() {
            return Err(IdentityFileConvertError::NoIdentities { filename: self.filename.clone() });
        }
        for identity in &self.identities {
            let line = match identity {
                IdentityFileEntry::Native(sk) => sk.to_public().to_string(),
                IdentityFileEntry::PostQuantum(sk) => sk.to_public().to_string(),
                #[cfg(feature = "plugin")]
                IdentityFileEntry::Plugin(id) => {
                    return Err(IdentityFileConvertError::IdentityFileContainsPlugin {
                        filename: self.filename.clone(),
                        plugin_name: id.plugin().to_string(),
                    })
                }
            };
            writeln!(output, "{line}").map_err(IdentityFileConvertError::FailedToWriteOutput)?;
        }
        Ok(())
    }

    /// Returns recipients for the identities in this file; plugin identities become one
    /// recipient per plugin.
    pub fn to_recipients(&self) -> Result<Vec<Box<dyn crate::Recipient + Send>>, EncryptError> {
        let mut out: Vec<Box<dyn crate::Recipient + Send>> = vec![];
        #[cfg(feature = "plugin")]
        let mut plugin_identities = vec![];
        for identity in &self.identities {
            match identity {
                IdentityFileEntry::Native(sk) => out.push(Box::new(sk.to_public())),
                IdentityFileEntry::PostQuantum(sk) => out.push(Box::new(sk.to_public())),
                #[cfg(feature = "plugin")]
                IdentityFileEntry::Plugin(id) => plugin_identities.push(id.clone()),
            }
        }
        #[cfg(feature = "plugin")]
        out.extend(crate::plugin::recipients_for(&[], &plugin_identities, self.callbacks.clone())?);
        Ok(out)
    }

    /// Returns the identities in this file.
    pub fn into_identities(self) -> Result<Vec<Box<dyn crate::Identity + Send + Sync>>, DecryptError> {
        let callbacks = self.callbacks;
        self.identities.into_iter().map(|entry| entry.into_identity(callbacks.clone())).collect()
    }

    /// The identities, without consuming the file.
    #[allow(dead_code)]
    pub(crate) fn entries(&self) -> &[IdentityFileEntry] {
        &self.identities
    }
}
