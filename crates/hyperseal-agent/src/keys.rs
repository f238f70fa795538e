//! One key the agent holds: an identity file added to it, with its file's text (which `lock`
//! seals, `store.rs`), when it expires, and its public description. Every secret here
//! zeroizes when it is dropped: on expiry, `remove`, `lock` (after sealing) and when the agent
//! ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyperseal::agent::proto::Entry;
use hyperseal::recipient::{self, Callbacks, Identity};
use hyperseal::{identity_file, Error, FileKey};
use zeroize::Zeroizing;

use super::origin::UNKNOWN_HOST;
use super::pin::{self, PinCache, PluginCallbacks};
use super::reader::{self, Readers};
use super::relay::Relay;

/// One added identity file.
pub struct Key {
    pub(crate) name: String,
    /// The file's text (decrypted, for an `age -p` identity file): sealed by `lock`.
    pub(crate) text: Zeroizing<String>,
    /// The passphrase of a protected SSH key in it, which its text still needs after an unlock.
    pub(crate) passphrase: Option<Zeroizing<String>>,
    identities: Vec<Box<dyn Identity>>,
    pub(crate) recipient: String,
    pub(crate) fingerprint: String,
    pub(crate) expires: Option<Instant>,
    /// A file of plugin identities: the plugin runs in the agent, with this PIN cache (also a
    /// file the agent's reader reads: its PIN is cached the same way).
    plugin: Option<Arc<PluginCallbacks>>,
    /// The reader of a file the library does not read (`reader.rs`): its identities are made
    /// from `text` for each request, and `identities` is empty.
    reader: Readers,
    /// A plugin key's recipients: its plugin's `recipient-v1` with `add-identity`, as age
    /// encrypts to a plugin identity file (empty for any other key: `list` gives those).
    wrap_to: Vec<Box<dyn recipient::Recipient>>,
    /// How long a PIN the plugin accepted is cached (`None`: as long as the key).
    pub(crate) pin_ttl: Option<Duration>,
    /// The remote hosts whose forwards may use it (`*`: any), and whether each use is
    /// confirmed on this host first.
    forward: Vec<String>,
    confirm: bool,
}

/// The passphrase given at `add`, for the identity file it came with; records whether the
/// library asked for one.
struct Given {
    passphrase: Option<Zeroizing<String>>,
    asked: AtomicBool,
}

impl Callbacks for Given {
    fn request_passphrase(&self, _description: &str) -> Option<Zeroizing<String>> {
        self.asked.store(true, Ordering::SeqCst);
        self.passphrase.clone()
    }
    // Plugins are refused here, the default: a file of plugin identities is loaded with its
    // own callbacks (`pin.rs`).
}

/// Why an `add` did not take.
pub enum AddError {
    /// The file is protected and no passphrase (or a wrong one) came with it.
    NeedPassphrase(String),
    /// Anything else: the file is not an identity file.
    Refused(String),
}

