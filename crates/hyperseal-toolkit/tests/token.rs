//! Token behaviour through the public API: round trip, each failure's own error, rotation.

use std::time::{Duration, SystemTime};

use hyperseal_toolkit::token::{self, KeyRing, Suite, TokenError, TokenKey};

#[test]
fn round_trip_and_every_error_is_distinct() {
    let key = TokenKey::generate();
    let ring = KeyRing::from_key_file(&key.to_key_file()).unwrap();
    let t = token::seal(&key, b"hello", b"user=42", None);
    assert_eq!(&**token::open(&ring, &t, b"user=42").unwrap(), b"hello");

    // Tamper with every character position: each must be Auth or Malformed, never Ok.
    let bytes = t.as_bytes();
    for i in 0..bytes.len() {
        let mut m = bytes.to_vec();
        m[i] = if m[i] == b'A' { b'B' } else { b'A' };
        let m = String::from_utf8(m).unwrap();
        match token::open(&ring, &m, b"user=42") {
            Err(TokenError::Auth | TokenError::Malformed | TokenError::UnknownKeyId) => {}
            other => panic!("position {i}: {other:?}"),
        }
    }
    // A body tamper is specifically Auth.
    let mut m = bytes.to_vec();
    let j = m.len() - 5;
    m[j] = if m[j] == b'A' { b'B' } else { b'A' };
    assert_eq!(
        token::open(&ring, std::str::from_utf8(&m).unwrap(), b"user=42").unwrap_err(),
        TokenError::Auth
    );

    assert_eq!(token::open(&ring, &t, b"user=43").unwrap_err(), TokenError::Auth);
    let other = KeyRing::new().with(TokenKey::generate());
    assert_eq!(token::open(&other, &t, b"user=42").unwrap_err(), TokenError::UnknownKeyId);
    assert_eq!(token::open(&ring, "not a token", b"").unwrap_err(), TokenError::Malformed);
    assert_eq!(token::open(&ring, "", b"").unwrap_err(), TokenError::Malformed);

    let past = SystemTime::now() - Duration::from_secs(3600);
    let expired = token::seal_at(&key, b"x", b"", Some(Duration::from_secs(60)), past);
    assert_eq!(token::open(&ring, &expired, b"").unwrap_err(), TokenError::Expired);
    // Expiry is authenticated: tampering with an expired token is Auth, not Expired.
    let mut m = expired.into_bytes();
    let j = m.len() - 3;
    m[j] = if m[j] == b'A' { b'B' } else { b'A' };
    assert_eq!(token::open(&ring, std::str::from_utf8(&m).unwrap(), b"").unwrap_err(), TokenError::Auth);
}

#[test]
fn rotation_through_a_ring() {
    let old = TokenKey::generate();
    let new = TokenKey::generate().with_suite(Suite::Aes256GcmSiv);
    let t_old = token::seal(&old, b"old", b"", Some(Duration::from_secs(600)));
    let t_new = token::seal(&new, b"new", b"", None);
    let file = format!("# current first\n{}\n{}", &*new.to_key_file(), &*old.to_key_file());
    let ring = KeyRing::from_key_file(&file).unwrap();
    assert_eq!(ring.len(), 2);
    assert_eq!(ring.primary().unwrap().id(), new.id());
    assert_eq!(&**token::open(&ring, &t_old, b"").unwrap(), b"old");
    assert_eq!(&**token::open(&ring, &t_new, b"").unwrap(), b"new");
    // Retiring the old key makes its tokens UnknownKeyId, not Auth.
    let retired = KeyRing::from_key_file(&new.to_key_file()).unwrap();
    assert_eq!(token::open(&retired, &t_old, b"").unwrap_err(), TokenError::UnknownKeyId);
}

#[test]
fn key_file_format() {
    let k = TokenKey::generate();
    let line = k.to_key_file();
    assert!(line.starts_with(token::KEY_FILE_PREFIX));
    assert_eq!(line.trim_end().len(), token::KEY_FILE_PREFIX.len() + 43);
    assert!(TokenKey::from_key_line("HYPERSEAL-TOKEN-KEY-1AAAA").is_err());
    assert!(KeyRing::from_key_file("# nothing\n").is_err());
}
