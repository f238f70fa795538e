//! Recipient stanzas: `-> TYPE ARG...` followed by a base64 body, as in the age v1 spec.
//!
//! Both profiles (hyperseal and age) share this codec. Parsing is strict: canonical unpadded
//! base64, body lines of exactly 64 columns except a shorter final line, arguments of visible
//! ASCII only. Strictness matters because the header MAC covers these exact bytes.

use base64::engine::general_purpose::STANDARD_NO_PAD;
use base64::Engine;

use crate::error::Error;

/// Columns of a full body line.
pub const COLUMNS: usize = 64;
/// Bytes per full body line (64 base64 characters encode 48 bytes).
const BYTES_PER_LINE: usize = COLUMNS / 4 * 3;

/// One recipient stanza: plain data, interpreted only by the matching identity.
#[derive(Clone, PartialEq, Eq)]
pub struct Stanza {
    /// The recipient type, e.g. `X25519` or `mlkem768x25519`.
    pub tag: String,
    /// Type-specific arguments (an ephemeral share, a salt, work factors...).
    pub args: Vec<String>,
    /// The wrapped file key and whatever else the type needs.
    pub body: Vec<u8>,
}

impl std::fmt::Debug for Stanza {
    // The body is a wrapped key: harmless, but long and useless in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stanza({} {:?}, {} body bytes)", self.tag, self.args, self.body.len())
    }
}

impl Stanza {
    /// Builds a stanza; panics on arguments that could not be encoded (a programming error).
    pub fn new(tag: &str, args: Vec<String>, body: Vec<u8>) -> Self {
        assert!(is_arg(tag) && args.iter().all(|a| is_arg(a)), "invalid stanza argument");
        Stanza { tag: tag.to_string(), args, body }
    }

    /// Builds a stanza from a caller's parts (a JavaScript recipient's, through the bindings):
    /// a type or argument that could not be encoded (empty, or other than visible ASCII) is an
    /// [`Error::InvalidArgument`], not a panic.
    pub fn try_new(tag: &str, args: Vec<String>, body: Vec<u8>) -> Result<Self, Error> {
        if !is_arg(tag) || !args.iter().all(|a| is_arg(a)) {
            return Err(Error::InvalidArgument(
                "a stanza's type and arguments must be non-empty and visible ASCII (no spaces)".into(),
            ));
        }
        Ok(Stanza { tag: tag.to_string(), args, body })
    }

    /// Appends the canonical encoding, including the final newline.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"-> ");
        out.extend_from_slice(self.tag.as_bytes());
        for a in &self.args {
            out.push(b' ');
            out.extend_from_slice(a.as_bytes());
        }
        out.push(b'\n');
        let b64 = STANDARD_NO_PAD.encode(&self.body);
        let mut lines = b64.as_bytes().chunks(COLUMNS);
        for line in lines.by_ref() {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        // A body whose encoding fills whole lines ends with an empty line, so the reader knows it
        // ended (the age rule).
        if b64.len().is_multiple_of(COLUMNS) {
            out.push(b'\n');
        }
    }

    /// Parses the arguments of a `-> ` line (without the prefix and newline).
    pub(crate) fn parse_args(line: &[u8]) -> Result<(String, Vec<String>), Error> {
        let text = std::str::from_utf8(line).map_err(|_| bad("stanza line is not ASCII"))?;
        let mut parts = text.split(' ');
        let tag = parts.next().unwrap_or("");
        if !is_arg(tag) {
            return Err(bad("empty or invalid stanza type"));
        }
        let args: Vec<String> = parts.map(str::to_string).collect();
        if args.iter().any(|a| !is_arg(a)) {
            return Err(bad("empty or invalid stanza argument"));
        }
        Ok((tag.to_string(), args))
    }

    /// Decodes one body line; returns the bytes and whether it was the final (short) line.
    pub(crate) fn parse_body_line(line: &[u8]) -> Result<(Vec<u8>, bool), Error> {
        if line.len() > COLUMNS {
            return Err(bad("stanza body line longer than 64 columns"));
        }
        let bytes = decode_b64(line)?;
        debug_assert!(line.len() < COLUMNS || bytes.len() == BYTES_PER_LINE);
        Ok((bytes, line.len() < COLUMNS))
    }
}

/// Decodes strict, canonical, unpadded standard base64 (rejects padding, newlines, and
/// non-zero trailing bits, so every byte string has exactly one encoding).
pub fn decode_b64(s: &[u8]) -> Result<Vec<u8>, Error> {
    if s.contains(&b'=') || s.contains(&b'\r') {
        return Err(bad("non-canonical base64"));
    }
    STANDARD_NO_PAD.decode(s).map_err(|_| bad("invalid or non-canonical base64"))
}

/// Encodes unpadded standard base64.
pub fn encode_b64(b: &[u8]) -> String {
    STANDARD_NO_PAD.encode(b)
}

/// A stanza argument: one or more visible ASCII characters (0x21..=0x7e).
fn is_arg(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

fn bad(msg: &str) -> Error {
    Error::MalformedHeader(msg.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_lengths_round_trip_through_line_rules() {
        for n in [0usize, 1, 47, 48, 49, 95, 96, 97, 200] {
            let s = Stanza::new("T", vec!["a".into()], vec![7u8; n]);
            let mut out = Vec::new();
            s.write_to(&mut out);
            let text = std::str::from_utf8(&out).unwrap();
            let mut lines = text.lines();
            assert_eq!(lines.next(), Some("-> T a"));
            let mut body = Vec::new();
            for l in lines {
                let (b, last) = Stanza::parse_body_line(l.as_bytes()).unwrap();
                body.extend(b);
                if last {
                    break;
                }
            }
            assert_eq!(body.len(), n);
        }
    }

    #[test]
    fn try_new_refuses_what_could_not_be_encoded() {
        for (tag, args) in [
            ("", vec![]),
            ("a b", vec![]),
            ("T", vec![String::new()]),
            ("T", vec!["é".into()]),
            ("T", vec!["a\nb".into()]),
        ] {
            assert!(matches!(Stanza::try_new(tag, args, vec![1]), Err(Error::InvalidArgument(_))), "{tag:?}");
        }
        assert_eq!(
            Stanza::try_new("T", vec!["a!~".into()], vec![1]).unwrap(),
            Stanza::new("T", vec!["a!~".into()], vec![1])
        );
    }

    #[test]
    fn rejects_noncanonical_base64() {
        // "AB" has non-zero trailing bits for one byte; canonical is "AA".
        assert!(decode_b64(b"AB").is_err());
        assert!(decode_b64(b"AA").is_ok());
        assert!(decode_b64(b"AA==").is_err());
        assert!(Stanza::parse_args(b"T  a").is_err());
        assert!(Stanza::parse_args(b"").is_err());
    }
}
