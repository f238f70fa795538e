//! What can go wrong with a TPM, worded for the person at the keyboard: each error has a
//! message and a hint naming what to do. The library's [`hyperseal::Error`] has one string per
//! failure, so a TPM error travels as `Error::Plugin` whose text is the message, a separator and
//! the hint; the CLI splits them again ([`split_hint`]) into its `error:` and `hint:` lines.

use std::fmt;

/// Between the message and the hint inside a `hyperseal::Error` (ASCII unit separator: never
/// in a message).
const SEP: char = '\u{1f}';
/// Where every TPM error's text starts.
pub const PREFIX: &str = "TPM: ";

/// Response codes this crate tells apart (TCG TPM 2.0 Part 2, `TPM_RC`), format-one codes
/// without their handle, session or parameter number.
pub(crate) mod rc {
    pub const INITIALIZE: u32 = 0x100;
    pub const VALUE: u32 = 0x084;
    pub const AUTH_FAIL: u32 = 0x08E;
    pub const POLICY_FAIL: u32 = 0x099;
    pub const INTEGRITY: u32 = 0x09F;
    pub const BAD_AUTH: u32 = 0x0A2;
    pub const PCR_CHANGED: u32 = 0x128;
    pub const YIELDED: u32 = 0x908;
    pub const TESTING: u32 = 0x90A;
    pub const LOCKOUT: u32 = 0x921;
    pub const RETRY: u32 = 0x922;

    /// The code without the number of the handle, session or parameter it names.
    pub fn base(code: u32) -> u32 {
        if code & 0x80 != 0 {
            (code & 0x3F) | 0x80
        } else {
            code & 0xFFF
        }
    }
}

