//! stub until the recipients branch lands
#![allow(missing_docs, dead_code)]
use super::{GeneratedKey, Identity, Labels, Recipient};
use crate::{format::Stanza, Error, FileKey};
pub struct RsaRecipient;
pub struct RsaIdentity;
impl RsaRecipient { pub fn from_spki_pem(_: &str) -> Result<Self, Error> { Err(Error::Crypto) } }
impl RsaIdentity { pub fn from_pkcs8_pem(_: &str) -> Result<Self, Error> { Err(Error::Crypto) } }
impl Recipient for RsaRecipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { unimplemented!() }
}
impl Identity for RsaIdentity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
pub fn public_pem_from_pkcs8_pem(_: &str) -> Result<String, Error> { Err(Error::Crypto) }
pub fn generate(_bits: usize) -> Result<GeneratedKey, Error> { Err(Error::Crypto) }
