//! stub until the recipients branch lands
#![allow(missing_docs, dead_code)]
use super::{GeneratedKey, Identity, Labels, Recipient};
use crate::{format::Stanza, Error, FileKey};
pub const RECIPIENT_HRP: &str = "age1";
pub const IDENTITY_HRP: &str = "AGE-SECRET-KEY-1";
pub struct X25519Recipient;
pub struct X25519Identity;
impl X25519Recipient {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(Error::InvalidKey("unimplemented".into())) }
    pub fn to_bech32(&self) -> String { unimplemented!() }
}
impl X25519Identity {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(Error::InvalidKey("unimplemented".into())) }
    pub fn to_public(&self) -> X25519Recipient { unimplemented!() }
}
impl Recipient for X25519Recipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { unimplemented!() }
}
impl Identity for X25519Identity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
pub fn generate() -> Result<GeneratedKey, Error> { Err(Error::Crypto) }
