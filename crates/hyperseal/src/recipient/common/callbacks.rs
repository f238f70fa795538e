//! How the library asks the user something without ever touching a terminal itself: the caller
//! passes [`Callbacks`] (the CLI prompts on the terminal or reads a file; a server would refuse).
//! The shape follows rage's `age::Callbacks`.
//!
//! ```
//! use hyperseal::recipient::{Callbacks, NoCallbacks};
//! use zeroize::Zeroizing;
//!
//! /// Answers every passphrase request from memory, e.g. from a secret store.
//! struct Fixed(&'static str);
//! impl Callbacks for Fixed {
//!     fn request_passphrase(&self, _description: &str) -> Option<Zeroizing<String>> {
//!         Some(Zeroizing::new(self.0.to_string()))
//!     }
//! }
//! assert!(NoCallbacks.request_passphrase("key").is_none());
//! assert_eq!(Fixed("pw").request_passphrase("key").unwrap().as_str(), "pw");
//! ```

use std::time::Duration;

use zeroize::Zeroizing;

use crate::error::Error;

/// Requests an identity or recipient may make of the user while it is being used.
pub trait Callbacks: Send + Sync {
    /// Shows a message (a note, a warning about a skipped key). The default drops it.
    fn display_message(&self, message: &str) {
        let _ = message;
    }

    /// Asks for a passphrase or another secret (a plugin's PIN); `description` says what for
    /// (never includes a secret). `None`: none can be had (no terminal, or the user declined).
    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>>;

    /// Asks the user to choose between `yes` and (if given) `no`; `Some(true)` for yes. The
    /// default cannot ask: `None`.
    fn confirm(&self, message: &str, yes: &str, no: Option<&str>) -> Option<bool> {
        let _ = (message, yes, no);
        None
    }

    /// Asks for a public value (not hidden while typed). The default cannot ask: `None`.
    fn request_public_string(&self, description: &str) -> Option<String> {
        let _ = description;
        None
    }

    /// How long one exchange with a plugin may take, in all, before the plugin is stopped: every
    /// wait for its next message and for it to read ours draws on this (the time spent in these
    /// callbacks, waiting for the user, does not). A plugin may be waiting for a hardware key to
    /// be touched, so the default is generous: 5 minutes.
    fn plugin_timeout(&self) -> Duration {
        Duration::from_secs(300)
    }

    /// Whether key strings naming an age plugin (`age1NAME1…`, `AGE-PLUGIN-NAME-1…`) may be
    /// used, which runs the program `age-plugin-NAME`. The default refuses them when they are
    /// parsed; a caller that trusts its key strings (the CLI, as age) answers
    /// [`Plugins::Allow`].
    fn plugins(&self) -> Plugins {
        Plugins::Refuse
    }
}

/// Answers nothing: passphrase-protected keys then fail with a clear error when needed.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCallbacks;

impl Callbacks for NoCallbacks {
    fn request_passphrase(&self, _description: &str) -> Option<Zeroizing<String>> {
        None
    }
}

/// Whether key strings that name an age plugin may be used (which runs `age-plugin-NAME`). Here,
/// beside the callbacks that answer it, so that the kinds below need not import `plugin/`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Plugins {
    /// Refuse them when parsed, before any program is looked up: the default.
    #[default]
    Refuse,
    /// Allow them, as age does.
    Allow,
}

impl Plugins {
    /// `Allow` for `true`: a binding's `allowPlugins` option.
    pub fn allowed(allow: bool) -> Self {
        if allow {
            Plugins::Allow
        } else {
            Plugins::Refuse
        }
    }

    /// `Ok` if plugins are allowed, else the error naming the program that was not started.
    pub(in crate::recipient) fn check(self, name: &str) -> Result<(), Error> {
        match self {
            Plugins::Allow => Ok(()),
            Plugins::Refuse => Err(Error::Plugin(format!(
                "plugins are disabled, so age-plugin-{name} was not started; pass allowPlugins: true \
                 (Python: allow_plugins=True) to allow age plugins"
            ))),
        }
    }
}

/// A policy is also the callbacks of a caller that answers nothing (as [`NoCallbacks`]) and only
/// says whether plugins may run: the bindings parse with `Arc::new(Plugins::allowed(opt_in))`.
impl Callbacks for Plugins {
    fn request_passphrase(&self, _description: &str) -> Option<Zeroizing<String>> {
        None
    }

    fn plugins(&self) -> Plugins {
        *self
    }
}
