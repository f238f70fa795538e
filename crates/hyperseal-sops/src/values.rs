//! A sops file's values, as `--rotate` needs them: each value outside the metadata in sops's
//! walk order, with the path sops authenticates it under; sops's value cipher
//! (`ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`); and its `mac`.
//!
//! sops seals each value with AES-256-GCM under the data key, a random 32-byte IV, and the
//! value's path (its keys joined by `:`, and a final `:`; a list item has its list's path) as
//! additional data. The `mac` is the SHA-512 of every value's plaintext in walk order, written
//! as upper-case hex and sealed like a value with `lastmodified` as additional data. With
//! `mac_only_encrypted` only the sealed values count, after a fixed 32-byte prefix. Comments
//! are sealed too (under their branch's path) and are not in the `mac`.

use std::ops::Range;

use aes_gcm::aead::consts::U32;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::aes::Aes256;
use aes_gcm::AesGcm;
use base64::Engine;
use sha2::{Digest, Sha512};
use zeroize::Zeroizing;

use super::model::{refuse, shown, Node};
use hyperseal::Error;

/// sops's GCM: AES-256 with a 32-byte nonce (GHASH-derived counter).
type SopsGcm = AesGcm<Aes256, U32>;

/// What sops starts the `mac` hash with when `mac_only_encrypted` is set (sops.go).
const MAC_ONLY_ENCRYPTED_INIT: [u8; 32] = [
    0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0x0b, 0x0b,
    0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69,
];

/// The start of every value sops has sealed.
pub(crate) const ENC_PREFIX: &str = "ENC[AES256_GCM,";

/// One value of the file (a leaf of sops's tree), or an encrypted comment.
pub(crate) struct Leaf {
    /// The additional data sops sealed it under (`a:b:`); `None` for a comment, whose path is
    /// found by trying [`Values::branches`].
    pub aad: Option<String>,
    /// The value as the format's parser reads it.
    pub value: String,
    /// What sops hashes for it when it is not sealed (its `ToBytes` of the value's type);
    /// `None` where hyperseal does not know the type sops would give it.
    pub plain: Option<Vec<u8>>,
    /// The bytes of the value in the file.
    pub span: Range<usize>,
}

/// What a format module finds for rotation.
#[derive(Default)]
pub(crate) struct Values {
    /// The leaves in sops's walk order (comments among them, not hashed).
    pub leaves: Vec<Leaf>,
    /// Every branch's path as additional data (`:` for the top), for comments.
    pub branches: Vec<String>,
    /// Where each copy of the metadata's `mac` is (its value's bytes).
    pub mac: Vec<Range<usize>>,
    /// Where each copy of `lastmodified` is, and its value.
    pub lastmodified: Vec<(Range<usize>, String)>,
    /// The metadata's `mac_only_encrypted`.
    pub mac_only_encrypted: bool,
    /// The bytes of each copy of the metadata (nothing sealed there but the `mac`).
    pub meta_spans: Vec<Range<usize>>,
}

impl Values {
    /// A leaf at `path` (keys), its parsed value and its raw bytes.
    pub(crate) fn push(
        &mut self,
        path: &[String],
        value: String,
        plain: Option<Vec<u8>>,
        span: Range<usize>,
    ) {
        self.leaves.push(Leaf { aad: Some(aad(path)), value, plain, span });
    }
    pub(crate) fn branch(&mut self, path: &[String]) {
        let a = aad(path);
        if !self.branches.contains(&a) {
            self.branches.push(a);
        }
    }
}

/// sops's additional data for a path.
pub(crate) fn aad(path: &[String]) -> String {
    let mut s = path.join(":");
    s.push(':');
    s
}

/// Where `value` sits inside `span` of `text` (a quoted scalar's span has its quotes): the
/// range to replace when the value is written again.
pub(crate) fn locate(text: &str, span: &Range<usize>, value: &str) -> Option<Range<usize>> {
    let at = text.get(span.clone())?.find(value)?;
    Some(span.start + at..span.start + at + value.len())
}

/// The leaves under `n` (a YAML or JSON tree), whose path is `path`, in sops's walk order: a
/// list's items have the list's path. `plain(raw, value)` is what sops hashes for a leaf left
/// in the clear, from its bytes in `text` as written and its parsed value.
pub(crate) fn walk(
    n: &Node,
    path: &mut Vec<String>,
    out: &mut Values,
    plain: &dyn Fn(&str, &str) -> Option<Vec<u8>>,
    text: &str,
) {
    match n {
        Node::Map(entries, _) => {
            out.branch(path);
            for (k, v) in entries {
                path.push(k.clone());
                walk(v, path, out, plain, text);
                path.pop();
            }
        }
        Node::Seq(items, _) => {
            out.branch(path);
            for v in items {
                walk(v, path, out, plain, text);
            }
        }
        Node::Str(v, span) => {
            let p = plain(&text[span.clone()], v);
            out.push(path, v.clone(), p, span.clone());
        }
    }
}