impl Key {
    /// Reads an identity file's `bytes` as the CLI does, and proves the keys work now: a random
    /// file key is wrapped to each recipient and must come back, which also opens a protected
    /// SSH key, so its passphrase is asked at `add`, never at use.
    pub fn load(
        name: &str,
        bytes: &[u8],
        passphrase: Option<Zeroizing<String>>,
        lifetime: u64,
        pin_ttl: u64,
        readers: &Readers,
    ) -> Result<Key, AddError> {
        let given = Arc::new(Given { passphrase, asked: AtomicBool::new(false) });
        let failed = |e: Error, given: &Given| match e {
            Error::WrongPassphrase => AddError::NeedPassphrase("incorrect passphrase".into()),
            e if given.asked.load(Ordering::SeqCst) && given.passphrase.is_none() => {
                AddError::NeedPassphrase(e.to_string())
            }
            e if e.to_string().contains("incorrect passphrase") => AddError::NeedPassphrase(e.to_string()),
            e => AddError::Refused(e.to_string()),
        };
        let text = identity_file::text_of(bytes, given.as_ref()).map_err(|e| failed(e, &given))?;
        let expires = (lifetime > 0).then(|| Instant::now() + Duration::from_secs(lifetime));
        let pin_ttl = (pin_ttl > 0).then(|| Duration::from_secs(pin_ttl));
        if let Some(r) = readers.as_ref().filter(|r| r.reads(&text)) {
            return Key::load_read(name, text, r.clone(), expires, pin_ttl);
        }
        if let Some(names) = plugin_names(&text) {
            return Key::load_plugin(name, text, names, expires, pin_ttl);
        }
        let identities =
            recipient::parse_identities_with(&text, given.clone()).map_err(|e| failed(e, &given))?;
        let recipients =
            recipient::identity_recipients(&text, given.clone()).map_err(|e| failed(e, &given))?;
        for r in &recipients {
            let key = FileKey::generate(32);
            let Ok((stanzas, _)) = r.wrap_file_key(&key) else { continue };
            match identities.iter().find_map(|id| id.unwrap_stanzas(&stanzas)) {
                Some(Ok(k)) if k.expose() == key.expose() => {}
                Some(Err(e)) => return Err(failed(e, &given)),
                _ => {
                    return Err(AddError::Refused(
                        "the file's keys do not open what is sealed to them".into(),
                    ))
                }
            }
        }
        let recipient = describe(&text);
        let fingerprint = fingerprint(&recipient);
        let passphrase = match Arc::try_unwrap(given) {
            Ok(g) => g.passphrase,
            Err(g) => g.passphrase.clone(),
        };
        let (plugin, name, forward) = (None, name.to_string(), Vec::new());
        Ok(Key {
            name,
            text,
            passphrase,
            identities,
            recipient,
            fingerprint,
            expires,
            plugin,
            reader: None,
            wrap_to: Vec::new(),
            pin_ttl,
            forward,
            confirm: true,
        })
    }

    /// A file of plugin identities (`AGE-PLUGIN-…`). It is not proven at `add`: that would run
    /// the plugin, and ask for a PIN or a touch, with no client to ask; the first file it opens
    /// proves it. Its fingerprint is of its text (a plugin identity has no recipient we can
    /// write), under a label of its own.
    fn load_plugin(
        name: &str,
        text: Zeroizing<String>,
        names: Vec<String>,
        expires: Option<Instant>,
        pin_ttl: Option<Duration>,
    ) -> Result<Key, AddError> {
        // An agent's own identity would have the agent run age-plugin-hyperseal, which asks
        // an agent, which runs it again: refused, as a loop.
        if names.iter().any(|n| n == hyperseal::agent::PLUGIN_NAME) {
            return Err(AddError::Refused(
                "an agent identity (AGE-PLUGIN-HYPERSEAL-1…) cannot be added to an agent: it would ask itself".into(),
            ));
        }
        let callbacks = Arc::new(PluginCallbacks {
            cache: PinCache::new(pin_ttl),
            serving: std::sync::atomic::AtomicBool::new(false),
        });
        let identities = recipient::parse_identities_with(&text, callbacks.clone())
            .map_err(|e| AddError::Refused(e.to_string()))?;
        let wrap_to = recipient::identity_recipients(&text, callbacks.clone())
            .map_err(|e| AddError::Refused(e.to_string()))?;
        callbacks.serving.store(true, Ordering::SeqCst);
        let recipient = names.iter().map(|n| format!("age-plugin-{n}")).collect::<Vec<_>>().join(" ");
        let fingerprint = fingerprint(&format!("hyperseal agent plugin identity\n{}", text.as_str()));
        let (name, plugin, forward) = (name.to_string(), Some(callbacks), Vec::new());
        Ok(Key {
            name,
            text,
            passphrase: None,
            identities,
            recipient,
            fingerprint,
            expires,
            plugin,
            reader: None,
            wrap_to,
            pin_ttl,
            forward,
            confirm: true,
        })
    }

