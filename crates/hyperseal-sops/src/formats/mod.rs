//! sops's stores, one file each: which file names sops reads as the format, how a file of it is
//! recognised as a sops file, where its metadata and age entries are and how a new age list is
//! written ([`Layout`]), and its values in sops's walk order for `--rotate` ([`Values`]).
//!
//! Adding a sops format means one new file in `formats/` and one arm of the `formats!` list
//! below: the file defines a [`Store`] and names it `STORE`; the arm declares the file's module
//! and the [`Format`] variant. Nothing outside this folder matches on a `Format`: the re-key,
//! `--rotate`, the unlock of a window of files and the folder walk all ask through [`Store`], so
//! the compiler finds every place a new format has to answer.
//!
//! sops's binary store wraps the file in JSON, so binary files are read by `json.rs`, which is
//! also the format of every file name no other format claims (as sops picks it).

use crate::model::{refuse, Layout, MAX_FILE};
use crate::values::Values;
use hyperseal::Error;

/// What a format's file gives: the one surface every sops operation asks a format through.
pub(crate) trait Store {
    /// The names sops's `--input-type` gives it.
    fn names(&self) -> &'static [&'static str];
    /// The extensions of the file names sops reads as it.
    fn extensions(&self) -> &'static [&'static str];
    /// Whether `input` carries sops metadata; `text` is `input` when it is UTF-8 and no larger
    /// than a sops file may be, so that a parser never walks a hostile size.
    fn looks_like_sops(&self, input: &[u8], text: Option<&str>) -> bool;
    /// Where the file's metadata and age entries are, and how a new age list is written.
    fn layout<'a>(&self, text: &'a str) -> Result<Box<dyn Layout + 'a>, Error>;
    /// The file's values, sealed or not, as `--rotate` moves them to a new data key.
    fn values(&self, text: &str) -> Result<Values, Error>;
}

/// The enum, its modules and the one dispatch from a variant to its file's `STORE`, written
/// once from the list below so that a format is one line there.
macro_rules! formats {
    ($($(#[$doc:meta])* $arm:ident: mod $file:ident;)*) => {
        $(pub(super) mod $file;)*

        /// How sops stores the file, as it picks it from the name (binary files are JSON-wrapped).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Format {
            $($(#[$doc])* $arm,)*
        }

        impl Format {
            /// Every format, in the order a name or an extension is looked up.
            pub(crate) const ALL: &'static [Format] = &[$(Format::$arm),*];

            fn store(self) -> &'static dyn Store {
                match self {
                    $(Format::$arm => $file::STORE,)*
                }
            }
        }
    };
}

formats! {
    /// `.yaml`, `.yml`.
    Yaml: mod yaml;
    /// `.json`, and every other name (sops's binary store is JSON).
    Json: mod json;
    /// `.env`.
    Dotenv: mod dotenv;
    /// `.ini`.
    Ini: mod ini;
}

/// The format of a file name that no format claims: sops reads it with its binary store,
/// which is JSON.
const UNCLAIMED: Format = Format::Json;

impl Format {
    /// The format sops reads a file of this name as.
    pub fn for_path(path: &std::path::Path) -> Format {
        let ext = path.extension().and_then(|e| e.to_str());
        Format::ALL
            .iter()
            .copied()
            .find(|f| ext.is_some_and(|e| f.store().extensions().contains(&e)))
            .unwrap_or(UNCLAIMED)
    }

    /// The format by its name as sops's `--input-type` gives it: `yaml`, `json`, `binary`
    /// (sops stores binary files as JSON), `dotenv` or `ini`.
    pub fn from_name(name: &str) -> Result<Format, Error> {
        if let Some(f) = Format::ALL.iter().copied().find(|f| f.store().names().contains(&name)) {
            return Ok(f);
        }
        let names: Vec<&str> = Format::ALL.iter().flat_map(|f| f.store().names()).copied().collect();
        let listed = match names.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        Err(refuse(format!("format: {name:?} is not {listed}")))
    }

    /// The file's layout, by its format's parser.
    pub(crate) fn layout(self, text: &str) -> Result<Box<dyn Layout + '_>, Error> {
        self.store().layout(text)
    }

    /// A file's bytes as its text and its layout, both re-key and rotation reading it alike:
    /// bounded by [`MAX_FILE`] before anything is parsed, and UTF-8 or not a sops file.
    pub(crate) fn read(self, input: &[u8]) -> Result<(&str, Box<dyn Layout + '_>), Error> {
        if input.len() > MAX_FILE {
            return Err(hyperseal::limits::too_long("a sops file", MAX_FILE));
        }
        let text = std::str::from_utf8(input).map_err(|_| refuse("not a sops file: not UTF-8 text"))?;
        Ok((text, self.layout(text)?))
    }

    /// The file's values, by its format's parser.
    pub(crate) fn values(self, text: &str) -> Result<Values, Error> {
        self.store().values(text)
    }
}

/// Whether `input` carries sops metadata at all (a folder walk skips files that do not, and
/// fails those that do but cannot be read). A YAML or JSON file whose `sops` member is not a
/// mapping (`sops: a note`) has none: sops metadata is always one. A file that does not parse
/// is sorted by its bytes (a `sops` key in it), so a damaged sops file is still one, and
/// [`rekey`](super::rekey) says what is wrong with it.
pub fn looks_like_sops(input: &[u8], format: Format) -> bool {
    let text = std::str::from_utf8(input).ok().filter(|_| input.len() <= MAX_FILE);
    format.store().looks_like_sops(input, text)
}

/// Whether `needle` is somewhere in `input`: how a file that does not parse is sorted.
fn contains(input: &[u8], needle: &[u8]) -> bool {
    input.windows(needle.len()).any(|w| w == needle)
}
