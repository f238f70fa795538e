//! Tag recipients: the keys age's own test plugin derives, files made by the real age v1.3.1
//! (`tests/data/age_*tag.age`, made with `age -r` to those keys), round trips, labels, and every
//! broken stanza. Live interop both ways through the CLI: `hyperseal-cli/tests/age_tag.rs`.

use super::*;
use crate::format::decode_b64;
use crate::recipient::contract::{Damaged, Pair};
use crate::recipient::hpke::mlkem768p256::Mlkem768P256Identity;
use crate::recipient::hpke::p256::P256Identity;
use crate::recipient::{parse_recipient, wrap_all, Identity};

/// The recipients hard-coded in age v1.3.1 `tag/internal/age-plugin-tagtest`: the keys
/// `tagtest.NewClassicIdentity("age-plugin-tagtest")` and `NewHybridIdentity(…)` derive with
/// HPKE `DeriveKeyPair`.
pub(crate) const TAGTEST_CLASSIC: &str =
    "age1tag1qwe0kafsjrar4txm6heqnhpfuggzr0gvznz7fvygxrlq90u5mq2pysxtw6h";
const TAGTEST_HYBRID_FILE: &str = include_str!("../../../tests/data/age_tagtest_hybrid_recipient.txt");

fn classic() -> P256Identity {
    P256Identity::derive(b"age-plugin-tagtest").unwrap()
}

fn hybrid() -> Mlkem768P256Identity {
    Mlkem768P256Identity::derive(b"age-plugin-tagtest").unwrap()
}

