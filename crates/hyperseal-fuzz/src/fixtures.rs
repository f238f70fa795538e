//! Fixed keys (see `fixtures/README.md`), parsed once per process: the targets run millions of
//! times, and parsing an RSA or ML-KEM key each time would drown the code under test.

use std::sync::OnceLock;

use hyperseal::recipient::{
    self, passphrase::PassphraseIdentity, plugin::Plugins, scrypt::ScryptIdentity, Callbacks, Identity,
    Recipient,
};
use hyperseal_toolkit::token::KeyRing;
use zeroize::Zeroizing;

pub const X25519: &str = include_str!("../fixtures/x25519.key");
pub const HYBRID: &str = include_str!("../fixtures/hybrid.key");
pub const MLKEM1024: &str = include_str!("../fixtures/mlkem1024.key");
pub const RSA3072: &str = include_str!("../fixtures/rsa3072.key");
pub const TOKEN: &str = include_str!("../fixtures/token.key");
/// The identities and passphrase of the C2SP age test kit (crates/hyperseal/tests/data), whose
/// files seed the corpus: with them, mutations of the kit's files reach the payload.
const TESTKIT: &str = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0
AGE-SECRET-KEY-PQ-1HZLGZUPT4ETPKDEV8HSGFDCYZ4E522W0A7PU2LHT8EH9W6YLNC3SW78XKG";
pub const PASSPHRASE: &str = "password";

/// The identities the decrypt target uses: ours (its recipe files are encrypted to it), the test
/// kit's, and the kit's passphrase with scrypt capped at the kit's work factor (2^10).
pub fn decrypt_ids() -> &'static [Box<dyn Identity>] {
    &ids()[..]
}

/// The same identities, shared (as `Opener` takes them).
pub fn decrypt_ids_arc() -> std::sync::Arc<Vec<Box<dyn Identity>>> {
    ids().clone()
}

fn ids() -> &'static std::sync::Arc<Vec<Box<dyn Identity>>> {
    static IDS: OnceLock<std::sync::Arc<Vec<Box<dyn Identity>>>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut ids = recipient::parse_identities(X25519).expect("fixture");
        ids.extend(recipient::parse_identities(TESTKIT).expect("fixture"));
        ids.push(Box::new(
            ScryptIdentity::new(Zeroizing::new(PASSPHRASE.to_string())).with_max_work_factor(10),
        ));
        std::sync::Arc::new(ids)
    })
}

/// The recipient of our X25519 identity.
pub fn x25519_recipient() -> &'static [Box<dyn Recipient>] {
    static R: OnceLock<Vec<Box<dyn Recipient>>> = OnceLock::new();
    R.get_or_init(|| {
        let public = recipient::public_of(X25519).expect("fixture");
        vec![recipient::parse_recipient(&public).expect("fixture")]
    })
}

/// One identity of every kind. The passphrase identities have tiny work caps, so a stanza
/// asking for real work is refused (`WorkFactorTooHigh`) instead of stalling the fuzzer.
pub fn every_kind() -> &'static [Box<dyn Identity>] {
    static IDS: OnceLock<Vec<Box<dyn Identity>>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut ids = Vec::new();
        for text in [X25519, HYBRID, MLKEM1024, RSA3072, TESTKIT] {
            ids.extend(recipient::parse_identities(text).expect("fixture"));
        }
        let pass = || Zeroizing::new(PASSPHRASE.to_string());
        ids.push(Box::new(ScryptIdentity::new(pass()).with_max_work_factor(8)));
        ids.push(Box::new(PassphraseIdentity::new(pass()).with_max(64, 1)));
        ids
    })
}

/// The token key ring.
pub fn token_ring() -> &'static KeyRing {
    static RING: OnceLock<KeyRing> = OnceLock::new();
    RING.get_or_init(|| KeyRing::from_key_file(TOKEN).expect("fixture"))
}

/// A caller that answers every passphrase prompt with [`PASSPHRASE`] and allows no plugin.
pub struct Answer;
impl Callbacks for Answer {
    fn request_passphrase(&self, _: &str) -> Option<Zeroizing<String>> {
        Some(Zeroizing::new(PASSPHRASE.to_string()))
    }
    fn plugins(&self) -> Plugins {
        Plugins::Refuse
    }
}

/// The recipient of [`HYBRID`], which the sops target adds to files.
pub const HYBRID_RECIPIENT: &str = include_str!("../fixtures/hybrid.pub").trim_ascii();

/// The identity the sops target's seed files are encrypted to (our X25519 key).
pub fn sops_ids() -> &'static [Box<dyn Identity>] {
    static IDS: OnceLock<Vec<Box<dyn Identity>>> = OnceLock::new();
    IDS.get_or_init(|| recipient::parse_identities(X25519).expect("fixture"))
}
