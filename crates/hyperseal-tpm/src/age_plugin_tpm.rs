//! age-plugin-tpm's identities (`AGE-PLUGIN-TPM-1…`), read so that a key made by that plugin
//! opens `p256tag` files here too, on the TPM that made it. Its layout, as its `plugin/identity.go`
//! writes it: version (1 byte), PIN status (1 byte: 0 none, 1 a PIN), `TPM2B_PUBLIC`,
//! `TPM2B_PRIVATE`, and from version 2 the storage primary's `TPM2B_NAME`. The key is a P-256
//! ECDH key under the TCG ECC SRK (the template `ops.rs` uses), authorized by a password
//! session with the PIN: the classic path of [`TpmKey`]. Its old `tpm-ecc` stanzas are not read.

use hyperseal::recipient::plugin;

use crate::error::TpmError;
use crate::key::{Blob, TpmKey};
use crate::marshal::In;
use crate::ops::{ecc_point, MAX_NAME, MAX_PRIVATE, MAX_PUBLIC};

/// The plugin's name: `AGE-PLUGIN-TPM-1…`.
const NAME: &str = "tpm";

/// Whether `line` looks like an age-plugin-tpm identity.
pub fn is_identity(line: &str) -> bool {
    line.get(..16).is_some_and(|head| head.eq_ignore_ascii_case("AGE-PLUGIN-TPM-1"))
}

/// The key of an `AGE-PLUGIN-TPM-1…` line.
pub fn parse(line: &str) -> Result<TpmKey, TpmError> {
    let bad = |why: &str| TpmError::BadIdentity(format!("age-plugin-tpm identity: {why}"));
    let (name, data) = plugin::identity_data(line).map_err(|e| bad(&e.to_string()))?;
    if name != NAME {
        return Err(bad("not an AGE-PLUGIN-TPM-1… line"));
    }
    let mut i = In::new(&data);
    let read = |i: &mut In| -> Result<TpmKey, TpmError> {
        let version = i.u8()?;
        if !(1..=2).contains(&version) {
            return Err(bad("an unknown version"));
        }
        let pin = match i.u8()? {
            0 => false,
            1 => true,
            _ => return Err(bad("an unknown PIN status")),
        };
        let public = i.b(MAX_PUBLIC)?.to_vec();
        let private = i.b(MAX_PRIVATE)?.to_vec();
        // Version 1 did not record its parent: the TPM's refusal to load then says "another TPM".
        let parent_name = if version > 1 { i.b(MAX_NAME)?.to_vec() } else { Vec::new() };
        let point = ecc_point(&public)?;
        Ok(TpmKey { pin, parent_name, pcrs: Vec::new(), ecdh: Blob { private, public }, sealed: None, point })
    };
    let key = read(&mut i).map_err(|e| match e {
        TpmError::Protocol(_) => bad("truncated"),
        e => e,
    })?;
    if i.rest() != 0 {
        return Err(bad("trailing bytes"));
    }
    Ok(key)
}

/// The line age-plugin-tpm would write for `key`: for tests. Version 1 has no parent name.
#[cfg(test)]
pub(crate) fn encode(key: &TpmKey, version: u8) -> String {
    let mut o = crate::marshal::Out::default();
    o.u8(version).u8(u8::from(key.pin)).b(&key.ecdh.public).b(&key.ecdh.private);
    if version > 1 {
        o.b(&key.parent_name);
    }
    plugin::identity_string(NAME, &o.0)
}
