//! stub until the recipients branch lands
#![allow(missing_docs, dead_code)]
use super::{GeneratedKey, Identity, Labels, Recipient};
use crate::{format::Stanza, Error, FileKey};
pub const RECIPIENT_HRP: &str = "hs-mlkem1024";
pub const IDENTITY_HRP: &str = "HS-MLKEM1024-SECRET-KEY-1";
pub struct Mlkem1024Recipient;
pub struct Mlkem1024Identity;
impl Mlkem1024Recipient {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(Error::InvalidKey("unimplemented".into())) }
    pub fn to_bech32(&self) -> String { unimplemented!() }
}
impl Mlkem1024Identity {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(Error::InvalidKey("unimplemented".into())) }
    pub fn to_public(&self) -> Mlkem1024Recipient { unimplemented!() }
}
impl Recipient for Mlkem1024Recipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { unimplemented!() }
}
impl Identity for Mlkem1024Identity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
pub fn generate() -> Result<GeneratedKey, Error> { Err(Error::Crypto) }