    /// A file the agent's reader reads (a TPM key). Like a plugin key it is not proven at
    /// `add` (its PIN would be needed, with no client to ask), and it shares the plugin keys'
    /// PIN cache and rules; its recipients are the reader's, so `list` shows them and age's
    /// `-e -i agent.txt` encrypts to them.
    fn load_read(
        name: &str,
        text: Zeroizing<String>,
        r: Arc<dyn reader::Reader>,
        expires: Option<Instant>,
        pin_ttl: Option<Duration>,
    ) -> Result<Key, AddError> {
        let recipients = r.recipients(&text).map_err(|e| AddError::Refused(e.to_string()))?;
        let recipient = recipients.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>().join(" ");
        let wrap_to = recipients.into_iter().map(|(_, r)| r).collect();
        let fingerprint = fingerprint(&recipient);
        let callbacks = Arc::new(PluginCallbacks {
            cache: PinCache::new(pin_ttl),
            serving: std::sync::atomic::AtomicBool::new(true),
        });
        Ok(Key {
            name: name.to_string(),
            text,
            passphrase: None,
            identities: Vec::new(),
            recipient,
            fingerprint,
            expires,
            plugin: Some(callbacks),
            reader: Some(r),
            wrap_to,
            pin_ttl,
            forward: Vec::new(),
            confirm: true,
        })
    }

    /// A read key's answers for `files`, in one try (`reader.rs`); `None`: not a read key.
    fn unwrap_read(
        &self,
        files: &[&[hyperseal::format::Stanza]],
        relay: Option<Arc<dyn Relay>>,
    ) -> Option<Vec<Option<Result<FileKey, Error>>>> {
        let (r, callbacks) = (self.reader.as_ref()?, self.plugin.as_ref()?);
        // The prompt names the file, not its folder: the path is this host's business.
        let shown = std::path::Path::new(&self.name)
            .file_name()
            .map_or(self.name.clone(), |n| n.to_string_lossy().into_owned());
        Some(reader::unwrap_files(r.as_ref(), &self.text, &shown, callbacks, files, relay))
    }

    /// A plugin key's stanzas for `key` (its plugin run as age runs it to encrypt); `None`:
    /// not a plugin key.
    pub fn wrap(&self, key: &FileKey) -> Option<Result<Vec<hyperseal::format::Stanza>, Error>> {
        self.plugin.as_ref()?;
        Some(recipient::wrap_all(&self.wrap_to, key))
    }

    /// The remote hosts it is granted to (`*`: any) and whether each use is confirmed.
    pub fn with_grants(self, forward: Vec<String>, confirm: bool) -> Key {
        Key { forward, confirm, ..self }
    }

    /// The same key, forgotten at `expires` (an unlock keeps each lifetime to the instant).
    pub(crate) fn expiring_at(self, expires: Option<Instant>) -> Key {
        Key { expires, ..self }
    }

    /// Whether a forward from `host` may use it ([`UNKNOWN_HOST`]: only a `*` grant).
    pub fn granted_to(&self, host: &str) -> bool {
        self.forward.iter().any(|h| h == "*" || (h == host && host != UNKNOWN_HOST))
    }

    /// Whether a forwarded use must be confirmed on this host first.
    #[cfg_attr(windows, allow(dead_code))] // no forwards on Windows
    pub fn confirms(&self) -> bool {
        self.confirm
    }

