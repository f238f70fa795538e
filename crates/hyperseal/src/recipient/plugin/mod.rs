//! age plugins (C2SP age-plugin.md): `age1NAME1…` recipients and `AGE-PLUGIN-NAME-1…`
//! identities are handled by a program `age-plugin-NAME`, found on `PATH`, which speaks the
//! `recipient-v1` / `identity-v1` state machines over its stdin/stdout ([`v1`], [`conn`]).
//!
//! A key string that names a plugin makes us run a program, so plugins are off unless the
//! caller turns them on: [`Callbacks::plugins`] answers [`Plugins::Refuse`] by default
//! ([`NoCallbacks`](super::NoCallbacks) included), and then every plugin recipient or identity
//! is refused when it is parsed, before any program is looked up or started. A server that
//! encrypts to keys its users send keeps the default; the CLI, like age, allows them. The
//! bindings pass their `allowPlugins` / `allow_plugins` option through as [`Plugins`].
//!
//! Two rules keep a hostile recipient or identity string from running an arbitrary program
//! where plugins are allowed (age's GHSA-32gq-x56h-299c, and the rage fix for the same): NAME
//! may only hold letters, digits and `-_.+` (the spec's `1*(ALPHA / DIGIT / "-" / "_" / "." /
//! "+")`), so it can never name a path; and only absolute `PATH` entries are searched, so an
//! empty entry or `.` never makes the current directory a plugin directory.
//!
//! A running plugin is an untrusted peer ([`conn`], [`wire`]): the whole exchange has one
//! deadline ([`Callbacks::plugin_timeout`]) that every read and every write draws on; what it
//! sends is capped (per message [`limits::PLUGIN_MESSAGE`](crate::limits::PLUGIN_MESSAGE), in
//! all [`PLUGIN_BYTES`](crate::limits::PLUGIN_BYTES) and
//! [`PLUGIN_MESSAGES`](crate::limits::PLUGIN_MESSAGES), at most
//! [`PLUGIN_STANZAS`](crate::limits::PLUGIN_STANZAS) stanzas of
//! [`STANZA_BODY`](crate::limits::STANZA_BODY) bytes) and queued on a bounded channel; after a
//! timeout, a protocol error or a cap it is killed with its process group before it is
//! reaped; its stderr and every text it sends reach the user only through a printable filter
//! (no terminal escapes, no bidirectional overrides, no line breaks).
//!
//! ```no_run
//! use std::sync::Arc;
//! use hyperseal::recipient::plugin::{PluginIdentity, Plugins};
//! // `age -j batchpass`: an identity without data, answered by age-plugin-batchpass.
//! // `Plugins::Allow` is also the callbacks of a caller that allows plugins and answers nothing.
//! let id = PluginIdentity::without_data("batchpass", Arc::new(Plugins::Allow)).unwrap();
//! assert_eq!(id.name(), "batchpass");
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use zeroize::Zeroizing;

use super::bech32_long;
use super::callbacks::Callbacks;
pub use super::callbacks::Plugins;
use super::traits::{Identity, Labels, Recipient};
use crate::format::Stanza;
use crate::{error::Error, file_key::FileKey};

mod conn;
mod unicode_table;
mod v1;
mod wire;
pub use crate::sys::adopt_orphans;
#[doc(hidden)]
pub use conn::read_plugin_output;

/// Prefix of plugin identities (`AGE-PLUGIN-NAME-1…`).
pub const IDENTITY_PREFIX: &str = "AGE-PLUGIN-";

/// Whether a plugin name is allowed: non-empty, letters, digits and `-_.+` only.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.+".contains(&b))
}

fn checked_name(name: &str) -> Result<String, Error> {
    if valid_name(name) {
        Ok(name.to_ascii_lowercase())
    } else {
        Err(Error::Plugin(format!(
            "invalid plugin name {:?}: only letters, digits and - _ . + are allowed",
            name.chars().take(40).collect::<String>()
        )))
    }
}

