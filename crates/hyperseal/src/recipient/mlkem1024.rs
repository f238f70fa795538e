//! (not yet implemented: placeholder so the crate builds while kinds land one by one)
#![allow(missing_docs, dead_code)]
use super::{GeneratedKey, Identity, Labels, Recipient};
use crate::format::Stanza;
use crate::{Error, FileKey};
pub const RECIPIENT_HRP: &str = "mlkem1024-recipient-placeholder";
pub const IDENTITY_HRP: &str = "MLKEM1024-IDENTITY-PLACEHOLDER";
fn todo_err() -> Error { Error::InvalidKey("mlkem1024: not implemented yet".into()) }
pub struct Mlkem1024Recipient;
impl Mlkem1024Recipient {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(todo_err()) }
    pub fn to_bech32(&self) -> String { String::new() }
}
impl Recipient for Mlkem1024Recipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { Err(todo_err()) }
}
pub struct Mlkem1024Identity;
impl Mlkem1024Identity {
    pub fn from_bech32(_: &str) -> Result<Self, Error> { Err(todo_err()) }
    pub fn to_public(&self) -> Mlkem1024Recipient { Mlkem1024Recipient }
}
impl Identity for Mlkem1024Identity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
pub fn generate() -> Result<GeneratedKey, Error> { Err(todo_err()) }

