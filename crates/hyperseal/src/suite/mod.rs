//! AEAD suites (stub).