/// `age-plugin-NAME` in the first absolute `PATH` directory that has it as an executable file.
pub fn find_binary(name: &str) -> Result<PathBuf, Error> {
    // WebAssembly in a page has no PATH and no programs (its std even panics on `split_paths`):
    // no plugin is ever found there.
    if cfg!(target_arch = "wasm32") {
        let name = checked_name(name)?;
        return Err(Error::Plugin(format!("age-plugin-{name} not found on PATH (no programs run here)")));
    }
    find_binary_in(name, &std::env::var_os("PATH").unwrap_or_default())
}

fn find_binary_in(name: &str, path: &std::ffi::OsStr) -> Result<PathBuf, Error> {
    let name = checked_name(name)?;
    let file = format!("age-plugin-{name}{}", std::env::consts::EXE_SUFFIX);
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(&file))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file() && crate::sys::is_executable(&m)))
        .ok_or_else(|| Error::Plugin(format!("{file} not found on PATH")))
}

/// The identity string `AGE-PLUGIN-NAME-1…` of plugin `name` carrying `data` (upper case, as
/// age writes identities).
pub fn identity_string(name: &str, data: &[u8]) -> String {
    bech32_long::encode(&format!("{IDENTITY_PREFIX}{name}-"), data).to_ascii_uppercase()
}

/// The plugin name (lower case) and data of an identity string `AGE-PLUGIN-NAME-1…`.
pub fn identity_data(s: &str) -> Result<(String, Vec<u8>), Error> {
    let (hrp, data) =
        bech32_long::decode(s).map_err(|e| Error::InvalidKey(format!("plugin identity: {e}")))?;
    let name = hrp
        .strip_prefix("age-plugin-")
        .and_then(|n| n.strip_suffix('-'))
        .ok_or_else(|| Error::InvalidKey("plugin identities look like AGE-PLUGIN-NAME-1…".into()))?;
    Ok((checked_name(name)?, data))
}

/// Whether `s` is a plugin recipient: bech32 with HRP `age1NAME` (not a native `age1…` key).
pub fn is_recipient(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    lower.starts_with("age1") && lower.rfind('1').is_some_and(|i| i > 3)
}

/// A recipient handled by a plugin.
pub struct PluginRecipient {
    name: String,
    encoding: Zeroizing<String>,
    /// The encoding is an identity (`encrypt -i`, `-j`): sent with `add-identity`.
    identity: bool,
    callbacks: Arc<dyn Callbacks>,
}

impl std::fmt::Debug for PluginRecipient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PluginRecipient(age-plugin-{})", self.name)
    }
}

impl PluginRecipient {
    /// Parses `age1NAME1…`; refused unless `callbacks` allow plugins ([`Callbacks::plugins`]).
    pub fn from_bech32(s: &str, callbacks: Arc<dyn Callbacks>) -> Result<Self, Error> {
        let (hrp, _) =
            bech32_long::decode(s).map_err(|e| Error::InvalidRecipient(format!("plugin recipient: {e}")))?;
        let name = checked_name(
            hrp.strip_prefix("age1")
                .ok_or_else(|| Error::InvalidRecipient("plugin recipients start with age1NAME1".into()))?,
        )?;
        callbacks.plugins().check(&name)?;
        Ok(PluginRecipient { name, encoding: Zeroizing::new(s.to_string()), identity: false, callbacks })
    }

    /// The plugin name (lower case).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The recipient of a plugin identity (the plugin wraps to the identity itself).
    pub fn from_identity(id: &PluginIdentity) -> Self {
        PluginRecipient {
            name: id.name.clone(),
            encoding: id.encoding.clone(),
            identity: true,
            callbacks: id.callbacks.clone(),
        }
    }
}

impl Recipient for PluginRecipient {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        let binary = find_binary(&self.name)?;
        v1::wrap(&self.name, &binary, &self.encoding, self.identity, file_key, self.callbacks.as_ref())
    }

    fn key_id(&self) -> Option<Vec<u8>> {
        // A plugin identity's encoding may be key material: only its MAC under a fixed key is
        // kept to compare. bech32 is case-insensitive, so `AGE1…` and `age1…` are one recipient.
        let encoding = Zeroizing::new(self.encoding.to_ascii_lowercase());
        let kind: &[u8] = if self.identity { b"identity" } else { b"recipient" };
        let id = crate::crypto::hmac_sha256(
            b"hyperseal plugin key id",
            &[self.name.as_bytes(), kind, encoding.as_bytes()],
        );
        Some(id.to_vec())
    }
}

