//! Identity files as bytes (`identity_file::parse`): plain identity files and identity files
//! that are themselves passphrase-encrypted age files, armored or not, with a caller that
//! answers the passphrase prompt.

use std::sync::Arc;

use hyperseal::identity_file;

use crate::fixtures::Answer;
use crate::keys::assert_no_key_material;

pub fn identity_file(data: &[u8]) {
    let encrypted = identity_file::is_encrypted(data);
    let text = String::from_utf8_lossy(data);
    let ids = identity_file::parse(data, Arc::new(Answer));
    let rs = identity_file::recipients_of(data, Arc::new(Answer));
    // A plain identity file's errors repeat none of its keys. (An encrypted one holds only
    // ciphertext, which a header error may quote.)
    for e in [ids.as_ref().err(), rs.as_ref().err()].into_iter().flatten().filter(|_| !encrypted) {
        assert_no_key_material(&text, &e.to_string());
    }
    let (Ok(ids), Ok(rs)) = (ids, rs) else { return };
    // Every recipient of the file seals what its identities open (one kind at a time: labels).
    for r in rs {
        let Ok(file) = hyperseal::encrypt(&[r], b"fuzz") else { continue };
        let plain =
            hyperseal::decrypt(&ids, &file).expect("an identity file opens its own recipients' files");
        assert_eq!(&plain[..], b"fuzz");
    }
}