/// `mac`, `lastmodified` and `mac_only_encrypted` of one YAML document's or JSON file's metadata.
pub(crate) fn meta_values(text: &str, sops: &Node, out: &mut Values) -> Result<(), Error> {
    let field = |k: &str| match sops.get(k) {
        Some(Node::Str(v, span)) => locate(text, span, v).map(|r| (r, v.clone())),
        _ => None,
    };
    let (Some((mac, _)), Some(lm)) = (field("mac"), field("lastmodified").filter(|(_, v)| is_timestamp(v)))
    else {
        return Err(refuse("malformed sops metadata: no `mac` or `lastmodified`"));
    };
    out.mac.push(mac);
    out.lastmodified.push(lm);
    out.mac_only_encrypted |= sops.get("mac_only_encrypted").and_then(Node::str) == Some("true");
    out.meta_spans.push(sops.span());
    Ok(())
}

/// Whether `v` is a `lastmodified` as sops writes it (RFC 3339, `2026-11-26T01:00:35Z`): the
/// `mac`'s additional data, and replaced in place by the new one.
pub(crate) fn is_timestamp(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 20
        && b.len() <= 40
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[..4].iter().chain(&b[5..7]).chain(&b[8..10]).all(u8::is_ascii_digit)
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b":-+.".contains(c))
}

/// Encrypted comments (`#ENC[…]`, `;ENC[…]` in INI): the parsers drop comments, so they are
/// found as a comment mark and the sealed value after it, outside every value's bytes. A
/// comment ends with its line, so its value is the text up to the first `]` on that line.
///
/// Linear in the file, whatever it holds: each byte is searched for `]` or a line end once (the
/// stop found for one `ENC[` serves every later one before it), and the comments taken do not
/// overlap, so their copies add up to at most the file's length.
pub(crate) fn comments(text: &str, out: &mut Values, marks: &[char]) {
    let taken = Covered::new(out.leaves.iter().map(|l| l.span.clone()).chain(out.meta_spans.iter().cloned()));
    // The end of the last comment taken, and the first `]` or line end at or after the last
    // place searched from.
    let (mut taken_to, mut stop) = (0, 0);
    for (at, _) in text.match_indices(ENC_PREFIX) {
        if at < taken_to || taken.contains(at) || !text[..at].trim_end_matches(' ').ends_with(marks) {
            continue;
        }
        if stop < at {
            stop = text[at..].find([']', '\n']).map_or(text.len(), |i| at + i);
        }
        if text.as_bytes().get(stop) != Some(&b']') {
            continue;
        }
        let value = text[at..=stop].to_owned();
        out.leaves.push(Leaf { aad: None, value, plain: None, span: at..stop + 1 });
        taken_to = stop + 1;
    }
}

/// Disjoint byte ranges, sorted once, asked whether they cover an offset in O(log n): a file
/// chooses how many values and `ENC[` it has, so a scan of every range per offset would be
/// quadratic in its size.
pub(crate) struct Covered(Vec<Range<usize>>);

impl Covered {
    pub(crate) fn new(ranges: impl Iterator<Item = Range<usize>>) -> Self {
        let mut v: Vec<Range<usize>> = ranges.filter(|r| !r.is_empty()).collect();
        v.sort_by_key(|r| r.start);
        Covered(v)
    }
    pub(crate) fn contains(&self, at: usize) -> bool {
        let i = self.0.partition_point(|r| r.start <= at);
        i > 0 && self.0[i - 1].contains(&at)
    }
}

/// A sealed value taken apart.
pub(crate) struct Sealed {
    data: Vec<u8>,
    iv: Vec<u8>,
    tag: Vec<u8>,
    pub kind: String,
}

/// Reads `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`; `None` if `s` is not one.
pub(crate) fn parse_sealed(s: &str) -> Option<Sealed> {
    let body = s.strip_prefix("ENC[AES256_GCM,data:")?.strip_suffix(']')?;
    let (data, rest) = body.split_once(",iv:")?;
    let (iv, rest) = rest.split_once(",tag:")?;
    let (tag, kind) = rest.split_once(",type:")?;
    let b64 = |v: &str| base64::engine::general_purpose::STANDARD.decode(v).ok();
    let sealed = Sealed { data: b64(data)?, iv: b64(iv)?, tag: b64(tag)?, kind: kind.to_owned() };
    (sealed.iv.len() == 32 && sealed.tag.len() == 16 && !kind.is_empty() && kind.len() <= 16)
        .then_some(sealed)
}