/// An identity handled by a plugin. The encoding may hold key material: zeroized, redacted.
pub struct PluginIdentity {
    name: String,
    encoding: Zeroizing<String>,
    callbacks: Arc<dyn Callbacks>,
}

impl std::fmt::Debug for PluginIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PluginIdentity(age-plugin-{}, redacted)", self.name)
    }
}

impl PluginIdentity {
    /// Parses `AGE-PLUGIN-NAME-1…`; refused unless `callbacks` allow plugins.
    pub fn from_bech32(s: &str, callbacks: Arc<dyn Callbacks>) -> Result<Self, Error> {
        let (hrp, _) =
            bech32_long::decode(s).map_err(|e| Error::InvalidKey(format!("plugin identity: {e}")))?;
        let name = hrp
            .strip_prefix("age-plugin-")
            .and_then(|n| n.strip_suffix('-'))
            .ok_or_else(|| Error::InvalidKey("plugin identities look like AGE-PLUGIN-NAME-1…".into()))?;
        let name = checked_name(name)?;
        callbacks.plugins().check(&name)?;
        Ok(PluginIdentity { name, encoding: Zeroizing::new(s.to_string()), callbacks })
    }

    /// The identity of a plugin without data (age's `-j NAME`); refused unless `callbacks`
    /// allow plugins.
    pub fn without_data(name: &str, callbacks: Arc<dyn Callbacks>) -> Result<Self, Error> {
        let name = checked_name(name)?;
        callbacks.plugins().check(&name)?;
        let hrp = format!("{IDENTITY_PREFIX}{}-", name.to_ascii_uppercase());
        let encoding = Zeroizing::new(bech32_long::encode(&hrp, &[]).to_ascii_uppercase());
        Ok(PluginIdentity { name, encoding, callbacks })
    }

