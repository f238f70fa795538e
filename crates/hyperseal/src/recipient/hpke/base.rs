//! The part of HPKE (RFC 9180) the recipients use: base mode (no PSK, no authentication), KDF
//! HKDF-SHA-256 (0x0001), AEAD ChaCha20-Poly1305 (0x0003), one `Seal` with sequence number 0 and
//! empty associated data: the file key. So the nonce is `base_nonce` XOR 0 = `base_nonce`, and
//! the exporter secret is never derived.
//!
//! Three KEMs plug into it: X-Wing (0x647a, age's `mlkem768x25519`, in `hybrid.rs`),
//! DHKEM(P-256, HKDF-SHA256) (0x0010) and MLKEM768-P256 (0x0050, draft-ietf-hpke-pq), the last
//! two in `kem.rs` (hyperseal's `p256`/`mlkem768p256` and age's tag stanzas).
//!
//! Composed from the backend's HKDF and ChaCha20-Poly1305 (`crate::crypto`) because no HPKE crate
//! offers these KEMs on aws-lc (aws-lc-rs exposes no HPKE); checked against RFC 9180 A.5.1 and
//! the draft-ietf-hpke-pq vectors (`vectors/hpke/`, tests in `kem.rs`).

use zeroize::Zeroizing;

use crate::crypto::hmac_sha256;
use crate::file_key::FileKey;
use crate::recipient::primitives::{check_wrapped_len, hkdf_expand, open_file_key, seal_file_key};

/// X-Wing, "MLKEM768-X25519" of draft-ietf-hpke-pq.
pub(crate) const KEM_XWING: u16 = 0x647a;
/// DHKEM(P-256, HKDF-SHA256), RFC 9180 §7.1.
pub(crate) const KEM_P256: u16 = 0x0010;
/// MLKEM768-P256, draft-ietf-hpke-pq.
pub(crate) const KEM_MLKEM768_P256: u16 = 0x0050;

const KDF_HKDF_SHA256: u16 = 0x0001;
const AEAD_CHACHA20_POLY1305: u16 = 0x0003;
const MODE_BASE: u8 = 0;

/// The HPKE suite id: "HPKE" ‖ I2OSP(kem, 2) ‖ I2OSP(kdf, 2) ‖ I2OSP(aead, 2).
pub(crate) fn suite_id(kem: u16, kdf: u16, aead: u16) -> [u8; 10] {
    let mut id = *b"HPKE\0\0\0\0\0\0";
    id[4..6].copy_from_slice(&kem.to_be_bytes());
    id[6..8].copy_from_slice(&kdf.to_be_bytes());
    id[8..].copy_from_slice(&aead.to_be_bytes());
    id
}

/// The suite id a KEM's own derivations use: "KEM" ‖ I2OSP(kem, 2).
pub(crate) fn kem_suite_id(kem: u16) -> [u8; 5] {
    let b = kem.to_be_bytes();
    [b'K', b'E', b'M', b[0], b[1]]
}

/// LabeledExtract(salt, label, ikm) = HKDF-Extract(salt, "HPKE-v1" ‖ suite_id ‖ label ‖ ikm).
/// An empty salt is HMAC's all-zero key, as RFC 5869 specifies.
pub(crate) fn labeled_extract(suite: &[u8], salt: &[u8], label: &[u8], ikm: &[u8]) -> Zeroizing<[u8; 32]> {
    Zeroizing::new(hmac_sha256(salt, &[b"HPKE-v1", suite, label, ikm]))
}

/// LabeledExpand(prk, label, info, L) = HKDF-Expand(prk, I2OSP(L, 2) ‖ "HPKE-v1" ‖ suite_id ‖
/// label ‖ info, L).
pub(crate) fn labeled_expand(suite: &[u8], prk: &[u8], label: &[u8], info: &[u8], out: &mut [u8]) {
    let len = u16::try_from(out.len()).expect("HPKE outputs are short").to_be_bytes();
    hkdf_expand(prk, &[&len, b"HPKE-v1", suite, label, info], out);
}

/// `KeySchedule(mode_base, shared_secret, info, "", "")` for any suite: fills `key` (Nk bytes)
/// and returns `base_nonce`.
pub(crate) fn key_schedule_into(
    suite: &[u8; 10],
    shared_secret: &[u8],
    info: &[u8],
    key: &mut [u8],
) -> [u8; 12] {
    let psk_id_hash = labeled_extract(suite, b"", b"psk_id_hash", b"");
    let info_hash = labeled_extract(suite, b"", b"info_hash", info);
    let mut context = [0u8; 65];
    context[0] = MODE_BASE;
    context[1..33].copy_from_slice(&psk_id_hash[..]);
    context[33..].copy_from_slice(&info_hash[..]);
    let secret = labeled_extract(suite, shared_secret, b"secret", b"");
    labeled_expand(suite, &secret[..], b"key", &context, key);
    let mut nonce = [0u8; 12];
    labeled_expand(suite, &secret[..], b"base_nonce", &context, &mut nonce);
    nonce
}

/// The key schedule of suite (`kem`, HKDF-SHA-256, ChaCha20-Poly1305): (key, base_nonce).
pub(crate) fn key_schedule(
    kem: u16,
    shared_secret: &[u8; 32],
    info: &[u8],
) -> (Zeroizing<[u8; 32]>, [u8; 12]) {
    let mut key = Zeroizing::new([0u8; 32]);
    let nonce = key_schedule_into(
        &suite_id(kem, KDF_HKDF_SHA256, AEAD_CHACHA20_POLY1305),
        shared_secret,
        info,
        &mut key[..],
    );
    (key, nonce)
}

/// The first (and only) `Seal` of a context set up with this shared secret: the file key.
pub(crate) fn seal(kem: u16, shared_secret: &[u8; 32], info: &[u8], file_key: &FileKey) -> Vec<u8> {
    let (key, nonce) = key_schedule(kem, shared_secret, info);
    seal_file_key(&key, nonce, file_key)
}

/// The matching `Open`; `None` if the body does not authenticate. The caller has checked the
/// length with [`check_wrapped_len`].
pub(crate) fn open(kem: u16, shared_secret: &[u8; 32], info: &[u8], body: &[u8]) -> Option<FileKey> {
    debug_assert!(check_wrapped_len(body).is_ok());
    let (key, nonce) = key_schedule(kem, shared_secret, info);
    open_file_key(&key, nonce, body)
}
