//! Hazardous materials: APIs that hand the caller a duty the rest of the library performs
//! itself. Everything here is safe when used as documented and unsafe otherwise; read the docs
//! of each item before using it.
//!
//! - [`parts`]: one payload sealed (or opened) in chunk-aligned parts, by several processes or
//!   machines that share its payload key — for clusters (Dask) and browser workers.

pub mod parts;
