//! STREAM payload (stub).
