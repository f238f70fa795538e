//! X25519 recipients, encoded exactly as age's (`age1…` / `AGE-SECRET-KEY-1…`).
// (stub, written by the recipients task)
