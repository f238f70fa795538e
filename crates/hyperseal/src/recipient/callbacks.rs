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

use zeroize::Zeroizing;

/// Requests an identity or recipient may make of the user while it is being used.
pub trait Callbacks: Send + Sync {
    /// Shows a message (a note, a warning about a skipped key). The default drops it.
    fn display_message(&self, message: &str) {
        let _ = message;
    }

    /// Asks for a passphrase; `description` says what for (never includes a secret). `None`:
    /// none can be had (no terminal, or the user declined).
    fn request_passphrase(&self, description: &str) -> Option<Zeroizing<String>>;
}

/// Answers nothing: passphrase-protected keys then fail with a clear error when needed.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCallbacks;

impl Callbacks for NoCallbacks {
    fn request_passphrase(&self, _description: &str) -> Option<Zeroizing<String>> {
        None
    }
}
