//! Known answers from typage's own functions (vectors/fido2prf.json, made by
//! bindings/wasm/test/fido2prf-vectors.mjs under Node with a fixed random source and a stand-in
//! authenticator), and the kind's rules.

use super::identity_string::PasskeyIdentity;
use super::*;
use crate::format::decode_b64;
use crate::recipient::{wrap_all, x25519::X25519Identity, Recipient};

fn vectors() -> serde_json::Value {
    serde_json::from_str(include_str!("../../../../../vectors/fido2prf.json")).expect("vectors parse")
}

fn hex(v: &serde_json::Value) -> Vec<u8> {
    hex::decode(v.as_str().expect("hex string")).expect("hex")
}

fn b64(v: &serde_json::Value) -> Vec<u8> {
    decode_b64(v.as_str().expect("base64 string").as_bytes()).expect("base64")
}

fn nonce_of(v: &serde_json::Value) -> [u8; NONCE_LEN] {
    hex(&v["nonce"]).try_into().expect("16 bytes")
}

fn file_key(v: &serde_json::Value) -> FileKey {
    FileKey::from_slice(&hex(&v["fileKey"])).expect("file key")
}

fn stanza(v: &serde_json::Value) -> Stanza {
    let args = v["stanza"]["args"].as_array().expect("args").iter().map(|a| a.as_str().unwrap().into());
    let mut args: Vec<String> = args.collect();
    let tag = args.remove(0);
    Stanza::new(&tag, args, b64(&v["stanza"]["body"]))
}

fn key_of(v: &serde_json::Value) -> WrappingKey {
    WrappingKey::from_prf(&hex(&v["prfFirst"]), &hex(&v["prfSecond"])).expect("key")
}

#[test]
fn prf_inputs_and_wrapping_key_match_typage() {
    let all = vectors();
    let cases = all["stanzas"].as_array().expect("cases");
    assert!(cases.len() >= 3);
    for v in cases {
        let (first, second) = prf_inputs(&nonce_of(v));
        assert_eq!(first.to_vec(), hex(&v["prfInputFirst"]));
        assert_eq!(second.to_vec(), hex(&v["prfInputSecond"]));
        assert_eq!(key_of(v).expose().to_vec(), hex(&v["wrappingKey"]));
    }
}

#[test]
fn stanza_matches_typage_byte_for_byte() {
    for v in vectors()["stanzas"].as_array().unwrap() {
        let expected = stanza(v);
        let r = Fido2PrfRecipient::new(nonce_of(v), key_of(v));
        let (stanzas, labels) = r.wrap_file_key(&file_key(v)).expect("wrap");
        assert!(labels.is_empty());
        assert_eq!(stanzas, vec![expected.clone()]);
        // And typage's stanza opens to the file key.
        let id = Fido2PrfIdentity::new(nonce_of(v), key_of(v));
        let got = id.unwrap_stanza(&expected).expect("mine").expect("opens");
        assert_eq!(got.expose(), file_key(v).expose());
        assert_eq!(stanza_nonces(std::slice::from_ref(&expected)).unwrap(), vec![nonce_of(v)]);
    }
}

#[test]
fn identity_strings_match_typage() {
    for v in vectors()["identities"].as_array().unwrap() {
        let id = PasskeyIdentity {
            credential_id: hex(&v["credentialId"]),
            rp_id: v["rpId"].as_str().unwrap().into(),
            transports: v["transports"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().into())
                .collect(),
        };
        let s = v["identity"].as_str().unwrap();
        assert_eq!(id.encode().unwrap(), s);
        assert_eq!(PasskeyIdentity::parse(s).unwrap(), id);
        assert_eq!(PasskeyIdentity::parse(&s.to_ascii_lowercase()).unwrap(), id);
        assert!(PasskeyIdentity::is_identity(s));
    }
}

#[test]
fn a_wrapping_key_seals_once() {
    let v = &vectors()["stanzas"][0];
    let r = Fido2PrfRecipient::new(nonce_of(v), key_of(v));
    r.wrap_file_key(&file_key(v)).expect("first");
    let e = r.wrap_file_key(&file_key(v)).unwrap_err();
    assert!(e.to_string().contains("one file key only"), "{e}");
}

#[test]
fn another_credential_or_nonce_is_not_mine() {
    let all = vectors();
    let (a, b) = (&all["stanzas"][0], &all["stanzas"][1]);
    // b's answers for a's nonce: another credential.
    let other = Fido2PrfIdentity::new(nonce_of(a), key_of(b));
    assert!(other.unwrap_stanza(&stanza(a)).is_none());
    // a's key for another nonce.
    let elsewhere = Fido2PrfIdentity::new(nonce_of(b), key_of(a));
    assert!(elsewhere.unwrap_stanza(&stanza(a)).is_none());
    let x = crate::recipient::x25519::X25519Identity::from_bech32(
        "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX",
    )
    .unwrap();
    assert!(x.unwrap_stanza(&stanza(a)).is_none(), "other kinds pass fido2prf stanzas by");
}

