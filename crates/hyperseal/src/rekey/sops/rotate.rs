//! `--rotate` for sops files: a new data key, every encrypted value sealed again under it.

use std::time::SystemTime;

use super::{refuse, Format, Outcome, ReadRecipient, Target};
use crate::error::Error;
use crate::recipient::{parse_recipient, Identity};

/// Rotates one sops file held in memory, as `sops rotate` does: a fresh data key, every
/// `ENC[…]` value and comment sealed again under it with a fresh IV, the `mac` checked and
/// sealed again, `lastmodified` set to `now`, and the age entries of the one key group made
/// for `target`'s recipients.
pub fn rotate(
    input: &[u8],
    format: Format,
    target: &Target,
    identities: &[Box<dyn Identity>],
    force: bool,
    now: SystemTime,
) -> Result<Outcome, Error> {
    rotate_with(input, format, target, identities, force, &|r| parse_recipient(r), now)
}

/// [`rotate`] with the caller's reading of a recipient string.
pub fn rotate_with(
    _input: &[u8],
    _format: Format,
    _target: &Target,
    _identities: &[Box<dyn Identity>],
    _force: bool,
    _recipient: &ReadRecipient<'_>,
    _now: SystemTime,
) -> Result<Outcome, Error> {
    Err(refuse("--rotate of sops files is not built yet"))
}
