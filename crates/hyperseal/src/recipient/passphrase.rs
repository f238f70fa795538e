//! stub until the recipients branch lands
#![allow(missing_docs, dead_code)]
use super::{Identity, Labels, Recipient};
use crate::{format::Stanza, Error, FileKey};
use zeroize::Zeroizing;
pub struct PassphraseRecipient;
pub struct PassphraseIdentity;
impl PassphraseRecipient {
    pub fn new(_: Zeroizing<String>) -> Self { PassphraseRecipient }
    pub fn with_params(_: Zeroizing<String>, _m: u32, _t: u32, _p: u32) -> Self { PassphraseRecipient }
}
impl PassphraseIdentity { pub fn new(_: Zeroizing<String>) -> Self { PassphraseIdentity } }
impl Recipient for PassphraseRecipient {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> { unimplemented!() }
}
impl Identity for PassphraseIdentity {
    fn unwrap_stanza(&self, _: &Stanza) -> Option<Result<FileKey, Error>> { None }
}