#[test]
fn malformed_stanzas_are_errors() {
    let v = &vectors()["stanzas"][0];
    let id = Fido2PrfIdentity::new(nonce_of(v), key_of(v));
    let good = stanza(v);
    let mut cases = Vec::new();
    let mut s = good.clone();
    s.args.push("extra".into());
    cases.push(s);
    let mut s = good.clone();
    s.args.clear();
    cases.push(s);
    let mut s = good.clone();
    s.args[0] = encode_b64(&[0u8; 15]);
    cases.push(s);
    let mut s = good.clone();
    s.args[0].push('=');
    cases.push(s);
    let mut s = good.clone();
    s.body.pop();
    cases.push(s);
    for s in cases {
        let e = id.unwrap_stanza(&s).expect("a fido2prf stanza is this kind's").unwrap_err();
        assert_eq!(e.code(), crate::ErrorCode::Format, "{e}");
        assert!(stanza_nonces(&[s]).is_err());
    }
}

#[test]
fn bad_prf_answers_are_refused() {
    assert!(WrappingKey::from_prf(&[0; 32], &[0; 31]).is_err());
    assert!(WrappingKey::from_prf(&[], &[0; 32]).is_err());
    assert_eq!(format!("{:?}", WrappingKey::from_prf(&[7; 32], &[7; 32]).unwrap()), "WrappingKey(redacted)");
}

#[test]
fn identity_strings_are_bounded_and_strict() {
    let id = PasskeyIdentity {
        credential_id: vec![1; 64],
        rp_id: "example.com".into(),
        transports: vec!["usb".into()],
    };
    let s = id.encode().unwrap();
    // Bad checksum, wrong kind, trailing bytes, too long a credential ID.
    let mut flipped = s.clone().into_bytes();
    let last = flipped.len() - 1;
    flipped[last] = if flipped[last] == b'Q' { b'P' } else { b'Q' };
    assert!(PasskeyIdentity::parse(std::str::from_utf8(&flipped).unwrap()).is_err());
    assert!(PasskeyIdentity::parse(
        "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
    )
    .is_err());
    let (_, mut data) = super::super::bech32_long::decode(&s).unwrap();
    data.push(0);
    let trailing = super::super::bech32_long::encode("age-plugin-fido2prf-", &data).to_ascii_uppercase();
    assert!(PasskeyIdentity::parse(&trailing).unwrap_err().to_string().contains("trailing"));
    let long = PasskeyIdentity { credential_id: vec![1; 1024], ..id.clone() };
    assert!(long.encode().is_err());
    assert!(PasskeyIdentity::parse(&"A".repeat(5000)).is_err());
}

#[test]
fn passkeys_stand_beside_classic_and_postquantum_but_not_a_passphrase() {
    let v = &vectors()["stanzas"][0];
    let fk = FileKey::generate(16);
    let x = X25519Identity::from_bech32(
        "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX",
    )
    .unwrap();
    let pk = || -> Box<dyn Recipient> { Box::new(Fido2PrfRecipient::new(nonce_of(v), key_of(v))) };
    let both = wrap_all(&[pk(), Box::new(x.to_public())], &fk).expect("passkey + X25519");
    assert_eq!(both.len(), 2);
    let pq = crate::recipient::generate(crate::Kind::Hybrid).unwrap();
    let pq = crate::recipient::parse_recipient(&pq.public).unwrap();
    assert_eq!(wrap_all(&[pk(), pq], &fk).expect("passkey + post-quantum").len(), 2);
    let pass = crate::recipient::passphrase_recipient(
        crate::format::Profile::Age,
        zeroize::Zeroizing::new("pw".into()),
    );
    assert!(wrap_all(&[pk(), pass], &fk).is_err());
}

