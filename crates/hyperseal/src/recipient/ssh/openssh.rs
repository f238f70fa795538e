//! OpenSSH public keys as age's `agessh` reads them: the SSH wire encoding (RFC 4251 §5),
//! `authorized_keys` lines (sshd(8), "AUTHORIZED_KEYS FILE FORMAT": options, key type, base64
//! blob, comment) and GitHub's `https://github.com/USER.keys` files (one key per line).
//!
//! Only `ssh-ed25519` and `ssh-rsa` keys can be recipients; other well-formed SSH keys (ECDSA,
//! security keys, certificates) are recognised as such so that a recipients file can skip them
//! with a note, as age does, instead of failing on a user's whole `authorized_keys`.
//!
//! ```
//! use hyperseal::recipient::ssh::openssh::{parse_authorized_key, AuthorizedKey};
//! let line = r#"no-pty,command="echo a b" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEmJjVoti29Sv6YbYbMCrikLAuWyXUYlibASdBdidKTc alice@example"#;
//! let AuthorizedKey::Supported(key) = parse_authorized_key(line).unwrap() else { panic!() };
//! assert_eq!(key.key_type(), "ssh-ed25519");
//! ```

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256};

use crate::format::encode_b64;

/// The `ssh-ed25519` key type name.
pub const ED25519: &str = "ssh-ed25519";
/// The `ssh-rsa` key type name.
pub const RSA: &str = "ssh-rsa";

/// A reader over SSH wire data that fails on any overrun.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.buf.len() < n {
            return Err("truncated SSH data".into());
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.bytes(4)?.try_into().expect("4 bytes")))
    }

    /// A `string`: a 32-bit length and that many bytes.
    pub(crate) fn string(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.bytes(n)
    }

    /// A non-negative `mpint`, as its big-endian magnitude without leading zeros.
    pub(crate) fn mpint(&mut self) -> Result<&'a [u8], String> {
        let v = self.string()?;
        if v.first().is_some_and(|&b| b & 0x80 != 0) {
            return Err("negative SSH mpint".into());
        }
        // RFC 4251 forbids unnecessary leading zeros; OpenSSH rejects them too.
        if v.len() >= 2 && v[0] == 0 && v[1] & 0x80 == 0 {
            return Err("SSH mpint with an unnecessary leading zero".into());
        }
        Ok(v.strip_prefix(&[0]).unwrap_or(v))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf
    }
}

/// Appends an SSH `string`.
pub(crate) fn put_string(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_be_bytes());
    out.extend_from_slice(b);
}

/// Appends a non-negative `mpint` given as a big-endian magnitude without leading zeros.
pub(crate) fn put_mpint(out: &mut Vec<u8>, magnitude: &[u8]) {
    if magnitude.first().is_some_and(|&b| b & 0x80 != 0) {
        out.extend_from_slice(&(magnitude.len() as u32 + 1).to_be_bytes());
        out.push(0);
        out.extend_from_slice(magnitude);
    } else {
        put_string(out, magnitude);
    }
}

/// The public exponent rule of OpenSSH and Go's `x/crypto/ssh` (so of age): odd, at least 3,
/// at most 24 bits. Anything else is a bad key, said as such, before any RSA code sees it.
pub(crate) fn check_rsa_exponent(e: &[u8]) -> Result<(), String> {
    let e = &e[e.iter().take_while(|&&b| b == 0).count()..];
    if e.len() > 3 {
        return Err("ssh-rsa public exponent is too large (over 24 bits)".into());
    }
    let value = e.iter().fold(0u32, |v, &b| v << 8 | u32::from(b));
    if value < 3 || value % 2 == 0 {
        return Err(format!("ssh-rsa public exponent {value} is invalid (it must be odd and at least 3)"));
    }
    Ok(())
}

/// An SSH public key of a kind age can encrypt to.
#[derive(Clone, PartialEq, Eq)]
pub enum SshPublicKey {
    /// `ssh-ed25519`: the 32-byte Ed25519 public key.
    Ed25519([u8; 32]),
    /// `ssh-rsa`: modulus and public exponent, big-endian without leading zeros.
    Rsa {
        /// The modulus.
        n: Vec<u8>,
        /// The public exponent.
        e: Vec<u8>,
    },
}

impl std::fmt::Debug for SshPublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SshPublicKey({} {})", self.key_type(), self.fingerprint_tag())
    }
}

