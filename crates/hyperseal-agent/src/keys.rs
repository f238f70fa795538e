//! What the agent holds: the identities added to it, each with its file's text (to seal it
//! when locked), when it expires, and its public description. Every secret here zeroizes when
//! it is dropped: on expiry, `remove`, `lock` (after sealing) and when the agent ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyperseal::agent::proto::{Answer, Entry};
use hyperseal::recipient::{self, Callbacks, Identity};
use hyperseal::{identity_file, Error, FileKey, Profile};
use zeroize::Zeroizing;

use super::origin::UNKNOWN_HOST;
use super::pin::{self, PinCache, PluginCallbacks};
use super::reader::{self, Readers};
use super::relay::Relay;

/// One added identity file.
pub struct Key {
    name: String,
    /// The file's text (decrypted, for an `age -p` identity file): sealed by `lock`.
    text: Zeroizing<String>,
    /// The passphrase of a protected SSH key in it, which its text still needs after an unlock.
    passphrase: Option<Zeroizing<String>>,
    identities: Vec<Box<dyn Identity>>,
    recipient: String,
    fingerprint: String,
    expires: Option<Instant>,
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
    pin_ttl: Option<Duration>,
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
        let whole: Vec<&[hyperseal::format::Stanza]> = files.iter().map(Vec::as_slice).collect();
        if let Some(each) = self.unwrap_read(&whole, relay.clone()) {
            return Some(each);
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

/// The identities, or what `lock` sealed them into.
#[derive(Default)]
pub struct Store {
    keys: Vec<Arc<Key>>,
    sealed: Option<Sealed>,
    /// The reader the agent was started with, for files the library does not read.
    readers: Readers,
}

/// The locked agent: every key's record (fingerprint, file name, text, passphrase) sealed
/// under the lock passphrase (Argon2id), and what `list` may still show. An unlock takes each
/// record by its fingerprint, never by its place: a key forgotten while locked (its lifetime
/// ended) leaves its record behind in the ciphertext, and must neither come back nor shift
/// another key's record onto its entry.
struct Sealed {
    ciphertext: Vec<u8>,
    /// Each key's entry, when it expires and its PIN lifetime.
    entries: Vec<(Entry, Option<Instant>, Option<Duration>)>,
}

impl Store {
    /// An empty store whose `add` and `unlock` read files the library does not with `readers`.
    pub fn with_readers(readers: Readers) -> Store {
        Store { readers, ..Store::default() }
    }

    /// The reader the agent was started with.
    pub fn readers(&self) -> Readers {
        self.readers.clone()
    }

    pub fn add(&mut self, key: Key) -> Result<String, String> {
        if self.sealed.is_some() {
            return Err(LOCKED.into());
        }
        let said = format!("{} ({})", key.recipient, key.fingerprint);
        self.keys.retain(|k| k.fingerprint != key.fingerprint);
        self.keys.push(Arc::new(key));
        Ok(said)
    }

    /// The keys to answer with (a snapshot: a request in flight keeps its keys until it
    /// ends), or why none.
    pub fn snapshot(&self) -> Result<Vec<Arc<Key>>, String> {
        match self.sealed {
            Some(_) => Err(LOCKED.into()),
            None => Ok(self.keys.clone()),
        }
    }

    pub fn list(&self) -> Answer {
        let now = Instant::now();
        match &self.sealed {
            None => Answer::Entries(self.keys.iter().map(|k| k.entry(now)).collect()),
            Some(s) => Answer::Entries(s.entries.iter().map(|(e, _, _)| e.clone()).collect()),
        }
    }

    pub fn remove(&mut self, selector: &str) -> Result<usize, String> {
        if self.sealed.is_some() {
            return Err(LOCKED.into());
        }
        let before = self.keys.len();
        self.keys.retain(|k| !k.selected_by(selector));
        Ok(before - self.keys.len())
    }

    /// Forgets expired keys (also while locked: they are not restored by an unlock), and the
    /// PINs past their lifetime, which would otherwise stay in memory until their key's next use.
    pub fn expire(&mut self, now: Instant) {
        self.keys.retain(|k| !k.expired(now));
        self.keys.iter().for_each(|k| k.prune_pins(now));
        if let Some(s) = &mut self.sealed {
            s.entries.retain(|(_, t, _)| t.is_none_or(|t| t > now));
        }
    }

    /// Seals every key's record under `passphrase` and forgets the keys in the clear.
    pub fn lock(&mut self, passphrase: Zeroizing<String>) -> Result<(), String> {
        if self.sealed.is_some() {
            return Err("the agent is already locked".into());
        }
        // Sized first: a buffer that grows leaves freed copies of what it held behind.
        let size = self.keys.iter().flat_map(|k| fields(k).map(|f| 4 + f.len())).sum();
        let mut plain = Zeroizing::new(Vec::with_capacity(size));
        for k in &self.keys {
            for field in fields(k) {
                plain.extend_from_slice(&(field.len() as u32).to_be_bytes());
                plain.extend_from_slice(field);
            }
        }
        let to = [recipient::passphrase_recipient(Profile::Hyperseal, passphrase)];
        let ciphertext = hyperseal::encrypt(&to, &plain).map_err(|e| e.to_string())?;
        let now = Instant::now();
        let entries = self.keys.iter().map(|k| (k.entry(now), k.expires, k.pin_ttl)).collect();
        self.sealed = Some(Sealed { ciphertext, entries });
        self.keys.clear();
        Ok(())
    }

    /// Opens what `lock` sealed (a wrong passphrase changes nothing) and loads again the keys
    /// whose entries are left: each from its own record, found by fingerprint, and proven to
    /// be that key again. A key whose lifetime ended meanwhile stays forgotten; a record that
    /// does not match its entry refuses the whole unlock, and the agent stays locked.
    pub fn unlock(&mut self, passphrase: Zeroizing<String>) -> Result<(), String> {
        let Some(sealed) = &self.sealed else { return Err("the agent is not locked".into()) };
        let header = hyperseal::Decryptor::from_slice(&sealed.ciphertext).map_err(|e| e.to_string())?;
        let id = recipient::passphrase_identity_for(header.header(), passphrase);
        let plain = Zeroizing::new(hyperseal::decrypt(&[id], &sealed.ciphertext).map_err(|e| match e {
            Error::WrongPassphrase | Error::HeaderMac => "incorrect lock passphrase".to_string(),
            e => e.to_string(),
        })?);
        let records = records(&plain).ok_or(SEALED_DAMAGED)?;
        let now = Instant::now();
        let mut keys = Vec::new();
        for (entry, expires, pin_ttl) in &sealed.entries {
            if expires.is_some_and(|t| t <= now) {
                continue;
            }
            let [_, name, text, pass] = records
                .iter()
                .find(|r| r[0] == entry.fingerprint.as_bytes())
                .ok_or("a locked key's sealed record is missing: the agent stays locked")?;
            if *name != entry.name.as_bytes() {
                return Err(SEALED_DAMAGED.into());
            }
            let pass = (!pass.is_empty()).then(|| Zeroizing::new(String::from_utf8_lossy(pass).into_owned()));
            let left = expires.map_or(0, |t| t.saturating_duration_since(now).as_secs().max(1));
            let pin_ttl = pin_ttl.map_or(0, |t| t.as_secs());
            let key = match Key::load(&entry.name, text, pass, left, pin_ttl, &self.readers) {
                Ok(k) => k,
                Err(AddError::NeedPassphrase(e) | AddError::Refused(e)) => return Err(e),
            };
            if key.fingerprint != entry.fingerprint {
                return Err(SEALED_DAMAGED.into());
            }
            // The lifetime stays what it was, to the instant (`load` counts whole seconds), and
            // so do the grants.
            let key = key.with_grants(entry.forward.clone(), entry.confirm);
            keys.push(Arc::new(Key { expires: *expires, ..key }));
        }
        self.keys = keys;
        self.sealed = None;
        Ok(())
    }

    /// Forgets everything (the agent ends).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.sealed = None;
    }
}

const LOCKED: &str = "the agent is locked (hyperseal agent unlock)";

const SEALED_DAMAGED: &str = "the sealed keys do not match the agent's entries: the agent stays locked";

/// The records `lock` wrote: four length-prefixed fields each (fingerprint, name, text,
/// passphrase). `None`: the plaintext is not a whole number of records.
fn records(mut plain: &[u8]) -> Option<Vec<[&[u8]; 4]>> {
    let mut out = Vec::new();
    while !plain.is_empty() {
        out.push([field(&mut plain)?, field(&mut plain)?, field(&mut plain)?, field(&mut plain)?]);
    }
    Some(out)
}

/// One length-prefixed field off the front of `plain`.
fn field<'a>(plain: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, rest) = plain.split_first_chunk::<4>()?;
    let n = u32::from_be_bytes(*len) as usize;
    let (f, rest) = (rest.len() >= n).then(|| rest.split_at(n))?;
    *plain = rest;
    Some(f)
}

