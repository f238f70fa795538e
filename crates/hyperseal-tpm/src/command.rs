//! The TPM 2.0 commands this crate sends (TCG TPM 2.0 Library, Part 3), framed and parsed here
//! and nowhere else. Only what a TPM-bound age key needs: a storage primary, a P-256 decryption
//! key and a sealed object under it, loading them, `ECDH_ZGen`, `Unseal`, a policy session
//! (`PolicyPCR`, `PolicyAuthValue`), `PCR_Read`, `GetCapability`, `ReadPublic` and `FlushContext`.
//!
//! Authorization is a password session (`TPM_RS_PW`, for the storage primary's empty
//! authValue only) or a salted session (`session.rs`): the PIN never crosses the bus, and the
//! secrets that do are encrypted. Command buffers that held a PIN, a seed or a shared secret are
//! zeroized when dropped.

use zeroize::Zeroizing;

use crate::error::{rc, TpmError};
use crate::marshal::{In, Out, ALG_SHA256};
use crate::session::{Session, CONTINUE};
use crate::transport::{Link, Location};

const ST_NO_SESSIONS: u16 = 0x8001;
const ST_SESSIONS: u16 = 0x8002;
pub(crate) const RH_OWNER: u32 = 0x4000_0001;
pub(crate) const RH_NULL: u32 = 0x4000_0007;
const RS_PW: u32 = 0x4000_0009;
/// The most a TPM retries a "try again" answer (`TPM_RC_RETRY`, `YIELDED`, `TESTING`).
const RETRIES: usize = 20;

pub(crate) mod cc {
    pub const CREATE_PRIMARY: u32 = 0x131;
    pub const STARTUP: u32 = 0x144;
    pub const CREATE: u32 = 0x153;
    pub const ECDH_ZGEN: u32 = 0x154;
    pub const LOAD: u32 = 0x157;
    pub const UNSEAL: u32 = 0x15E;
    pub const FLUSH_CONTEXT: u32 = 0x165;
    pub const POLICY_AUTH_VALUE: u32 = 0x16B;
    pub const READ_PUBLIC: u32 = 0x173;
    pub const START_AUTH_SESSION: u32 = 0x176;
    pub const GET_CAPABILITY: u32 = 0x17A;
    pub const PCR_READ: u32 = 0x17E;
    pub const POLICY_PCR: u32 = 0x17F;
}

/// How a command's handle is authorized.
pub(crate) enum Auth<'a> {
    /// A password session with an empty authValue (the storage primary's).
    Empty,
    /// A salted session (HMAC, or policy that ran its policy): `names` are the command's
    /// handles' names, `value` the authorized object's authValue (the PIN, or empty), `attrs`
    /// which parameters travel encrypted.
    Session { s: &'a mut Session, names: &'a [&'a [u8]], value: &'a [u8], attrs: u8 },
}

/// A response's handles, parameters and authorization area.
pub(crate) struct Response {
    pub handles: Vec<u32>,
    pub params: Zeroizing<Vec<u8>>,
    pub auth: Vec<u8>,
}

/// One connection to a TPM, counting the commands it sent.
pub struct Tpm {
    link: Link,
    location: Location,
    sent: usize,
    started: bool,
    /// The link was replaced after a failed exchange, for flushes only (see [`Tpm::flush`]).
    flushing_only: bool,
}

impl Tpm {
    /// Connects to the TPM at `location`.
    pub fn open(location: &Location) -> Result<Self, TpmError> {
        let link = Link::open(location)?;
        Ok(Tpm { link, location: location.clone(), sent: 0, started: false, flushing_only: false })
    }

    /// Gives up the connection after an answer that cannot be trusted: nothing more but the
    /// flushes of [`Tpm::flush`] is sent.
    pub(crate) fn abandon(&mut self) {
        self.link.abandon();
    }

    /// `FlushContext`; errors are ignored by callers that clean up. After a failed exchange
    /// the connection is not used again, and a simulator (which, unlike the kernel's resource
    /// manager, keeps what a closed connection loaded, and has room for three objects) gets
    /// the flushes over a new one, the only commands that one carries.
    pub(crate) fn flush(&mut self, handle: u32) -> Result<(), TpmError> {
        if self.link.is_broken() && !self.flushing_only && matches!(self.location, Location::Socket { .. }) {
            self.flushing_only = true;
            self.link.reopen(&self.location)?;
        }
        self.run("FlushContext", cc::FLUSH_CONTEXT, &[], None, &handle.to_be_bytes(), 0).map(drop)
    }

    /// Commands sent so far on this connection.
    pub fn commands_sent(&self) -> usize {
        self.sent
    }

    /// Frames and sends one command: `name` names it in errors; `out_handles` handles come back.
    pub(crate) fn run(
        &mut self,
        name: &'static str,
        code: u32,
        handles: &[u32],
        auth: Option<Auth>,
        params: &[u8],
        out_handles: usize,
    ) -> Result<Response, TpmError> {
        if self.flushing_only && code != cc::FLUSH_CONTEXT {
            return Err(TpmError::Protocol(format!(
                "{name}: an earlier exchange with the TPM failed, and its connection is not used again"
            )));
        }
        let mut params = Zeroizing::new(params.to_vec());
        let mut body = Out::default();
        for h in handles {
            body.u32(*h);
        }
        let mut pending = None;
        let sessions = auth.is_some();
        match auth {
            None => {}
            Some(Auth::Empty) => {
                let mut area = Out::default();
                area.u32(RS_PW).b(&[]).u8(CONTINUE).b(&[]);
                body.u32(area.0.len() as u32).raw(&area.0);
            }
            Some(Auth::Session { s, names, value, attrs }) => {
                let (entry, caller) = s.authorize(code, names, value, attrs | CONTINUE, &mut params)?;
                body.u32(entry.len() as u32).raw(&entry);
                pending = Some((s, value, caller));
            }
        }
        body.raw(&params);
        let tag = if sessions { ST_SESSIONS } else { ST_NO_SESSIONS };
        let mut cmd = Out::default();
        cmd.u16(tag).u32(10 + body.0.len() as u32).u32(code).raw(&body.0);
        let cmd = Zeroizing::new(cmd.take());
        drop(body);
        let mut resp = self.send(name, &cmd, sessions, out_handles)?;
        if let Some((s, value, caller)) = pending {
            if let Err(e) = s.verify(name, code, value, &caller, &mut resp.params, &resp.auth) {
                // An answer that fails its HMAC came from something other than the TPM: nothing
                // more is said to it.
                self.link.abandon();
                return Err(e);
            }
        }
        Ok(resp)
    }