/// Opens a sealed value under `key` and `aad`.
pub(crate) fn open(key: &[u8], s: &Sealed, aad: &str) -> Result<Zeroizing<Vec<u8>>, Error> {
    let gcm = SopsGcm::new_from_slice(key).map_err(|_| Error::Crypto)?;
    let mut ct = Vec::with_capacity(s.data.len() + 16);
    ct.extend_from_slice(&s.data);
    ct.extend_from_slice(&s.tag);
    let nonce = aes_gcm::Nonce::<U32>::try_from(&s.iv[..]).map_err(|_| Error::Crypto)?;
    gcm.decrypt(&nonce, Payload { msg: &ct, aad: aad.as_bytes() })
        .map(Zeroizing::new)
        .map_err(|_| Error::Crypto)
}

/// Seals `plaintext` as sops writes a value of `kind`, under a fresh random IV: the key is new
/// for each rotation and each IV is drawn anew, so no key and IV ever seal two plaintexts.
pub(crate) fn seal(key: &[u8], plaintext: &[u8], aad: &str, kind: &str) -> Result<String, Error> {
    let gcm = SopsGcm::new_from_slice(key).map_err(|_| Error::Crypto)?;
    let mut iv = [0u8; 32];
    hyperseal::fill_random(&mut iv)?;
    let nonce = aes_gcm::Nonce::<U32>::from(iv);
    let out =
        gcm.encrypt(&nonce, Payload { msg: plaintext, aad: aad.as_bytes() }).map_err(|_| Error::Crypto)?;
    let (data, tag) = out.split_at(out.len() - 16);
    let b64 = |v: &[u8]| base64::engine::general_purpose::STANDARD.encode(v);
    Ok(format!("ENC[AES256_GCM,data:{},iv:{},tag:{},type:{kind}]", b64(data), b64(&iv), b64(tag)))
}

/// What sops hashes for a YAML plain scalar: yaml.v3 reads it as null, a bool, an int or a
/// float by the YAML 1.2 core schema, and sops's `ToBytes` writes those back; a null is not
/// walked at all (no bytes). `None` for what hyperseal does not type as sops would (timestamps,
/// other bases): the `mac` then fails to match, and the file is refused rather than signed
/// again unchecked.
pub(crate) fn yaml_plain(v: &str) -> Option<Vec<u8>> {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Vec::new()),
        "true" | "True" | "TRUE" => return Some(b"True".to_vec()),
        "false" | "False" | "FALSE" => return Some(b"False".to_vec()),
        // Go's FormatFloat of the infinities and NaN.
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(b"+Inf".to_vec()),
        "-.inf" | "-.Inf" | "-.INF" => return Some(b"-Inf".to_vec()),
        ".nan" | ".NaN" | ".NAN" => return Some(b"NaN".to_vec()),
        _ => {}
    }
    number(v).unwrap_or_else(|| Some(v.as_bytes().to_vec()))
}

/// What sops hashes for a JSON literal (`true`, a number; a `null` is not walked: no bytes).
pub(crate) fn json_literal(v: &str) -> Option<Vec<u8>> {
    match v {
        "true" => Some(b"True".to_vec()),
        "false" => Some(b"False".to_vec()),
        "null" => Some(Vec::new()),
        _ => number(v).flatten(),
    }
}

/// A decimal int (Go's `strconv.Itoa` of it) or float (`FormatFloat(f, 'f', -1, 64)`, which
/// Rust's shortest `Display` matches: no exponent, fewest digits that read back).
/// `Some(None)`: a number hyperseal does not type as sops would.
fn number(v: &str) -> Option<Option<Vec<u8>>> {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    if digits.is_empty() {
        return None;
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        // A leading zero is octal to yaml.v3; a number past i64 a float.
        if digits.len() > 1 && digits.starts_with('0') {
            return Some(None);
        }
        if let Ok(n) = v.parse::<i64>() {
            return Some(Some(n.to_string().into_bytes()));
        }
    }
    let float_like =
        digits.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
            && digits.bytes().any(|b| b.is_ascii_digit());
    if !float_like {
        return None;
    }
    Some(v.parse::<f64>().ok().filter(|f| f.is_finite()).map(|f| format!("{f}").into_bytes()))
}