    /// Its fingerprint (`SHA256:…`).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Its fingerprint and file, to name it in a question on this host.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.fingerprint, self.name)
    }

    /// Whether it is a file of plugin identities (its plugin runs in the agent).
    pub fn is_plugin(&self) -> bool {
        self.plugin.is_some()
    }

    /// Whether its lifetime is over at `now`.
    pub fn expired(&self, now: Instant) -> bool {
        self.expires.is_some_and(|t| t <= now)
    }

    /// Zeroizes the PINs of its cache whose lifetime is over at `now`.
    pub fn prune_pins(&self, now: Instant) {
        if let Some(callbacks) = &self.plugin {
            callbacks.cache.prune(now);
        }
    }

    /// This key's answer for one file's stanzas: the first definite answer of its identities.
    /// A plugin key asks through `relay` (the client that sent the request), if any.
    pub fn unwrap(
        &self,
        stanzas: &[hyperseal::format::Stanza],
        relay: Option<Arc<dyn Relay>>,
    ) -> Option<Result<FileKey, Error>> {
        if let Some(mut each) = self.unwrap_read(&[stanzas], relay.clone()) {
            return each.pop().flatten();
        }
        let try_all = || self.identities.iter().find_map(|id| id.unwrap_stanzas(stanzas));
        match &self.plugin {
            None => try_all(),
            Some(callbacks) => pin::with_run(callbacks, relay, try_all, pin::verdict_of),
        }
    }

    /// A plugin key's answers for a window of files of one stanza each (a tree re-key's), in
    /// one run of its plugin per identity, as a direct run takes them: one PIN, one touch.
    /// `None`: not a plugin key, or not such a window (each file is then tried on its own).
    pub fn unwrap_window(
        &self,
        files: &[Vec<hyperseal::format::Stanza>],
        relay: Option<Arc<dyn Relay>>,
    ) -> Option<Vec<Option<Result<FileKey, Error>>>> {
        // A read key takes any request whole: its set-up and PIN are per try, not per stanza.
        if self.reader.is_some() {
            let whole: Vec<&[hyperseal::format::Stanza]> = files.iter().map(Vec::as_slice).collect();
            return self.unwrap_read(&whole, relay);
        }
        let callbacks = self.plugin.as_ref()?;
        if files.len() < 2 || files.iter().any(|f| f.len() != 1) {
            return None;
        }
        let mut answers: Vec<Option<Result<FileKey, Error>>> = files.iter().map(|_| None).collect();
        for id in &self.identities {
            let open: Vec<usize> = (0..files.len()).filter(|&i| answers[i].is_none()).collect();
            if open.is_empty() {
                break;
            }
            let stanzas: Vec<&hyperseal::format::Stanza> = open.iter().map(|&i| &files[i][0]).collect();
            let run = || id.unwrap_each(&stanzas);
            let verdict = |r: &Result<Vec<Option<Result<FileKey, Error>>>, Error>| match r {
                Ok(each) if each.iter().any(|a| matches!(a, Some(Ok(_)))) => pin::Verdict::Accepted,
                Ok(each) if each.iter().any(|a| matches!(a, Some(Err(_)))) => pin::Verdict::Failed,
                Ok(_) => pin::Verdict::Neither,
                Err(_) => pin::Verdict::Failed,
            };
            match pin::with_run(callbacks, relay.clone(), run, verdict) {
                Ok(each) => {
                    for (&i, a) in open.iter().zip(each) {
                        answers[i] = a;
                    }
                }
                // The batch failed as a whole: every file still open has that error.
                Err(e) => {
                    let why = e.to_string();
                    for &i in &open {
                        answers[i] = Some(Err(Error::Plugin(why.clone())));
                    }
                }
            }
        }
        Some(answers)
    }

    /// Whether `selector` names it: its fingerprint (or a prefix of 8 or more characters),
    /// its file name, or anything when empty.
    pub fn selected_by(&self, selector: &str) -> bool {
        selector.is_empty()
            || self.name == selector
            || (selector.len() >= 8 && self.fingerprint.starts_with(selector))
    }

    /// What `list` shows.
    pub fn entry(&self, now: Instant) -> Entry {
        Entry {
            name: self.name.clone(),
            recipient: self.recipient.clone(),
            fingerprint: self.fingerprint.clone(),
            expires_in: self.expires.map_or(0, |t| t.saturating_duration_since(now).as_secs().max(1)),
            forward: self.forward.clone(),
            confirm: self.confirm,
        }
    }
}

/// The plugin names of a text of plugin identities, or `None` if it holds any other kind (a
/// file mixing both is loaded as a plain file: its plugin lines are refused there).
fn plugin_names(text: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if !line.starts_with("AGE-PLUGIN-") {
            return None;
        }
        // One that does not decode is left to the plain path, which says why.
        names.push(recipient::plugin::identity_data(line).ok()?.0);
    }
    (!names.is_empty()).then_some(names)
}

/// The recipient of an identity file's text, for `list`: its public keys, or the kind of a PEM
/// public key (too long for one line).
fn describe(text: &str) -> String {
    match recipient::public_of(text) {
        Ok(p) if p.starts_with("-----BEGIN") => "rsa-oaep (a PEM public key)".into(),
        Ok(p) => p.lines().collect::<Vec<_>>().join(" "),
        Err(_) => "(no recipient can be written for this kind)".into(),
    }
}

/// `SHA256:` and the first 16 hex digits of the recipient's SHA-256.
fn fingerprint(recipient: &str) -> String {
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, recipient.as_bytes());
    format!("SHA256:{}", hex::encode(&d.as_ref()[..8]))
}