/// A TPM failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TpmError {
    /// The TPM location (`TPM2TOOLS_TCTI`) names no TPM this crate can talk to: `spelled` as
    /// given, `why` it is refused.
    BadLocation { spelled: String, why: String },
    /// The TPM cannot be reached at `location`: `reason` is the system's word.
    Unreachable { location: String, reason: String, denied: bool },
    /// No answer within the deadline.
    Timeout(String),
    /// The TPM's answer broke the protocol (a length, a tag).
    Protocol(String),
    /// An answer is not what the TPM wrote: it contradicts itself (a public area and a name
    /// that do not match) or fails its session HMAC. `what` names the answer.
    Altered(String),
    /// The TPM refused a session's HMAC on a key that has no PIN, so no PIN can be wrong:
    /// the command or the session's salt was not what reached the TPM.
    SessionRefused { command: &'static str },
    /// The parent key this TPM makes is not the one the identity was made under.
    DifferentTpm,
    /// These PCRs no longer hold the values the key is bound to.
    PcrChanged(Vec<u8>),
    /// The PIN was wrong; `tries_left` before the TPM locks out, when it said.
    WrongPin { tries_left: Option<u32> },
    /// The TPM refuses PINs for a while (its dictionary-attack lockout).
    Lockout { recovery_s: Option<u32> },
    /// The key needs a PIN and none was given.
    NoPin,
    /// Any other refusal: the command and its response code.
    Refused { command: &'static str, code: u32 },
    /// The identity file's TPM data is malformed.
    BadIdentity(String),
    /// A key cannot be made as asked (a PCR that does not exist, a PIN too long): `why`, and
    /// the `fix` the hint gives.
    BadOption { why: String, fix: String },
}

impl TpmError {
    /// The hint line: what to do.
    pub fn hint(&self) -> String {
        match self {
            TpmError::BadLocation { .. } => "set TPM2TOOLS_TCTI to device:/dev/tpmrm0 (the kernel's resource manager), swtpm:host=…,port=… or mssim:host=…,port=…, or unset it for /dev/tpmrm0".into(),
            TpmError::Altered(_) => "nothing secret crossed in the clear, but check what sits between this process and the TPM (TPM2TOOLS_TCTI, a TPM proxy, the TPM's bus) before using the key again".into(),
            TpmError::SessionRefused { .. } => "not a PIN problem: check what sits between this process and the TPM (TPM2TOOLS_TCTI, a TPM proxy, the TPM's bus), then try again".into(),
            TpmError::BadOption { fix, .. } => fix.clone(),
            TpmError::Unreachable { denied: true, .. } => {
                "add your user to the `tss` group (then log in again), or run as a user that may open /dev/tpmrm0".into()
            }
            TpmError::Unreachable { .. } => "check that this machine has a TPM 2.0 enabled in its firmware (ls /dev/tpmrm0), or set TPM2TOOLS_TCTI to where it is (swtpm:host=…,port=…)".into(),
            TpmError::Timeout(_) => "the TPM is busy or hung: try again; check TPM2TOOLS_TCTI".into(),
            TpmError::Protocol(_) => "check that TPM2TOOLS_TCTI names a TPM 2.0 (device:/dev/tpmrm0, swtpm:host=…,port=…)".into(),
            TpmError::DifferentTpm => "this key was made on another machine's TPM (or this TPM was cleared): decrypt with a recovery key, or on the machine that made it".into(),
            TpmError::PcrChanged(_) => "a firmware, bootloader or kernel update (or a changed Secure Boot setting) does this: boot the old state, or decrypt with a recovery key and make a new TPM key with hyperseal keygen --tpm".into(),
            TpmError::WrongPin { tries_left: Some(n) } => format!("check the PIN: {n} tries left before the TPM locks out"),
            TpmError::WrongPin { tries_left: None } => "check the PIN: the TPM locks out after a few wrong ones".into(),
            TpmError::Lockout { recovery_s: Some(s) } => format!("the TPM forgives one failure every {s} s: wait, or reset it with tpm2_dictionarylockout --clear-lockout (needs the lockout password)"),
            TpmError::Lockout { recovery_s: None } => "wait for the TPM to forgive the failures, or reset it with tpm2_dictionarylockout --clear-lockout".into(),
            TpmError::NoPin => "give the PIN with --identity-passphrase-file FILE, or run in a terminal to be asked".into(),
            TpmError::Refused { .. } => "check the TPM with tpm2_getcap properties-variable; the code is in the TCG TPM 2.0 Library, Part 2".into(),
            TpmError::BadIdentity(_) => "the identity file is damaged: use the file keygen --tpm wrote".into(),
        }
    }

    /// As the library's error (message and hint inside, see the module docs).
    pub fn into_error(self) -> hyperseal::Error {
        hyperseal::Error::Plugin(format!("{PREFIX}{self}{SEP}{}", self.hint()))
    }
}

impl fmt::Display for TpmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TpmError::BadLocation { spelled, why } => write!(f, "TPM location {spelled:?}: {why}"),
            TpmError::Altered(what) => {
                write!(f, "{what}: something between this process and the TPM altered it")
            }
            TpmError::SessionRefused { command } => write!(
                f,
                "the TPM refused the session HMAC of {command}, and the key has no PIN: the command or the session's secret was altered on its way"
            ),
            TpmError::BadOption { why, .. } => f.write_str(why),
            TpmError::Unreachable { location, reason, .. } => {
                write!(f, "cannot reach the TPM at {location}: {reason}")
            }
            TpmError::Timeout(what) => write!(f, "the TPM did not answer {what} in time"),
            TpmError::Protocol(why) => write!(f, "{why}"),
            TpmError::DifferentTpm => f.write_str("this key belongs to a different TPM"),
            TpmError::PcrChanged(pcrs) => {
                let names: Vec<String> = pcrs.iter().map(|p| format!("PCR {p}")).collect();
                write!(
                    f,
                    "the key is bound to the boot state, and {} changed since it was made",
                    names.join(", ")
                )
            }
            TpmError::WrongPin { tries_left: Some(n) } => write!(f, "wrong PIN ({n} tries left)"),
            TpmError::WrongPin { tries_left: None } => f.write_str("wrong PIN"),
            TpmError::Lockout { .. } => {
                f.write_str("the TPM is in dictionary-attack lockout after too many wrong PINs")
            }
            TpmError::NoPin => f.write_str("the key needs its PIN and none was given"),
            TpmError::Refused { command, code } => write!(f, "{command} refused with code {code:#05x}"),
            TpmError::BadIdentity(why) => write!(f, "not a TPM identity: {why}"),
        }
    }
}

impl std::error::Error for TpmError {}

/// The message and the hint of a library error made by [`TpmError::into_error`], or `None` for
/// every other error.
pub fn split_hint(e: &hyperseal::Error) -> Option<(String, String)> {
    let hyperseal::Error::Plugin(text) = e else { return None };
    let rest = text.strip_prefix(PREFIX)?;
    let (message, hint) = rest.split_once(SEP)?;
    Some((format!("{PREFIX}{message}"), hint.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_travels_inside_the_library_error_and_comes_back() {
        let e = TpmError::PcrChanged(vec![7]).into_error();
        let (m, h) = split_hint(&e).unwrap();
        assert_eq!(m, "TPM: the key is bound to the boot state, and PCR 7 changed since it was made");
        assert!(h.contains("firmware"), "{h}");
        assert!(split_hint(&hyperseal::Error::Plugin("age-plugin-x: gone".into())).is_none());
    }

    #[test]
    fn numbered_codes_reduce_to_their_base() {
        assert_eq!(rc::base(0x98E), rc::AUTH_FAIL, "session 1");
        assert_eq!(rc::base(0x1C4), rc::VALUE, "parameter 1");
        assert_eq!(rc::base(0x921), rc::LOCKOUT);
    }
}