/// The hash sops keeps in `mac`, from each leaf's plaintext (`opened[i]`: a sealed leaf's
/// plaintext and type). Comments are not hashed: the ones found as comments, and the ones sops
/// wrote as list items (a comment inside a YAML list comes back as `- ENC[…,type:comment]`).
pub(crate) fn mac(values: &Values, opened: &[Option<(&[u8], &str)>]) -> Result<String, Error> {
    let mut h = Sha512::new();
    if values.mac_only_encrypted {
        h.update(MAC_ONLY_ENCRYPTED_INIT);
    }
    for (leaf, open) in values.leaves.iter().zip(opened) {
        if leaf.aad.is_none() {
            continue;
        }
        match (open, &leaf.plain) {
            (Some((_, "comment")), _) => {}
            (Some((p, _)), _) => h.update(p),
            (None, _) if values.mac_only_encrypted => {}
            (None, Some(b)) => h.update(b),
            (None, None) => {
                return Err(refuse(format!(
                    "the value {} is one whose type hyperseal does not read as sops does, so the mac cannot be checked",
                    shown(&leaf.value)
                )))
            }
        }
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02X}")).collect())
}

/// `now` as sops writes `lastmodified` (RFC 3339, UTC, whole seconds).
pub(crate) fn rfc3339(now: std::time::SystemTime) -> String {
    hyperseal::time::rfc3339(hyperseal::time::epoch_seconds(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_round_trips_and_is_bound_to_its_path() {
        let key = [7u8; 32];
        let s = seal(&key, b"hunter2", "db:password:", "str").unwrap();
        let p = parse_sealed(&s).unwrap();
        assert_eq!(p.kind, "str");
        assert_eq!(&open(&key, &p, "db:password:").unwrap()[..], b"hunter2");
        assert!(open(&key, &p, "db:user:").is_err());
        assert!(open(&[8u8; 32], &p, "db:password:").is_err());
        assert_ne!(seal(&key, b"hunter2", "db:password:", "str").unwrap(), s, "a fresh IV each time");
    }

    #[test]
    fn plain_scalars_hash_as_sops_writes_them() {
        assert_eq!(yaml_plain("true").unwrap(), b"True");
        assert_eq!(yaml_plain("42").unwrap(), b"42");
        assert_eq!(yaml_plain("1.50").unwrap(), b"1.5");
        assert_eq!(yaml_plain("1e3").unwrap(), b"1000");
        assert_eq!(yaml_plain("hello").unwrap(), b"hello");
        assert_eq!(yaml_plain("null").unwrap(), b"");
        assert_eq!(yaml_plain("-.inf").unwrap(), b"-Inf");
        assert_eq!(json_literal("12345678901234567890").unwrap(), b"12345678901234567000");
        assert!(yaml_plain("0755").is_none());
        assert_eq!(json_literal("-3").unwrap(), b"-3");
        assert_eq!(json_literal("2.0").unwrap(), b"2");
    }

    #[test]
    fn covered_ranges_answer_as_a_scan_would() {
        let c = Covered::new([10..20, 0..3, 30..31, 5..5].into_iter());
        for at in 0..40 {
            let scan = [10..20, 0..3, 30..31].iter().any(|r| r.contains(&at));
            assert_eq!(c.contains(at), scan, "{at}");
        }
    }

    #[test]
    fn comments_are_found_in_linear_work() {
        // One comment line of sealed-value starts with a `]` far after it: each start copied up
        // to that `]` would be quadratic (15,000 of them: 1.7 GB).
        let line = "#ENC[AES256_GCM,".repeat(15_000);
        let text = format!("a: 1\n{line}\nb: ENC[AES256_GCM,data:x]\n# ENC[AES256_GCM,data:c]\n#ENC[AES256_GCM,x] #ENC[AES256_GCM,y]\n");
        let mut out = Values::default();
        comments(&text, &mut out, &['#']);
        let copied: usize = out.leaves.iter().map(|l| l.value.len()).sum();
        assert!(copied <= text.len(), "{copied} bytes copied from {}", text.len());
        let found: Vec<&str> = out.leaves.iter().map(|l| l.value.as_str()).collect();
        // `b`'s value follows no comment mark; the line of starts has no `]` on it.
        assert_eq!(found, ["ENC[AES256_GCM,data:c]", "ENC[AES256_GCM,x]", "ENC[AES256_GCM,y]"]);
    }

    #[test]
    fn lastmodified_is_rfc3339_utc() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_654_000);
        assert_eq!(rfc3339(t), "2026-11-26T00:46:40Z");
        assert_eq!(rfc3339(std::time::UNIX_EPOCH), "1970-01-01T00:00:00Z");
    }
}