/// What `lock` seals of a key, in this order.
fn fields(k: &Key) -> [&[u8]; 4] {
    [
        k.fingerprint.as_bytes(),
        k.name.as_bytes(),
        k.text.as_bytes(),
        k.passphrase.as_deref().map_or(&b""[..], |p| p.as_bytes()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyperseal::recipient::{generate, Kind};

    fn key(name: &str, lifetime: u64) -> Key {
        let k = generate(Kind::X25519).unwrap();
        Key::load(name, format!("{}\n", k.secret.as_str()).as_bytes(), None, lifetime, 0, &None).ok().unwrap()
    }

    fn pass() -> Zeroizing<String> {
        Zeroizing::new("lock pass".into())
    }

    /// A key forgotten while locked must not come back, nor hand its record to the next key.
    #[test]
    fn a_key_that_expired_while_locked_stays_gone_and_the_others_keep_their_own_keys() {
        let mut store = Store::default();
        let (a, b) = (key("a.key", 1), key("b.key", 0));
        let (a_print, b_print) = (a.fingerprint.clone(), b.fingerprint.clone());
        store.add(a).unwrap();
        store.add(b).unwrap();
        store.lock(pass()).unwrap();
        store.expire(Instant::now() + Duration::from_secs(2));
        store.unlock(pass()).unwrap();
        let keys = store.snapshot().unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].name, "b.key");
        assert_eq!(keys[0].fingerprint, b_print);
        assert!(keys[0].expires.is_none(), "b had no lifetime and has none now");
        assert!(keys.iter().all(|k| k.fingerprint != a_print));
    }

    #[test]
    fn an_unlock_keeps_each_lifetime_to_the_instant() {
        let mut store = Store::default();
        store.add(key("a.key", 0)).unwrap();
        store.add(key("b.key", 3600)).unwrap();
        let before: Vec<_> = store.keys.iter().map(|k| (k.name.clone(), k.expires)).collect();
        store.lock(pass()).unwrap();
        store.unlock(pass()).unwrap();
        let after: Vec<_> = store.keys.iter().map(|k| (k.name.clone(), k.expires)).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn records_that_do_not_match_the_entries_refuse_the_unlock() {
        let mut store = Store::default();
        store.add(key("a.key", 0)).unwrap();
        store.lock(pass()).unwrap();
        // Another key's record sealed under the same passphrase, put in place of the first.
        let mut other = Store::default();
        other.add(key("a.key", 0)).unwrap();
        other.lock(pass()).unwrap();
        store.sealed.as_mut().unwrap().ciphertext = other.sealed.take().unwrap().ciphertext;
        let e = store.unlock(pass()).unwrap_err();
        assert!(e.contains("stays locked"), "{e}");
        assert!(store.snapshot().is_err(), "still locked");
    }

    #[test]
    fn records_are_whole_or_refused() {
        let mut plain = Vec::new();
        for f in [&b"fp"[..], b"name", b"text", b""] {
            plain.extend_from_slice(&(f.len() as u32).to_be_bytes());
            plain.extend_from_slice(f);
        }
        assert_eq!(records(&plain).unwrap(), vec![[&b"fp"[..], b"name", b"text", b""]]);
        assert!(records(&plain[..plain.len() - 1]).is_none());
        assert!(records(&plain[..plain.len() - 5]).is_none(), "three fields are no record");
        let mut long = plain.clone();
        long.extend_from_slice(&[0, 0, 0, 9, 1]);
        assert!(records(&long).is_none());
    }
}