    /// Sends a framed command, again after a "try again" answer, once after a `Startup`.
    fn send(
        &mut self,
        name: &'static str,
        cmd: &[u8],
        sessions: bool,
        out_handles: usize,
    ) -> Result<Response, TpmError> {
        let mut tries = 0;
        loop {
            self.sent += 1;
            let resp = Zeroizing::new(self.link.transact(cmd)?);
            let parsed = parse(&resp, name, sessions, out_handles);
            if let Err(TpmError::Protocol(_)) = parsed {
                // A frame that breaks its own lengths: whatever follows on the link is suspect.
                self.link.abandon();
            }
            match parsed {
                Err(TpmError::Refused { code: c, .. })
                    if matches!(c, rc::RETRY | rc::YIELDED | rc::TESTING) && tries < RETRIES =>
                {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20 * tries as u64));
                }
                Err(TpmError::Refused { code: rc::INITIALIZE, .. }) if !self.started => {
                    // A simulator just powered on: TPM2_Startup(CLEAR) once, then again.
                    self.started = true;
                    self.run("Startup", cc::STARTUP, &[], None, &0u16.to_be_bytes(), 0)?;
                }
                other => return other,
            }
        }
    }
}

/// A response: its header checked, an error code turned into [`TpmError::Refused`] (with the
/// base code, so callers match on it), its handles and parameters.
fn parse(resp: &[u8], name: &'static str, sessions: bool, out_handles: usize) -> Result<Response, TpmError> {
    let mut r = In::new(resp);
    let tag = r.u16()?;
    let size = r.u32()? as usize;
    let code = r.u32()?;
    if size != resp.len() {
        return Err(TpmError::Protocol(format!(
            "{name}: the answer's size field says {size}, {} came",
            resp.len()
        )));
    }
    if code != 0 {
        return Err(TpmError::Refused { command: name, code: rc::base(code) });
    }
    if tag != if sessions { ST_SESSIONS } else { ST_NO_SESSIONS } {
        return Err(TpmError::Protocol(format!("{name}: unexpected answer tag {tag:#x}")));
    }
    let handles = (0..out_handles).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
    let n = if sessions { r.u32()? as usize } else { r.rest() };
    let params = Zeroizing::new(r.take(n)?.to_vec());
    let auth = r.take(r.rest())?.to_vec();
    Ok(Response { handles, params, auth })
}

/// A `TPML_PCR_SELECTION` of SHA-256 PCRs (`pcrs` in 0..24).
pub(crate) fn selection(pcrs: &[u8]) -> Vec<u8> {
    let mut bits = [0u8; 3];
    for p in pcrs {
        bits[usize::from(p / 8)] |= 1 << (p % 8);
    }
    let mut o = Out::default();
    o.u32(1).u16(ALG_SHA256).u8(3).raw(&bits);
    o.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_answer_is_refused_with_its_base_code() {
        let resp = [0x80, 0x01, 0, 0, 0, 10, 0, 0, 0x09, 0x8E];
        let e = parse(&resp, "Unseal", true, 0).err().unwrap();
        assert_eq!(e, TpmError::Refused { command: "Unseal", code: rc::AUTH_FAIL });
    }

    #[test]
    fn a_size_field_that_lies_is_a_protocol_error() {
        let resp = [0x80, 0x01, 0, 0, 0, 99, 0, 0, 0, 0];
        assert!(matches!(parse(&resp, "X", false, 0), Err(TpmError::Protocol(_))));
        let resp = [0x80, 0x01, 0, 0, 0, 10, 0, 0, 0, 0];
        assert!(parse(&resp, "X", false, 1).is_err(), "a handle promised, none there");
    }

    #[test]
    fn after_an_answer_that_breaks_its_framing_nothing_more_is_sent() {
        use std::io::Write;
        let (location, after) = crate::transport::fake::serve(|s, _| {
            // A TPM frame whose size field says 99 bytes inside a 10-byte mssim answer.
            let resp = [0x80, 0x01, 0, 0, 0, 99, 0, 0, 0, 0];
            let _ = s.write_all(&10u32.to_be_bytes());
            let _ = s.write_all(&resp);
            let _ = s.write_all(&0u32.to_be_bytes());
        });
        let mut tpm = Tpm::open(&location).unwrap();
        assert!(matches!(tpm.property(0x20E), Err(TpmError::Protocol(_))));
        assert!(tpm.property(0x20E).is_err(), "the connection is not used again");
        drop(tpm);
        assert!(after.recv().unwrap().is_empty(), "nothing more went over it");
    }

    #[test]
    fn pcr_selection_bitmaps() {
        assert_eq!(selection(&[0, 7, 23]), [0, 0, 0, 1, 0, 0x0B, 3, 0x81, 0, 0x80]);
    }
}
