//! Re-keying keeps every payload byte, keeps the format's rules, and refuses what would lock the
//! caller out or weaken a post-quantum file.

use zeroize::Zeroizing;

use super::*;
use crate::error::Error;
use crate::format::Header;
use crate::recipient::{
    generate, parse_identities, parse_recipient, passphrase_identities, passphrase_recipient, Identity, Kind,
    Recipient,
};
use crate::{decrypt, format::Profile, Encryptor, Options};

struct Key {
    ids: Vec<Box<dyn Identity>>,
    public: String,
    secret: Zeroizing<String>,
}

fn key(kind: Kind) -> Key {
    let k = generate(kind).unwrap();
    Key {
        ids: parse_identities(&k.secret).unwrap(),
        public: k.public,
        secret: Zeroizing::new(k.secret.to_string()),
    }
}

fn to(keys: &[&Key]) -> Vec<Box<dyn Recipient>> {
    keys.iter().map(|k| parse_recipient(&k.public).unwrap()).collect()
}

fn encrypt(recipients: &[Box<dyn Recipient>], opts: Options, plain: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    Encryptor::with_recipients(recipients, opts).unwrap().encrypt_slice(plain, &mut out, None).unwrap();
    out
}

fn slack() -> Options {
    Options { slack: true, ..Options::default() }
}

/// Applies `change` with `ids` and splices: the re-keyed file and the old header's length.
fn rekey(file: &[u8], ids: &[Box<dyn Identity>], change: &Change) -> Result<(Vec<u8>, usize, Plan), Error> {
    let (head, old_len, plan) = rekey_head(file, ids, change)?;
    Ok(([&head[..], &file[old_len..]].concat(), old_len, plan))
}

#[test]
fn add_keeps_the_payload_and_the_length() {
    let (a, b) = (key(Kind::X25519), key(Kind::X25519));
    let plain: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
    let file = encrypt(&to(&[&a]), slack(), &plain);
    let change = Change { add: to(&[&b]), ..Change::default() };
    let (new, old_len, plan) = rekey(&file, &a.ids, &change).unwrap();
    assert_eq!(new.len(), file.len(), "in the slack");
    assert_eq!(new[old_len..], file[old_len..], "payload untouched");
    assert_eq!((plan.added, plan.removed), (1, 0));
    assert_eq!(decrypt(&b.ids, &new).unwrap(), plain);
    assert_eq!(decrypt(&a.ids, &new).unwrap(), plain);
}

/// An identity that counts the headers it is asked to open.
struct Counted(Box<dyn Identity>, std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Identity for Counted {
    fn unwrap_stanza(&self, stanza: &crate::format::Stanza) -> Option<Result<crate::FileKey, Error>> {
        self.0.unwrap_stanza(stanza)
    }
    fn unwrap_stanzas(&self, stanzas: &[crate::format::Stanza]) -> Option<Result<crate::FileKey, Error>> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.0.unwrap_stanzas(stanzas)
    }
}

#[test]
fn an_addition_opens_the_header_once_and_a_replacement_checks_the_result() {
    // An addition keeps the stanza the identity opened, so the lock-out check need not open the
    // new header (for a TPM key, one ECDH and one unseal less per file); a new list must be
    // checked.
    let (a, b) = (key(Kind::X25519), key(Kind::X25519));
    let file = encrypt(&to(&[&a]), slack(), b"secret");
    let asked = |change: &Change| {
        let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let ids: Vec<Box<dyn Identity>> = parse_identities(&a.secret)
            .unwrap()
            .into_iter()
            .map(|id| Box::new(Counted(id, n.clone())) as Box<dyn Identity>)
            .collect();
        rekey(&file, &ids, change).unwrap();
        n.load(std::sync::atomic::Ordering::Relaxed)
    };
    assert_eq!(asked(&Change { add: to(&[&b]), ..Change::default() }), 1);
    assert_eq!(asked(&Change { set: Some(to(&[&a, &b])), ..Change::default() }), 2);
}

