//! (not yet implemented: placeholder so the crate builds while kinds land one by one)
#![allow(missing_docs, dead_code)]
use super::{GeneratedKey, Identity, Labels, Recipient};
use crate::format::Stanza;
use crate::{Error, FileKey};
pub const RECIPIENT_HRP: &str = "rsa-recipient-placeholder";
pub const IDENTITY_HRP: &str = "RSA-IDENTITY-PLACEHOLDER";
fn todo_err() -> Error { Error::InvalidKey("rsa: not implemented yet".into()) }
pub struct RsaRecipient;
impl RsaRecipient {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(todo_err()) }
    pub fn to_bech32(&self) -> String { String::new() }
}
impl Recipient for RsaRecipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { Err(todo_err()) }
}
pub struct RsaIdentity;
impl RsaIdentity {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(todo_err()) }
    pub fn to_public(&self) -> RsaRecipient { RsaRecipient }
}
impl Identity for RsaIdentity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
pub fn generate(_bits: usize) -> Result<GeneratedKey, Error> { Err(todo_err()) }

impl RsaRecipient { pub fn from_spki_pem(_: &str) -> Result<Self, Error> { Err(todo_err()) } }
impl RsaIdentity { pub fn from_pkcs8_pem(_: &str) -> Result<Self, Error> { Err(todo_err()) } }
pub fn public_pem_from_pkcs8_pem(_: &str) -> Result<String, Error> { Err(todo_err()) }

