//! The writer honours the reader's budget: for any recipient set and any plugin reply, what
//! `Encryptor` writes, `decrypt` reads, or `Encryptor` refuses before a byte exists — never a
//! header its own reader refuses (a file nobody can open once the plaintext is deleted).
//!
//! A plugin is whatever program the user names, and its reply is stanzas of its choosing: the
//! `Reply` recipient below stands for one, answering with stanzas of any count, line length and
//! body size around the reader's limits.

use hyperseal::format::{Profile, Stanza, Suite};
use hyperseal::recipient::{parse_identities, parse_recipient, Labels};
use hyperseal::{limits, Encryptor, Error, FileKey, Options, Recipient};
use proptest::prelude::*;

/// A recipient that answers with fixed stanzas, as a plugin may.
struct Reply(Vec<Stanza>);

impl Recipient for Reply {
    fn wrap_file_key(&self, _: &FileKey) -> Result<(Vec<Stanza>, Labels), Error> {
        Ok((self.0.clone(), Labels::new()))
    }
}

/// What the header of `stanzas` would be on disk, computed from the format's rules
/// (docs/FORMAT.md), not by the writer under test.
fn encoded_len(profile: Profile, stanzas: &[Stanza]) -> usize {
    let mut out = Vec::new();
    for s in stanzas {
        s.write_to(&mut out);
    }
    let version = match profile {
        Profile::Age => "age-encryption.org/v1\n".len(),
        Profile::Hyperseal => {
            "hyperseal/v1\n".len() + format!("params {} 65536\n", Suite::ChaCha20Poly1305.name()).len()
        }
    };
    version + out.len() + "--- ".len() + 43 + 1
}

/// Whether a reader accepts every stanza and the whole header (`format::Header::read_from`).
fn readable(profile: Profile, stanzas: &[Stanza]) -> bool {
    let line_ok = |s: &Stanza| {
        3 + s.tag.len() + s.args.iter().map(|a| a.len() + 1).sum::<usize>() < limits::HEADER_LINE
    };
    stanzas.len() <= limits::STANZAS
        && stanzas.iter().all(|s| line_ok(s) && s.body.len() <= limits::STANZA_BODY)
        && encoded_len(profile, stanzas) <= limits::HEADER_BYTES
}

/// `count` plugin stanzas with an argument of `arg` characters and a body of `body` bytes.
fn group(count: usize, arg: usize, body: usize) -> Vec<Stanza> {
    (0..count).map(|_| Stanza::new("hstest", vec!["A".repeat(arg.max(1))], vec![7u8; body])).collect()
}

/// Groups of plugin stanzas whose totals land on both sides of each limit.
fn replies() -> impl Strategy<Value = Vec<(usize, usize, usize)>> {
    let sizes = prop_oneof![
        // Many small stanzas: the stanza count.
        (0usize..9000, 1usize..60, 0usize..64),
        // Fewer large ones: the header's bytes.
        (0usize..400, 1usize..3000, 0usize..30_000),
        // One stanza near the line or body limit.
        (0usize..2, 16_300usize..16_500, 65_400usize..65_600),
    ];
    proptest::collection::vec(sizes, 0..4)
}

fn check(profile: Profile, copies: usize, groups: &[(usize, usize, usize)]) {
    let key = hyperseal::recipient::generate(hyperseal::Kind::X25519).unwrap();
    let ids = parse_identities(&key.secret).unwrap();
    // The same key named `copies` times is one stanza.
    let mut to: Vec<Box<dyn Recipient>> =
        (0..copies).map(|_| parse_recipient(&key.public).unwrap()).collect();
    let mut expected = group(1, 43, 32);
    for &(count, arg, body) in groups {
        to.push(Box::new(Reply(group(count, arg, body))));
        expected.extend(group(count, arg, body));
    }
    let opts = match profile {
        Profile::Age => Options::age(),
        Profile::Hyperseal => Options { suite: Suite::ChaCha20Poly1305, ..Options::default() },
    };
    match Encryptor::with_recipients(&to, opts) {
        Ok(enc) => {
            assert!(readable(profile, &expected), "wrote a header its reader refuses");
            let mut file = Vec::new();
            enc.encrypt_slice(b"kept", &mut file, None).unwrap();
            assert_eq!(hyperseal::decrypt(&ids, &file).unwrap(), b"kept");
            let header = hyperseal::format::Header::read_from(&mut &file[..]).unwrap();
            assert_eq!(header.stanzas.len(), expected.len(), "each key is wrapped once");
        }
        Err(Error::Limit(m)) => {
            assert!(m.starts_with(limits::UNWRITABLE), "{m}");
            assert!(!readable(profile, &expected), "refused a header its reader accepts: {m}");
        }
        Err(e) => panic!("unexpected refusal: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn written_or_refused_never_unreadable(copies in 1usize..700, groups in replies(), age in any::<bool>()) {
        check(if age { Profile::Age } else { Profile::Hyperseal }, copies, &groups);
    }
}

/// The cases a user met: one key named 600 times, and just past each limit.
#[test]
fn the_edges() {
    check(Profile::Hyperseal, 600, &[]);
    check(Profile::Age, 1, &[(limits::STANZAS - 1, 43, 32)]);
    check(Profile::Hyperseal, 1, &[(limits::STANZAS, 43, 32)]);
    check(Profile::Hyperseal, 1, &[(1, limits::HEADER_LINE, 0)]);
    check(Profile::Hyperseal, 1, &[(1, 1, limits::STANZA_BODY + 1)]);
    check(Profile::Age, 1, &[(limits::HEADER_BYTES / 2000, 100, 1400)]);
}

/// The refusal names the limit and the count.
#[test]
fn refusal_names_limit_and_count() {
    let key = hyperseal::recipient::generate(hyperseal::Kind::X25519).unwrap();
    let to: Vec<Box<dyn Recipient>> =
        vec![parse_recipient(&key.public).unwrap(), Box::new(Reply(group(limits::STANZAS, 43, 32)))];
    let e = Encryptor::with_recipients(&to, Options::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "input too large: {}{} recipient stanzas, more than the {} a reader accepts (nothing was written)",
            limits::UNWRITABLE,
            limits::STANZAS + 1,
            limits::STANZAS
        )
    );
}
