//! Key parsing errors never quote the input: every caller (the CLI, the Node addon, programs
//! using the library) shows them as they are, and the input may be a secret key pasted in the
//! wrong place.

use hyperseal::recipient::{self, Kind, IDENTITY_NOT_RECIPIENT, RECIPIENT_NOT_IDENTITY};

/// Fails if `msg` holds six consecutive characters of the key data (after the last `1`).
fn assert_not_quoted(secret: &str, msg: &str) {
    let data = secret.rsplit_once('1').map_or(secret, |(_, d)| d).to_ascii_lowercase();
    let lower = msg.to_ascii_lowercase();
    for i in 0..data.len().saturating_sub(5) {
        assert!(!lower.contains(&data[i..i + 6]), "{msg:?} quotes {:?}", &data[i..i + 6]);
    }
}

#[test]
fn a_secret_key_as_recipient_is_named_not_quoted() {
    // RSA keys come from aws-lc: the portable backend (the browser's) has none.
    let kinds: &[Kind] = if cfg!(portable_backend) {
        &[Kind::X25519, Kind::Hybrid, Kind::Mlkem1024]
    } else {
        &[Kind::X25519, Kind::Hybrid, Kind::Mlkem1024, Kind::Rsa3072]
    };
    for &kind in kinds {
        let key = recipient::generate(kind).unwrap();
        let secret = key.secret.as_str();
        let lines: Vec<&str> = secret.lines().filter(|l| !l.starts_with("-----")).collect();
        for input in [secret.to_string(), secret.to_lowercase(), format!("\n  {secret}")] {
            let e = recipient::parse_recipient(&input).err().expect("a secret key is no recipient");
            assert_eq!(e.to_string(), format!("invalid recipient: {IDENTITY_NOT_RECIPIENT}"), "{kind:?}");
            let e = recipient::parse_recipients_file(&input).err().unwrap();
            assert_eq!(e.to_string(), format!("invalid recipient: {IDENTITY_NOT_RECIPIENT}"), "{kind:?}");
            for l in &lines {
                assert_not_quoted(l, &e.to_string());
            }
        }
        // The other way round: a recipient where an identity belongs is named too.
        if kind != Kind::Rsa3072 {
            let e = recipient::parse_identities(&key.public).err().unwrap();
            assert_eq!(e.to_string(), format!("invalid key: {RECIPIENT_NOT_IDENTITY}"));
        }
    }
}

#[test]
fn damaged_keys_are_not_quoted_either() {
    let key = recipient::generate(Kind::X25519).unwrap();
    let secret = key.secret.as_str();
    // A typo in the key data, a missing character, a stray prefix.
    let mut typo = secret.to_string();
    typo.replace_range(30..31, if &secret[30..31] == "Q" { "P" } else { "Q" });
    for bad in [typo, secret[..secret.len() - 1].to_string(), format!("x{secret}")] {
        for e in [
            recipient::parse_identities(&bad).err().map(|e| e.to_string()),
            recipient::parse_recipient(&bad).err().map(|e| e.to_string()),
            recipient::public_of(&bad).err().map(|e| e.to_string()),
        ]
        .into_iter()
        .flatten()
        {
            assert_not_quoted(secret, &e);
        }
    }
}
