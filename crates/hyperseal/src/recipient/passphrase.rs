//! (not yet implemented: placeholder so the crate builds while kinds land one by one)
#![allow(missing_docs, dead_code)]
use super::{GeneratedKey, Identity, Labels, Recipient};
use crate::format::Stanza;
use crate::{Error, FileKey};
pub const RECIPIENT_HRP: &str = "passphrase-recipient-placeholder";
pub const IDENTITY_HRP: &str = "PASSPHRASE-IDENTITY-PLACEHOLDER";
fn todo_err() -> Error { Error::InvalidKey("passphrase: not implemented yet".into()) }
pub struct PassphraseRecipient;
impl PassphraseRecipient {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(todo_err()) }
    pub fn to_bech32(&self) -> String { String::new() }
}
impl Recipient for PassphraseRecipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { Err(todo_err()) }
}
pub struct PassphraseIdentity;
impl PassphraseIdentity {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(todo_err()) }
    pub fn to_public(&self) -> PassphraseRecipient { PassphraseRecipient }
}
impl Identity for PassphraseIdentity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
pub fn generate() -> Result<GeneratedKey, Error> { Err(todo_err()) }