#[test]
fn set_replaces_and_the_removed_key_fails() {
    let (a, b, c) = (key(Kind::X25519), key(Kind::X25519), key(Kind::X25519));
    for opts in [slack(), Options::default(), Options::age()] {
        for plain in [&b""[..], b"x", &[7u8; 70_000]] {
            let file = encrypt(&to(&[&a, &b]), opts.clone(), plain);
            let change = Change { set: Some(to(&[&a, &c])), ..Change::default() };
            let (new, old_len, plan) = rekey(&file, &a.ids, &change).unwrap();
            assert_eq!(new[new.len() - (file.len() - old_len)..], file[old_len..]);
            assert_eq!(plan.removed, 2, "anonymous stanzas count as removed");
            assert_eq!(decrypt(&c.ids, &new).unwrap(), plain);
            assert!(matches!(decrypt(&b.ids, &new), Err(Error::NoIdentityMatched)));
        }
    }
}

#[test]
fn a_longer_header_gets_fresh_slack() {
    let (a, b) = (key(Kind::X25519), key(Kind::Hybrid));
    let file = encrypt(&to(&[&a]), Options::default(), b"grow");
    // No slack: the new header is longer, and comes with room for next time.
    let change = Change { set: Some(to(&[&b])), remove_own: true, ..Change::default() };
    let (new, _, _) = rekey(&file, &a.ids, &change).unwrap();
    let h = Header::read_from(&mut &new[..]).unwrap();
    assert!(h.stanzas.iter().any(|s| s.tag == SLACK_TYPE));
    assert_eq!(h.encode_len() % 4096, 0);
    assert_eq!(decrypt(&b.ids, &new).unwrap(), b"grow");
}

#[test]
fn refusals() {
    let (a, b, pq) = (key(Kind::X25519), key(Kind::X25519), key(Kind::Hybrid));
    let classic = encrypt(&to(&[&a]), slack(), b"c");
    let quantum = encrypt(&to(&[&pq]), slack(), b"q");
    // A classic recipient added to a post-quantum file: a downgrade.
    let add = |k: &Key| Change { add: to(&[k]), ..Change::default() };
    assert!(matches!(rekey(&quantum, &pq.ids, &add(&a)), Err(Error::IncompatibleRecipients(_))));
    // Setting the list to classic recipients, with or without the old post-quantum key (with
    // remove_own too): the same file key, now wrapped classically. Only a rotation may do that.
    let both: Vec<Box<dyn Identity>> =
        [&pq, &a].iter().flat_map(|k| parse_identities(&k.secret).unwrap()).collect();
    for (set, own) in [(to(&[&a]), false), (to(&[&pq, &a]), false), (to(&[&b]), true)] {
        let downgrade = Change { set: Some(set), remove_own: own, ..Change::default() };
        // A mixed list is refused by the label rule first; a classic one by the downgrade rule.
        match rekey(&quantum, &both, &downgrade) {
            Err(Error::IncompatibleRecipients(m)) => {
                assert!(m.contains("rotate") || m.contains("mixed"), "{m}")
            }
            other => panic!("a post-quantum file key wrapped to a classic recipient: {:?}", other.err()),
        }
    }
    // Post-quantum to post-quantum, and to a passphrase (symmetric), stay allowed.
    let pq2 = key(Kind::Hybrid);
    let to_pq = Change { set: Some(to(&[&pq, &pq2])), ..Change::default() };
    assert_eq!(decrypt(&pq2.ids, &rekey(&quantum, &pq.ids, &to_pq).unwrap().0).unwrap(), b"q");
    // And the other way round: no mixing, as age.
    assert!(matches!(rekey(&classic, &a.ids, &add(&pq)), Err(Error::IncompatibleRecipients(_))));
    // X25519 stanzas are anonymous: no removal by name.
    let remove = Change { remove: to(&[&b]), ..Change::default() };
    assert!(matches!(rekey(&classic, &a.ids, &remove), Err(Error::InvalidArgument(_))));
    // Removing every key the caller holds, unless asked.
    let lockout = Change { set: Some(to(&[&b])), ..Change::default() };
    assert!(
        matches!(rekey(&classic, &a.ids, &lockout), Err(Error::InvalidArgument(m)) if m.contains("leave out every key"))
    );
    let asked = Change { set: Some(to(&[&b])), remove_own: true, ..Change::default() };
    assert_eq!(decrypt(&b.ids, &rekey(&classic, &a.ids, &asked).unwrap().0).unwrap(), b"c");
    // A wrong identity opens nothing; a changed header fails its MAC before anything is built.
    assert!(matches!(rekey(&classic, &b.ids, &add(&b)), Err(Error::NoIdentityMatched)));
    let mut tampered = classic.clone();
    let at = tampered.windows(3).position(|w| w == b"---").unwrap() - 2;
    tampered[at] ^= 1;
    assert!(rekey(&tampered, &a.ids, &add(&b)).is_err());
    // Nothing to do.
    assert!(rekey(&classic, &a.ids, &Change::default()).is_err());
}

