//! stub until the recipients branch lands
#![allow(missing_docs, dead_code)]
use super::{GeneratedKey, Identity, Labels, Recipient};
use crate::{format::Stanza, Error, FileKey};
pub const RECIPIENT_HRP: &str = "age1pq1";
pub const IDENTITY_HRP: &str = "AGE-SECRET-KEY-PQ-1";
pub struct HybridRecipient;
pub struct HybridIdentity;
impl HybridRecipient {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(Error::InvalidKey("unimplemented".into())) }
    pub fn to_bech32(&self) -> String { unimplemented!() }
}
impl HybridIdentity {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(Error::InvalidKey("unimplemented".into())) }
    pub fn to_public(&self) -> HybridRecipient { unimplemented!() }
}
impl Recipient for HybridRecipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { unimplemented!() }
}
impl Identity for HybridIdentity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
pub fn generate() -> Result<GeneratedKey, Error> { Err(Error::Crypto) }