impl SshPublicKey {
    /// Parses a public key blob (the base64 field of an `authorized_keys` line, decoded).
    /// Trailing data is refused, as in OpenSSH.
    pub fn from_blob(blob: &[u8]) -> Result<Self, String> {
        let mut r = Reader::new(blob);
        let key = match r.string()? {
            t if t == ED25519.as_bytes() => {
                let pk = r.string()?;
                SshPublicKey::Ed25519(pk.try_into().map_err(|_| "ssh-ed25519 key is not 32 bytes")?)
            }
            t if t == RSA.as_bytes() => {
                let e = r.mpint()?.to_vec();
                let n = r.mpint()?.to_vec();
                if n.is_empty() {
                    return Err("ssh-rsa key with a zero modulus".into());
                }
                check_rsa_exponent(&e)?;
                SshPublicKey::Rsa { n, e }
            }
            t => return Err(format!("unsupported SSH key type {:?}", String::from_utf8_lossy(t))),
        };
        if !r.is_empty() {
            return Err("trailing data after the SSH public key".into());
        }
        Ok(key)
    }

    /// The canonical wire encoding (what Go's `ssh.PublicKey.Marshal` gives): the bytes the
    /// stanza tag and the ssh-ed25519 tweak are computed over, re-encoded from the parsed key so
    /// that sender and identity always agree.
    pub fn to_blob(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            SshPublicKey::Ed25519(pk) => {
                put_string(&mut out, ED25519.as_bytes());
                put_string(&mut out, pk);
            }
            SshPublicKey::Rsa { n, e } => {
                put_string(&mut out, RSA.as_bytes());
                put_mpint(&mut out, e);
                put_mpint(&mut out, n);
            }
        }
        out
    }

    /// `ssh-ed25519` or `ssh-rsa`.
    pub fn key_type(&self) -> &'static str {
        match self {
            SshPublicKey::Ed25519(_) => ED25519,
            SshPublicKey::Rsa { .. } => RSA,
        }
    }

    /// The stanza's first argument: base64 of the first 4 bytes of SHA-256(blob).
    pub fn fingerprint_tag(&self) -> String {
        encode_b64(&Sha256::digest(self.to_blob())[..4])
    }

    /// The `authorized_keys` form without a comment: `ssh-ed25519 AAAA…`.
    pub fn to_authorized_key(&self) -> String {
        format!("{} {}", self.key_type(), STANDARD.encode(self.to_blob()))
    }
}

/// One parsed `authorized_keys` line.
#[derive(Debug)]
pub enum AuthorizedKey {
    /// An `ssh-ed25519` or `ssh-rsa` key.
    Supported(SshPublicKey),
    /// A well-formed SSH key of another type (named here), which age cannot encrypt to.
    Unsupported(String),
}

/// Parses one `authorized_keys` line: `[options] keytype base64 [comment]`, fields separated by
/// spaces or tabs, options possibly holding quoted strings with spaces. The key type field must
/// name the type inside the blob, as OpenSSH requires.
pub fn parse_authorized_key(line: &str) -> Result<AuthorizedKey, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Err("empty line or comment, not an SSH key".into());
    }
    if let Some(k) = key_fields(line) {
        return k;
    }
    // Not a key at the start: skip the options field (up to unquoted whitespace) and retry.
    let rest = skip_options(line).ok_or("malformed options before the SSH key")?;
    key_fields(rest.trim_start()).unwrap_or_else(|| Err("no SSH key after the options".into()))
}

/// `keytype base64 [comment]` → the key; `None` if the first field does not look like a key
/// type followed by a matching blob (so the caller may try it as options instead).
fn key_fields(s: &str) -> Option<Result<AuthorizedKey, String>> {
    let mut fields = s.split([' ', '\t']).filter(|f| !f.is_empty());
    let (kind, b64) = (fields.next()?, fields.next()?);
    let blob = STANDARD.decode(b64).ok()?;
    let inner = Reader::new(&blob).string().ok()?;
    if inner != kind.as_bytes() {
        return None;
    }
    Some(match kind {
        ED25519 | RSA => SshPublicKey::from_blob(&blob).map(AuthorizedKey::Supported),
        other => Ok(AuthorizedKey::Unsupported(other.to_string())),
    })
}

/// The text after an options field, which ends at the first space or tab outside double quotes
/// (a backslash escapes a quote inside them).
fn skip_options(s: &str) -> Option<&str> {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ' ' | '\t' if !quoted => return Some(&s[i..]),
            _ => {}
        }
    }
    None
}