// Every kind whose stanzas name their key (P-256 tags, SSH, RSA) is native only.
#[cfg(not(portable_backend))]
#[test]
fn tag_stanzas_are_removed_by_name() {
    let a = key(Kind::X25519);
    let p = generate(Kind::P256).unwrap();
    let tag_recipient = crate::recipient::tag_recipients_of(&p.secret).unwrap();
    let tag = || vec![parse_recipient(tag_recipient.trim()).unwrap()];
    let mut list = to(&[&a]);
    list.extend(tag());
    let file = encrypt(&list, slack(), b"tagged");
    let change = Change { remove: tag(), ..Change::default() };
    let (new, _, plan) = rekey(&file, &a.ids, &change).unwrap();
    assert_eq!((plan.removed, plan.after.len()), (1, 1));
    assert!(decrypt(&parse_identities(&p.secret).unwrap(), &new).is_err());
    // Adding a key whose stanza is already there wraps nothing.
    let again = Change { add: to(&[&a]).into_iter().chain(tag()).collect(), ..Change::default() };
    let (_, _, plan) = rekey(&file, &a.ids, &again).unwrap();
    assert_eq!(plan.added, 1, "the tag stanza names its key; the X25519 one cannot be told");
}

#[test]
fn passphrase_and_recipients_trade_places() {
    let a = key(Kind::X25519);
    let pass = || Zeroizing::new("correct horse".to_string());
    for profile in [Profile::Hyperseal, Profile::Age] {
        let opts = if profile == Profile::Age { Options::age() } else { slack() };
        let locked = encrypt(&[passphrase_recipient(profile, pass())], opts.clone(), b"p");
        let ids = passphrase_identities(pass());
        // Adding to a passphrase file is refused: it must stand alone.
        assert!(matches!(
            rekey(&locked, &ids, &Change { add: to(&[&a]), ..Change::default() }),
            Err(Error::IncompatibleRecipients(_))
        ));
        let to_keys = Change { set: Some(to(&[&a])), remove_own: true, ..Change::default() };
        let (opened, _, _) = rekey(&locked, &ids, &to_keys).unwrap();
        assert_eq!(decrypt(&a.ids, &opened).unwrap(), b"p");
        let back = Change {
            set: Some(vec![passphrase_recipient(profile, pass())]),
            remove_own: true,
            ..Change::default()
        };
        let (relocked, _, _) = rekey(&opened, &a.ids, &back).unwrap();
        assert_eq!(
            Header::read_from(&mut &relocked[..]).unwrap().stanzas.len(),
            1,
            "no slack beside a passphrase"
        );
        assert_eq!(decrypt(&passphrase_identities(pass()), &relocked).unwrap(), b"p");
    }
}
