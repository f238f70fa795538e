//! `hyperseal._hyperseal`: the native half of the `hyperseal` Python package (PyO3, stable ABI
//! for CPython 3.11+). It converts types and errors only; the formats, the output rules and the
//! key parsing live in the library. The Python half (`python/hyperseal/`) re-exports these
//! names, generates the exception classes, and adds `open()`, the pyca-named C2SP classes,
//! the fsspec filesystem and the Dask functions.

mod agent;
mod buffers;
mod c2sp;
mod errors;
mod files;
mod header;
mod keys;
mod output;
mod parts;
mod pyio;
mod pyrage;
mod rekey;
mod rekey_sops;
mod seal;
mod streams;
mod toolkit;
mod toolkit_keys;

use pyo3::prelude::*;

#[pymodule]
fn _hyperseal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("HYPERSEAL_VERSION"))?;
    m.add_function(wrap_pyfunction!(errors::error_codes, m)?)?;
    m.add_class::<keys::Identity>()?;
    m.add_class::<agent::AgentIdentity>()?;
    m.add_class::<keys::FileKey>()?;
    m.add_function(wrap_pyfunction!(header::header_extract, m)?)?;
    m.add_function(wrap_pyfunction!(header::header_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(pyrage::parse_key_as, m)?)?;
    m.add_function(wrap_pyfunction!(pyrage::encrypt_stream, m)?)?;
    m.add_function(wrap_pyfunction!(pyrage::decrypt_stream, m)?)?;
    m.add_function(wrap_pyfunction!(keys::generate_key, m)?)?;
    m.add_function(wrap_pyfunction!(keys::public_of, m)?)?;
    m.add_function(wrap_pyfunction!(seal::encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(seal::decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(files::encrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(files::decrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(rekey::rekey_file, m)?)?;
    m.add_function(wrap_pyfunction!(rekey::rekey_head, m)?)?;
    m.add_function(wrap_pyfunction!(rekey::rekey_tree, m)?)?;
    m.add_function(wrap_pyfunction!(rekey::rekey_change_id, m)?)?;
    m.add_function(wrap_pyfunction!(rekey::rekey_selected, m)?)?;
    m.add_function(wrap_pyfunction!(rekey::looks_encrypted, m)?)?;
    m.add_function(wrap_pyfunction!(rekey_sops::rekey_sops_files, m)?)?;
    m.add_function(wrap_pyfunction!(rekey_sops::rekey_sops_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(rekey_sops::looks_like_sops, m)?)?;
    m.add_class::<streams::Sealer>()?;
    m.add_class::<streams::Opener>()?;
    m.add_class::<streams::Reader>()?;
    m.add_class::<streams::Writer>()?;
    // The C2SP classes are named Encryptor/Decryptor in `hyperseal.c2sp`; here they carry a
    // prefix so the native format can have its own Encryptor later.
    m.add("C2spEncryptor", m.py().get_type::<c2sp::C2spEncryptor>())?;
    m.add("C2spDecryptor", m.py().get_type::<c2sp::C2spDecryptor>())?;
    m.add_function(wrap_pyfunction!(c2sp::encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(c2sp::decrypt, m)?)?;
    m.add_class::<parts::PartKey>()?;
    m.add_class::<output::AtomicOutput>()?;
    for f in [
        wrap_pyfunction!(toolkit::hash, m)?,
        wrap_pyfunction!(toolkit::hash_file, m)?,
        wrap_pyfunction!(toolkit::hmac, m)?,
        wrap_pyfunction!(toolkit::hmac_verify, m)?,
        wrap_pyfunction!(toolkit::kdf_pbkdf2, m)?,
        wrap_pyfunction!(toolkit::kdf_argon2id, m)?,
        wrap_pyfunction!(toolkit::kdf_scrypt, m)?,
        wrap_pyfunction!(toolkit::kdf_hkdf, m)?,
        wrap_pyfunction!(toolkit::aead_seal, m)?,
        wrap_pyfunction!(toolkit::aead_open, m)?,
        wrap_pyfunction!(toolkit::aead_generate_key, m)?,
        wrap_pyfunction!(toolkit_keys::sign_generate_key_pair, m)?,
        wrap_pyfunction!(toolkit_keys::sign_message, m)?,
        wrap_pyfunction!(toolkit_keys::sign_verify, m)?,
        wrap_pyfunction!(toolkit_keys::sign_public_key_of, m)?,
        wrap_pyfunction!(toolkit_keys::token_generate_key, m)?,
        wrap_pyfunction!(toolkit_keys::token_seal, m)?,
        wrap_pyfunction!(toolkit_keys::token_open, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
