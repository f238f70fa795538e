//! Plugin keys in the agent (age-plugin-yubikey, -tpm, -se, -fido2-hmac, any plugin): the agent
//! runs the plugin itself, answers its PIN from a cache, and relays every other question to the
//! client that asked (which asks its user: `hyperseal` on its terminal, `age-plugin-hyperseal`
//! through the age client's own prompt).
//!
//! The rules a security key needs:
//! * a secret (`request-secret`, the PIN) is cached per key and per prompt, only once the plugin
//!   has accepted it (its run gave a file key), for the key's PIN lifetime;
//! * a cached secret the plugin rejects (it asks again in the same run, or the run fails) is
//!   forgotten at once and never sent again on its own: a PIV card locks after three wrong
//!   PINs, so a stale PIN must cost one failure, never a loop;
//! * a message (a touch) and a confirmation are never cached: they go to the client every time.
//!
//! A plugin runs on the thread of the request that needs it, so the connection to ask through
//! and what this run was given are kept per thread, for the length of one key's try ([`Run`]).
//! A request's connection is that relay (`relay.rs`).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyperseal::agent::proto::Prompt;
use hyperseal::recipient::plugin::Plugins;
use hyperseal::recipient::Callbacks;
use zeroize::Zeroizing;

use super::relay::Relay;

/// The secrets a plugin key's plugin accepted, each for the PIN lifetime.
pub struct PinCache {
    ttl: Option<Duration>,
    entries: Mutex<Vec<Cached>>,
}

struct Cached {
    prompt: String,
    secret: Zeroizing<String>,
    until: Option<Instant>,
}

impl PinCache {
    /// `ttl`: how long an accepted secret is kept (`None`: as long as the key).
    pub fn new(ttl: Option<Duration>) -> Self {
        PinCache { ttl, entries: Mutex::new(Vec::new()) }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Vec<Cached>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, prompt: &str) -> Option<Zeroizing<String>> {
        self.prune(Instant::now());
        self.entries().iter().find(|c| c.prompt == prompt).map(|c| c.secret.clone())
    }

    /// Drops (and so zeroizes) the secrets whose lifetime is over at `now`: called by the
    /// agent's housekeeping, so a PIN does not outlive its lifetime in memory.
    pub fn prune(&self, now: Instant) {
        self.entries().retain(|c| c.until.is_none_or(|t| t > now));
    }

    fn put(&self, prompt: String, secret: Zeroizing<String>) {
        let until = self.ttl.map(|t| Instant::now() + t);
        let mut entries = self.entries();
        entries.retain(|c| c.prompt != prompt);
        entries.push(Cached { prompt, secret, until });
    }

    fn forget(&self, prompt: &str) {
        self.entries().retain(|c| c.prompt != prompt);
    }
}

/// One key's try on one thread: the client to ask, and the secrets handed to the plugin.
struct Run {
    relay: Option<Arc<dyn Relay>>,
    /// Prompts answered from the cache in this run.
    given: Vec<String>,
    /// Secrets the user typed in this run, cached only if the run succeeds.
    typed: Vec<(String, Zeroizing<String>)>,
}

thread_local! {
    static RUN: RefCell<Option<Run>> = const { RefCell::new(None) };
}

/// The callbacks of one plugin key: its PIN cache, and the relay of the request being served.
pub struct PluginCallbacks {
    pub cache: PinCache,
    /// Set once the key is loaded: during `add` nothing is asked (no client waits then).
    pub serving: AtomicBool,
}

impl PluginCallbacks {
    fn relay(&self, prompt: Prompt) -> Option<Zeroizing<String>> {
        if !self.serving.load(Ordering::SeqCst) {
            return None;
        }
        let relay = RUN.with(|r| r.borrow().as_ref().and_then(|run| run.relay.clone()))?;
        relay.ask(prompt)
    }
}

impl Callbacks for PluginCallbacks {
    fn display_message(&self, message: &str) {
        self.relay(Prompt::Message(message.to_string()));
    }

    /// Never cached: the user answers each time.
    fn confirm(&self, message: &str, yes: &str, no: Option<&str>) -> Option<bool> {
        let prompt = Prompt::Confirm { message: message.into(), yes: yes.into(), no: no.map(Into::into) };
        match self.relay(prompt)?.as_str() {
            "yes" => Some(true),
            "no" => Some(false),
            _ => None,
        }
    }

    fn request_public_string(&self, description: &str) -> Option<String> {
        self.relay(Prompt::Public(description.to_string())).map(|v| v.as_str().to_string())
    }

    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>> {
        if !self.serving.load(Ordering::SeqCst) {
            return None;
        }
        let prompt = description.to_string();
        // Asked again in the same run: what this run gave was rejected. A cached secret is
        // forgotten, never sent again; the user is asked.
        let from_cache = RUN.with(|r| {
            let mut r = r.borrow_mut();
            let run = r.as_mut()?;
            if run.given.contains(&prompt) {
                self.cache.forget(&prompt);
                return None;
            }
            if run.typed.iter().any(|(p, _)| *p == prompt) {
                run.typed.retain(|(p, _)| *p != prompt);
                return None;
            }
            let secret = self.cache.get(&prompt)?;
            run.given.push(prompt.clone());
            Some(secret)
        });
        if from_cache.is_some() {
            return from_cache;
        }
        let typed = self.relay(Prompt::Secret(prompt.clone()))?;
        RUN.with(|r| {
            if let Some(run) = r.borrow_mut().as_mut() {
                run.typed.push((prompt, typed.clone()));
            }
        });
        Some(typed)
    }

    fn plugins(&self) -> Plugins {
        Plugins::Allow
    }
}

/// What a plugin run's result says of the secrets it was given.
pub enum Verdict {
    /// It gave a file key: what the user typed is accepted (cached).
    Accepted,
    /// It failed: a secret handed out from the cache may be why (forgotten).
    Failed,
    /// It answered "not mine": nothing is learned.
    Neither,
}

/// Runs `f`, one plugin key's try (one run of its plugin), with `relay` as the client to ask;
/// `verdict` says what its result means for the secrets the plugin was given: the ones the
/// user typed are cached once accepted, and a cached one handed out is forgotten on a failure.
pub fn with_run<T>(
    callbacks: &PluginCallbacks,
    relay: Option<Arc<dyn Relay>>,
    f: impl FnOnce() -> T,
    verdict: impl FnOnce(&T) -> Verdict,
) -> T {
    let caches = relay.as_ref().is_none_or(|r| r.caches());
    RUN.with(|r| *r.borrow_mut() = Some(Run { relay, given: Vec::new(), typed: Vec::new() }));
    let result = f();
    let run = RUN.with(|r| r.borrow_mut().take()).expect("set above");
    match verdict(&result) {
        Verdict::Accepted if caches => run.typed.into_iter().for_each(|(p, s)| callbacks.cache.put(p, s)),
        Verdict::Accepted => {}
        Verdict::Failed => run.given.iter().for_each(|p| callbacks.cache.forget(p)),
        Verdict::Neither => {}
    }
    result
}

/// The verdict of one file's answer.
pub fn verdict_of<T, E>(answer: &Option<Result<T, E>>) -> Verdict {
    match answer {
        Some(Ok(_)) => Verdict::Accepted,
        Some(Err(_)) => Verdict::Failed,
        None => Verdict::Neither,
    }
}