/// Whether `s` looks like an SSH public key line (starts with a key type name, or has options
/// before one), so that recipient parsing can send it here.
pub(crate) fn looks_like_ssh(s: &str) -> bool {
    let s = s.trim_start();
    s.starts_with("ssh-")
        || s.starts_with("ecdsa-sha2-")
        || s.starts_with("sk-")
        || s.contains(" ssh-")
        || s.contains("\tssh-")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys made with Debian's `ssh-keygen` (see vectors/ssh/README.md).
    const ED: &str = include_str!("../../../../../vectors/ssh/ed25519.pub");
    const RSA2048: &str = include_str!("../../../../../vectors/ssh/rsa2048.pub");
    const ECDSA: &str = include_str!("../../../../../vectors/ssh/ecdsa.pub");

    fn supported(line: &str) -> SshPublicKey {
        match parse_authorized_key(line).unwrap() {
            AuthorizedKey::Supported(k) => k,
            other => panic!("{other:?}"),
        }
    }

    /// `ssh-ed25519 AAAA…` without the comment.
    fn bare(line: &str) -> String {
        line.split(' ').take(2).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn plain_comment_and_options() {
        let k = supported(ED);
        assert_eq!(k.key_type(), ED25519);
        assert_eq!(k.to_authorized_key(), bare(ED), "round trip of the canonical form");
        assert_eq!(supported(&bare(ED)), k, "no comment");
        assert_eq!(supported(&format!("  {}\t comment with spaces\r", bare(ED))), k, "tabs, CR, padding");
        for opts in [
            "no-pty",
            "restrict,command=\"echo a b\\\" c\"",
            "from=\"10.0.0.0/8\",no-agent-forwarding",
            "environment=\"X=ssh-rsa in quotes\"",
        ] {
            assert_eq!(supported(&format!("{opts} {ED}")), k, "{opts}");
        }
        assert!(parse_authorized_key(&format!("command=\"unterminated {ED}")).is_err());
        assert!(parse_authorized_key("# a comment").is_err());
        assert!(parse_authorized_key("").is_err());
        let r = supported(RSA2048);
        assert_eq!(r.key_type(), RSA);
        assert_eq!(r.to_authorized_key(), bare(RSA2048));
    }

    #[test]
    fn unsupported_and_broken_keys() {
        match parse_authorized_key(ECDSA).unwrap() {
            AuthorizedKey::Unsupported(t) => assert_eq!(t, "ecdsa-sha2-nistp256"),
            other => panic!("{other:?}"),
        }
        // The type field must match the blob.
        assert!(parse_authorized_key(&ED.replace("ssh-ed25519", "ssh-rsa")).is_err());
        // A truncated blob, and a blob with trailing data.
        let blob = STANDARD.decode(ED.split(' ').nth(1).unwrap()).unwrap();
        let short = format!("ssh-ed25519 {}", STANDARD.encode(&blob[..blob.len() - 1]));
        assert!(parse_authorized_key(&short).is_err());
        let mut long = blob.clone();
        long.push(0);
        assert!(SshPublicKey::from_blob(&long).is_err());
        assert_eq!(SshPublicKey::from_blob(&blob).unwrap().to_blob(), blob);
    }

    #[test]
    fn mpint_rules() {
        let mut b = Vec::new();
        put_mpint(&mut b, &[0x80, 1]);
        assert_eq!(b, [0, 0, 0, 3, 0, 0x80, 1], "a sign byte when the top bit is set");
        assert_eq!(Reader::new(&b).mpint().unwrap(), &[0x80, 1]);
        assert!(Reader::new(&[0, 0, 0, 1, 0x80]).mpint().is_err(), "negative");
        assert!(Reader::new(&[0, 0, 0, 2, 0, 1]).mpint().is_err(), "leading zero");
        assert!(Reader::new(&[0, 0, 0, 9, 1]).string().is_err(), "overrun");
    }

    /// Expected tags computed independently in the shell:
    /// `awk '{print $2}' K.pub | base64 -d | sha256sum | cut -c1-8 | xxd -r -p | base64`.
    #[test]
    fn fingerprint_tags_match_sha256sum() {
        assert_eq!(supported(ED).fingerprint_tag(), "f8M0TA");
        assert_eq!(supported(RSA2048).fingerprint_tag(), "LkqbsA");
    }

    #[test]
    fn detection() {
        assert!(looks_like_ssh(ED));
        assert!(looks_like_ssh(&format!("no-pty {ED}")));
        assert!(looks_like_ssh(ECDSA));
        assert!(!looks_like_ssh("age1qqqq"));
    }
}