#[test]
fn a_typage_file_opens_with_its_answers() {
    let v = &vectors()["file"];
    use base64::Engine;
    let file = base64::engine::general_purpose::STANDARD.decode(v["file"].as_str().unwrap()).unwrap();
    let d = crate::Decryptor::from_slice(&file).unwrap();
    let nonces = stanza_nonces(&d.header().stanzas).unwrap();
    assert_eq!(nonces.len(), 1);
    let ids: Vec<Box<dyn Identity>> = vec![Box::new(Fido2PrfIdentity::new(nonces[0], key_of(v)))];
    assert_eq!(crate::decrypt(&ids, &file).unwrap(), v["plaintext"].as_str().unwrap().as_bytes());
    // Another credential's answers: no identity matched.
    let other = &vectors()["stanzas"][1];
    let ids: Vec<Box<dyn Identity>> = vec![Box::new(Fido2PrfIdentity::new(nonces[0], key_of(other)))];
    assert_eq!(crate::decrypt(&ids, &file).unwrap_err().code(), crate::ErrorCode::NoIdentity);
}

/// A file `to` these recipients (age format), as bytes.
fn sealed_to(to: &[Box<dyn Recipient>], plaintext: &[u8]) -> Vec<u8> {
    let enc = crate::Encryptor::with_recipients(to, crate::Options::age()).unwrap();
    let mut out = vec![0; enc.encrypted_len(plaintext.len())];
    enc.encrypt_into(plaintext, &mut out).unwrap();
    out
}

#[test]
fn a_passkey_joins_a_postquantum_file_and_leaves_it_by_name() {
    use crate::rekey::{rekey_head, Change};
    let all = vectors();
    let (v, w) = (&all["stanzas"][0], &all["stanzas"][1]);
    let pq = crate::recipient::generate(crate::Kind::Hybrid).unwrap();
    let pq_ids = crate::recipient::parse_identities(&pq.secret).unwrap();
    let file = sealed_to(&[crate::recipient::parse_recipient(&pq.public).unwrap()], b"post-quantum");
    // Added: the post-quantum file keeps its label rule and gains the passkey.
    let add =
        Change { add: vec![Box::new(Fido2PrfRecipient::new(nonce_of(v), key_of(v)))], ..Change::default() };
    let (head, old_len, plan) =
        rekey_head(&file, &pq_ids, &add).expect("a passkey joins a post-quantum file");
    assert_eq!(plan.after, ["mlkem768x25519", LABEL]);
    let with = [head, file[old_len..].to_vec()].concat();
    let passkey: Vec<Box<dyn Identity>> = vec![Box::new(Fido2PrfIdentity::new(nonce_of(v), key_of(v)))];
    assert_eq!(crate::decrypt(&passkey, &with).unwrap(), b"post-quantum");
    // Removed by the answer for its stanza; another credential's names nothing.
    let other = Change {
        remove: vec![Box::new(Fido2PrfRecipient::new(nonce_of(v), key_of(w)))],
        ..Change::default()
    };
    assert!(rekey_head(&with, &pq_ids, &other)
        .err()
        .expect("refused")
        .to_string()
        .contains("not a recipient of this file"));
    let remove = Change {
        remove: vec![Box::new(Fido2PrfRecipient::new(nonce_of(v), key_of(v)))],
        ..Change::default()
    };
    let (head, old_len, plan) = rekey_head(&with, &pq_ids, &remove).unwrap();
    assert_eq!(plan.after, ["mlkem768x25519"]);
    let without = [head, with[old_len..].to_vec()].concat();
    assert_eq!(crate::decrypt(&passkey, &without).unwrap_err().code(), crate::ErrorCode::NoIdentity);
    assert_eq!(crate::decrypt(&pq_ids, &without).unwrap(), b"post-quantum");
    // Opened with the passkey only, removing it would lock its holder out: refused.
    let remove = Change {
        remove: vec![Box::new(Fido2PrfRecipient::new(nonce_of(v), key_of(v)))],
        ..Change::default()
    };
    let e = rekey_head(&with, &passkey, &remove).err().expect("refused");
    assert!(e.to_string().contains("could not open it again"), "{e}");
}

#[test]
fn a_classic_key_still_cannot_join_a_postquantum_file_beside_a_passkey() {
    use crate::rekey::{rekey_head, Change};
    let v = &vectors()["stanzas"][0];
    let pq = crate::recipient::generate(crate::Kind::Hybrid).unwrap();
    let pq_ids = crate::recipient::parse_identities(&pq.secret).unwrap();
    let to: Vec<Box<dyn Recipient>> = vec![
        crate::recipient::parse_recipient(&pq.public).unwrap(),
        Box::new(Fido2PrfRecipient::new(nonce_of(v), key_of(v))),
    ];
    let file = sealed_to(&to, b"x");
    let x = X25519Identity::from_bech32(
        "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX",
    )
    .unwrap();
    let add = Change { add: vec![Box::new(x.to_public())], ..Change::default() };
    assert_eq!(rekey_head(&file, &pq_ids, &add).err().expect("refused").code(), crate::ErrorCode::Key);
}