fn age_file(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn derived_keys_are_age_plugin_tagtest_keys() {
    assert_eq!(classic().to_tag_recipient().to_bech32(), TAGTEST_CLASSIC);
    assert_eq!(hybrid().to_tag_recipient().to_bech32(), TAGTEST_HYBRID_FILE.trim());
    // and they parse back to the same keys
    for s in [TAGTEST_CLASSIC, TAGTEST_HYBRID_FILE.trim()] {
        assert_eq!(TagRecipient::from_bech32(s).unwrap().to_bech32(), s);
        assert!(parse_recipient(s).is_ok(), "dispatched as a tag, not a plugin");
    }
}

#[test]
fn opens_files_made_by_age() {
    let ids: Vec<Box<dyn Identity>> = vec![Box::new(classic()), Box::new(hybrid())];
    for f in ["age_p256tag.age", "age_mlkem768p256tag.age"] {
        assert_eq!(crate::decrypt::decrypt(&ids, &age_file(f)).unwrap(), b"hello from age v1.3.1\n", "{f}");
    }
    // Each key opens only its own kind; a fresh key of the same kind is "not mine".
    let other: Vec<Box<dyn Identity>> = vec![Box::new(P256Identity::derive(b"other").unwrap())];
    assert!(matches!(
        crate::decrypt::decrypt(&other, &age_file("age_p256tag.age")),
        Err(Error::NoIdentityMatched)
    ));
}

#[test]
fn round_trips_labels_and_stanza_shape() {
    for (id, pq, kind, enc_len) in [
        (Box::new(classic()) as Box<dyn Identity>, false, "p256tag", POINT_LEN),
        (Box::new(hybrid()), true, "mlkem768p256tag", HYBRID_ENC_LEN),
    ] {
        let r =
            TagRecipient::from_bech32(if pq { TAGTEST_HYBRID_FILE.trim() } else { TAGTEST_CLASSIC }).unwrap();
        assert_eq!(r.is_postquantum(), pq);
        Pair { recipient: &r, identity: &*id }.round_trip(&[16], |_, s, labels| {
            assert_eq!(labels.contains(POSTQUANTUM), pq);
            assert_eq!((s.tag.as_str(), s.args.len(), s.body.len()), (kind, 2, 32));
            assert_eq!(decode_b64(s.args[0].as_bytes()).unwrap().len(), TAG_LEN);
            assert_eq!(decode_b64(s.args[1].as_bytes()).unwrap().len(), enc_len);
            // Two wraps never share an encapsulation (fresh ephemeral keys).
            let (again, _) = r.wrap_file_key(&FileKey::generate(16)).unwrap();
            assert_ne!(again[0].args[1], s.args[1]);
        });
    }
}

#[test]
fn not_mine_and_broken() {
    let id = classic();
    let r = id.to_tag_recipient();
    let pair = Pair { recipient: &r, identity: &id };
    let s = pair.stanza(16);
    // Another key of the same kind: the tag differs, so not mine without any ECDH. The hybrid
    // identity ignores classic tag stanzas, and the reverse.
    let (hs, _) = hybrid().to_tag_recipient().wrap_file_key(&FileKey::generate(16)).unwrap();
    pair.not_mine(&s, &[&P256Identity::derive(b"x").unwrap(), &hybrid()], &hs);
    // a matching tag over an enc that is not a curve point
    let mut enc = decode_b64(s.args[1].as_bytes()).unwrap();
    enc[64] ^= 1;
    let compressed = bech32_long::decode(TAGTEST_CLASSIC).unwrap().1;
    let matching_tag = encode_b64(&tag(CLASSIC_LABEL, &enc, &compressed));
    pair.damaged(
        &s,
        Damaged::Invalid,
        &[
            &|b| b.args.pop().map(drop).unwrap(),
            &|b| b.args.push("AA".into()),
            &|b| b.args[0] = encode_b64(&[0; 5]),
            &|b| b.args[1] = encode_b64(&[4; POINT_LEN - 1]),
            &|b| b.body.truncate(31),
            // the tag matches but the body was altered: age's tagtest fails here too
            &|b| b.body[0] ^= 1,
            &|b| {
                b.args[0] = matching_tag.clone();
                b.args[1] = encode_b64(&enc);
            },
        ],
    );
}

#[test]
fn label_rules_as_in_age() {
    let x25519 = parse_recipient(&crate::recipient::x25519::generate().unwrap().public).unwrap();
    let pq = parse_recipient(&crate::recipient::hybrid::generate().unwrap().public).unwrap();
    let tag_c = parse_recipient(TAGTEST_CLASSIC).unwrap();
    let tag_pq = parse_recipient(TAGTEST_HYBRID_FILE.trim()).unwrap();
    let fk = FileKey::generate(16);
    // age's TestTagHybridMixingRestrictions, one by one
    assert!(wrap_all(&[tag_pq, pq], &fk).is_ok());
    let tag_pq = parse_recipient(TAGTEST_HYBRID_FILE.trim()).unwrap();
    assert!(matches!(wrap_all(&[tag_pq, x25519], &fk), Err(Error::IncompatibleRecipients(_))));
    let x25519 = parse_recipient(&crate::recipient::x25519::generate().unwrap().public).unwrap();
    assert!(wrap_all(&[tag_c, x25519], &fk).is_ok());
}

#[test]
fn bech32_rejections() {
    assert!(TagRecipient::from_bech32(&TAGTEST_CLASSIC.to_ascii_uppercase()).is_ok(), "one case is fine");
    let data = bech32_long::decode(TAGTEST_CLASSIC).unwrap().1;
    // a point that is not on the curve, a wrong length, an uncompressed point
    let mut off = data.clone();
    off[32] ^= 1;
    for bad in [
        bech32_long::encode(CLASSIC_HRP, &data[1..]),
        bech32_long::encode(CLASSIC_HRP, &kem::decompress(&data).unwrap()[..]),
        bech32_long::encode(HYBRID_HRP, &data),
    ] {
        assert!(TagRecipient::from_bech32(&bad).is_err(), "{bad}");
    }
    let off_s = bech32_long::encode(CLASSIC_HRP, &off);
    if crate::crypto::p256_decompress(&off).is_none() {
        assert!(TagRecipient::from_bech32(&off_s).is_err());
    }
    assert!(!is_recipient("age1tagx") && is_recipient("AGE1TAG1Q") && is_recipient("age1tagpq1q"));
}

/// `tests/data/age_tagtest_identities.txt` (read by the CLI interop tests) holds exactly these
/// two derived keys, as hyperseal `p256` and `p256-mlkem768` identities.
#[test]
fn committed_tagtest_identity_file_is_the_derived_keys() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/data/age_tagtest_identities.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_default();
    let want = format!("{}\n{}\n", &*classic().to_bech32(), &*hybrid().to_bech32());
    let got: String = text.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    assert_eq!(got, want);
}