    /// The plugin name (lower case).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Identity for PluginIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        self.unwrap_stanzas(std::slice::from_ref(stanza))
    }

    /// One plugin run per file: every stanza is offered at once, as age does.
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, Error>> {
        let binary = match find_binary(&self.name) {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        v1::unwrap(&self.name, &binary, &self.encoding, stanzas, self.callbacks.as_ref()).transpose()
    }

    fn unwraps_in_batches(&self) -> bool {
        true
    }

    /// One plugin run for up to [`limits::PLUGIN_BATCH`](crate::limits::PLUGIN_BATCH)
    /// stanzas, each offered as a file of its own, so the answer says which stanza opens (what
    /// a re-key's check that the new header still opens needs) and one broken stanza fails
    /// only itself. A plugin that asks for a PIN or a touch once per run asks once.
    fn unwrap_each(&self, stanzas: &[&Stanza]) -> Result<v1::Answers, Error> {
        let binary = find_binary(&self.name)?;
        let mut answers = Vec::with_capacity(stanzas.len());
        for batch in stanzas.chunks(crate::limits::PLUGIN_BATCH) {
            let files: Vec<&[&Stanza]> = batch.iter().map(std::slice::from_ref).collect();
            let cb = self.callbacks.as_ref();
            answers.extend(v1::unwrap_files(&self.name, &binary, &self.encoding, &files, cb)?);
        }
        Ok(answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipient::NoCallbacks;

    #[test]
    fn names_are_restricted() {
        for good in ["yubikey", "se", "fido2-hmac", "a.b_c+d", "X1"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "../x", "a/b", "a b", "a\\b", "tab\t", "é", "a:b", "$(x)"] {
            assert!(!valid_name(bad), "{bad:?}");
            assert!(matches!(find_binary(bad), Err(Error::Plugin(_))));
            assert!(PluginIdentity::without_data(bad, Arc::new(NoCallbacks)).is_err());
        }
        // A recipient whose HRP smuggles a path is refused before any lookup.
        let evil = bech32_long::encode("age1../../bin/sh", &[1, 2, 3]);
        let err = PluginRecipient::from_bech32(&evil, Arc::new(NoCallbacks)).unwrap_err().to_string();
        assert!(err.contains("invalid plugin name"), "{err}");
    }

    #[test]
    fn encodings() {
        let id = PluginIdentity::without_data("batchpass", Arc::new(Plugins::Allow)).unwrap();
        assert!(id.encoding.starts_with("AGE-PLUGIN-BATCHPASS-1"), "{}", id.encoding.as_str());
        let back = PluginIdentity::from_bech32(&id.encoding, Arc::new(Plugins::Allow)).unwrap();
        assert_eq!(back.name(), "batchpass");
        assert!(format!("{back:?}").contains("redacted"));
        let r = bech32_long::encode("age1yubikey", &[7; 33]);
        assert!(is_recipient(&r));
        assert!(!is_recipient("age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq"));
        assert_eq!(PluginRecipient::from_bech32(&r, Arc::new(Plugins::Allow)).unwrap().name, "yubikey");
    }

    /// Without an opt-in, every way a key string can name a plugin is refused when parsed, with
    /// the error that says how to allow it; with it, the keys parse (the program is looked up
    /// only when a key is used).
    #[test]
    fn plugins_are_refused_unless_allowed() {
        use crate::identity_file;
        use crate::recipient::{parse_identities_with, parse_recipient_with};
        use crate::recipient::{parse_recipients_file_with, NoCallbacks};
        let r = bech32_long::encode("age1yubikey", &[7; 33]);
        let id = PluginIdentity::without_data("yubikey", Arc::new(Plugins::Allow)).unwrap();
        let id = id.encoding.to_string();
        let refusing: [Arc<dyn Callbacks>; 2] = [Arc::new(NoCallbacks), Arc::new(Plugins::Refuse)];
        for cb in refusing {
            let errors = [
                parse_recipient_with(&r, cb.clone()).err(),
                parse_recipients_file_with(&format!("# keys\n{r}\n"), cb.clone()).err(),
                parse_identities_with(&format!("# key\n{id}\n"), cb.clone()).err(),
                identity_file::parse(id.as_bytes(), cb.clone()).err(),
                identity_file::recipients_of(id.as_bytes(), cb.clone()).err(),
                PluginIdentity::without_data("yubikey", cb.clone()).err(),
            ];
            for e in errors {
                let e = e.expect("refused");
                assert_eq!(e.code(), crate::error::ErrorCode::Key);
                let msg = e.to_string();
                assert!(msg.contains("plugins are disabled, so age-plugin-yubikey was not started"), "{msg}");
                assert!(msg.contains("allowPlugins: true") && msg.contains("allow_plugins=True"), "{msg}");
            }
        }
        assert_eq!(Plugins::default(), Plugins::Refuse);
        assert_eq!(Plugins::allowed(true), Plugins::Allow);
        let allow = || Arc::new(Plugins::Allow) as Arc<dyn Callbacks>;
        assert!(parse_recipient_with(&r, allow()).is_ok());
        assert_eq!(parse_identities_with(&id, allow()).unwrap().len(), 1);
        assert_eq!(identity_file::recipients_of(id.as_bytes(), allow()).unwrap().len(), 1);
    }

    /// PATH lookup skips relative entries (the current directory) and non-executable files.
    #[test]
    fn path_lookup_never_uses_the_current_directory() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile_dir();
        let exe = dir.join("age-plugin-hstestlookup");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o644)).unwrap();
        // Relative entries, even one naming the right directory, are skipped.
        let rel = pathdiff(&dir);
        let find = |path: String| find_binary_in("hstestlookup", std::ffi::OsStr::new(&path));
        assert!(find(format!(":.:{rel}:{}", dir.display())).is_err(), "not executable");
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find(format!(":.:{rel}:{}", dir.display())).unwrap(), exe);
        assert!(
            std::path::Path::new(&rel).join("age-plugin-hstestlookup").exists(),
            "the relative entry is right"
        );
        assert!(find(format!(":.:{rel}")).is_err(), "relative entries only");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("hs-plugin-lookup-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// `dir` relative to the current directory (as `../../tmp/…`).
    fn pathdiff(dir: &std::path::Path) -> String {
        let cwd = std::env::current_dir().unwrap();
        let ups = cwd.components().count() - 1;
        format!("{}{}", "../".repeat(ups), dir.strip_prefix("/").unwrap().display())
    }

    /// Grease and unknown commands from the plugin get `unsupported`, and the exchange goes on:
    /// a shell-script plugin sends one before its file key, and refuses unless answered so.
    #[test]
    fn unknown_plugin_commands_are_answered_unsupported() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("hs-plugin-grease-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("age-plugin-greasy");
        // The file key is 16 bytes 0x01..0x10: base64 AQIDBAUGBwgJCgsMDQ4PEA.
        let script = r#"#!/bin/sh
while IFS= read -r line; do [ "$line" = "-> done" ] && break; done
IFS= read -r _
printf -- '-> grease-zz 1 2\nZ3JlYXNl\n'
IFS= read -r reply; IFS= read -r _
if [ "$reply" != "-> unsupported" ]; then printf -- '-> error internal\nYmFk\n'; exit 1; fi
printf -- '-> file-key 0\nAQIDBAUGBwgJCgsMDQ4PEA\n'
IFS= read -r reply; IFS= read -r _
printf -- '-> done\n\n'
"#;
        std::fs::write(&exe, script).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let stanza = Stanza::new("anything", vec!["x".into()], vec![1, 2, 3]);
        let key =
            v1::unwrap("greasy", &exe, "AGE-PLUGIN-GREASY-1", &[stanza], &NoCallbacks).unwrap().unwrap();
        assert_eq!(key.expose(), (1..=16).collect::<Vec<u8>>());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// One run answers many files: a key for one, an `error stanza` that fails only its
    /// own file, nothing for a third; an answer for a file never offered ends the batch.
    #[test]
    fn a_batch_answers_each_file_on_its_own() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("hs-plugin-batch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = |answers: &str| {
            format!(
                "#!/bin/sh\nwhile IFS= read -r line; do [ \"$line\" = \"-> done\" ] && break; done\n\
                 IFS= read -r _\n{answers}printf -- '-> done\\n\\n'\n"
            )
        };
        let answer = |msg: &str| format!("printf -- '{msg}'\nIFS= read -r reply; IFS= read -r _\n");
        let exe = dir.join("age-plugin-batchy");
        let key = "-> file-key 0\\nAQIDBAUGBwgJCgsMDQ4PEA\\n";
        let broken = "-> error stanza 1 0\\nYnJva2Vu\\n";
        std::fs::write(&exe, script(&(answer(key) + &answer(broken)))).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let stanzas: Vec<Stanza> =
            (0..3u8).map(|i| Stanza::new("anything", vec![i.to_string()], vec![i; 3])).collect();
        let refs: Vec<&Stanza> = stanzas.iter().collect();
        let files: Vec<&[&Stanza]> = refs.iter().map(std::slice::from_ref).collect();
        let got = v1::unwrap_files("batchy", &exe, "AGE-PLUGIN-BATCHY-1", &files, &NoCallbacks).unwrap();
        assert_eq!(got.len(), 3);
        assert!(matches!(&got[0], Some(Ok(k)) if k.expose() == (1..=16).collect::<Vec<u8>>()));
        assert!(matches!(&got[1], Some(Err(e)) if e.to_string().contains("failed: broken")));
        assert!(got[2].is_none());

        for wrong in
            ["-> file-key 3\\nAQIDBAUGBwgJCgsMDQ4PEA\\n", "-> file-key 01\\nAQIDBAUGBwgJCgsMDQ4PEA\\n"]
        {
            std::fs::write(&exe, script(&answer(wrong))).unwrap();
            let e =
                v1::unwrap_files("batchy", &exe, "AGE-PLUGIN-BATCHY-1", &files, &NoCallbacks).unwrap_err();
            assert!(e.to_string().contains("malformed file-key"), "{e}");
        }
        std::fs::write(&exe, script(&(answer(key) + &answer(key)))).unwrap();
        let e = v1::unwrap_files("batchy", &exe, "AGE-PLUGIN-BATCHY-1", &files, &NoCallbacks).unwrap_err();
        assert!(e.to_string().contains("two answers for one file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
