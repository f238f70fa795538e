//! TPM 2.0 wire encoding (TCG TPM 2.0 Library, Part 2): big-endian integers and `TPM2B_*`
//! (a 16-bit length, then the bytes). The reader never trusts a length it is given: every
//! read is checked against what is left of the response, and every `TPM2B` against the
//! largest the field can hold, before anything is copied.

use crate::error::TpmError;

/// TPM_ALG_SHA256: the name and policy hash of every object and session here.
pub(crate) const ALG_SHA256: u16 = 0x000B;

/// Bytes of a command being built, wiped when dropped: a `Create` carries the PIN and the seed
/// (encrypted on the wire, but in the clear while being framed). Room for a whole command is
/// taken at once, so growing leaves no copies behind.
pub(crate) struct Out(pub(crate) Vec<u8>);

impl Default for Out {
    fn default() -> Self {
        Out(Vec::with_capacity(crate::transport::MAX_RESPONSE))
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

impl Out {
    /// The bytes, leaving the wiped husk behind.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }

    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub(crate) fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    /// A `TPM2B`: its length, then `b` (every caller's `b` is far below 64 KiB).
    pub(crate) fn b(&mut self, b: &[u8]) -> &mut Self {
        self.u16(u16::try_from(b.len()).expect("a TPM2B is under 64 KiB"));
        self.raw(b)
    }
    /// A `TPM2B` around what `f` writes (a nested structure: `TPM2B_PUBLIC`, `TPM2B_SENSITIVE_CREATE`).
    pub(crate) fn sized(&mut self, f: impl FnOnce(&mut Out)) -> &mut Self {
        let mut inner = Out::default();
        f(&mut inner);
        self.b(&inner.0)
    }
}

/// A bounded reader over a response.
pub(crate) struct In<'a> {
    buf: &'a [u8],
}

fn short() -> TpmError {
    TpmError::Protocol("the TPM's answer is shorter than its fields say".into())
}

impl<'a> In<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        In { buf }
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], TpmError> {
        if n > self.buf.len() {
            return Err(short());
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, TpmError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, TpmError> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, TpmError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    /// A `TPM2B` of at most `max` bytes.
    pub(crate) fn b(&mut self, max: usize) -> Result<&'a [u8], TpmError> {
        let n = usize::from(self.u16()?);
        if n > max {
            return Err(TpmError::Protocol(format!("the TPM sent a field of {n} bytes (at most {max} fit)")));
        }
        self.take(n)
    }
    pub(crate) fn rest(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_past_the_end_or_the_field_limit_are_refused() {
        let mut r = In::new(&[0, 5, 1, 2]);
        assert!(r.b(64).is_err(), "5 bytes promised, 2 there");
        let mut r = In::new(&[0, 2, 1, 2]);
        assert!(r.b(1).is_err(), "over the field's limit");
        let mut r = In::new(&[0, 2, 1, 2]);
        assert_eq!(r.b(2).unwrap(), &[1, 2]);
        assert_eq!(r.rest(), 0);
        assert!(In::new(&[1]).u32().is_err());
    }

    #[test]
    fn a_sized_structure_carries_its_length() {
        let mut o = Out::default();
        o.sized(|i| {
            i.u16(0x23).u32(7);
        });
        assert_eq!(o.0, [0, 6, 0, 0x23, 0, 0, 0, 7]);
    }
}
