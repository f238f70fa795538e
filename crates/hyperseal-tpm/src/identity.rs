//! A TPM key as an age [`Identity`]: the P-256 ECDH happens in the TPM (`ECDH_ZGen`), the
//! ML-KEM seed is unsealed for one decapsulation and dropped (zeroized) at once; everything
//! else is the library's tag code (`hyperseal::recipient::tag_held`).
//!
//! The TPM is reached, the primary re-created, the objects loaded and one session salted to the
//! key itself started on the first stanza this key's tag names, and kept for the identity's life:
//! a batch of files in one process costs one set-up, then per file the policy (when bound to
//! PCRs) and the two operations, each authorized by the session's HMAC (the PIN never sent) with
//! its secret answer encrypted (`session.rs`). A failure a
//! retry would repeat (a wrong PIN, a lockout, another TPM, a changed PCR, an altered answer)
//! is remembered, so one wrong PIN costs one dictionary-attack try, never one per file.
//!
//! Why the session is salted to the key and not to the primary: the key's point is in the
//! identity file (it is the recipient), so only the TPM that holds the key's scalar can compute
//! the salt, whatever answers arrive from the bus; the primary's point comes from the bus and
//! would have to be tied to the file first, which age-plugin-tpm's first version, storing no
//! parent name, cannot do. The primary's name, computed from the public area `CreatePrimary`
//! returns, is still compared with the file's: it tells another TPM (or an altered answer)
//! apart before anything is loaded.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use hyperseal::format::Stanza;
use hyperseal::recipient::{tag_held, Callbacks, Identity};
use hyperseal::{Error, FileKey};
use zeroize::Zeroizing;

use crate::command::Tpm;
use crate::error::{rc, TpmError};
use crate::key::TpmKey;
use crate::session::{name_of, Session};
use crate::transport::Location;

const PT_LOCKOUT_COUNTER: u32 = 0x20E;
/// The persistent handle where an SRK is conventionally kept (TCG Provisioning Guidance).
const SHARED_SRK: u32 = 0x8100_0001;
const PT_MAX_AUTH_FAIL: u32 = 0x20F;
const PT_LOCKOUT_INTERVAL: u32 = 0x210;

/// The objects loaded in the TPM (with their names, which the session's HMACs cover) and the
/// salted session every use runs in, flushed when dropped.
struct Loaded {
    tpm: Tpm,
    ecdh: (u32, Vec<u8>),
    sealed: Option<(u32, Vec<u8>)>,
    session: Session,
    pin: Zeroizing<Vec<u8>>,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // The kernel's resource manager flushes what a process leaves; a simulator does not.
        let handles = [Some(self.ecdh.0), self.sealed.as_ref().map(|s| s.0), Some(self.session.handle)];
        for h in handles.into_iter().flatten() {
            let _ = self.tpm.flush(h);
        }
    }
}

#[derive(Default)]
struct State {
    loaded: Option<Loaded>,
    failed: Option<TpmError>,
    commands: usize,
}

/// A TPM-bound identity.
pub struct TpmIdentity {
    key: TpmKey,
    location: Location,
    callbacks: Arc<dyn Callbacks>,
    name: String,
    state: Mutex<State>,
}

impl TpmIdentity {
    /// The key of `key`, used through the TPM at `location`; `callbacks` is asked the PIN once.
    /// `name` names the key in the PIN prompt (its file).
    pub fn new(key: TpmKey, location: Location, callbacks: Arc<dyn Callbacks>, name: &str) -> Self {
        TpmIdentity { key, location, callbacks, name: name.into(), state: Mutex::default() }
    }

    /// TPM commands sent for this identity so far.
    pub fn commands_sent(&self) -> usize {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.commands + s.loaded.as_ref().map_or(0, |l| l.tpm.commands_sent())
    }

    fn load(&self) -> Result<Loaded, TpmError> {
        let pin = match self.key.pin {
            false => Zeroizing::new(Vec::new()),
            true => {
                let p = self.callbacks.request_passphrase(&format!("TPM PIN for {}", self.name));
                Zeroizing::new(p.ok_or(TpmError::NoPin)?.as_bytes().to_vec())
            }
        };
        let mut tpm = Tpm::open(&self.location)?;
        // The name computed from the returned public area (checked against the answer's own
        // name field in `create_primary`); its point is not used.
        let (primary, name, _) = tpm.create_primary()?;
        let made = self.load_under(&mut tpm, primary, &name);
        // The loaded objects and the salted session need their parent no more.
        let _ = tpm.flush(primary);
        let (ecdh, sealed, session) = made?;
        Ok(Loaded { tpm, ecdh, sealed, session, pin })
    }

    /// Loads the objects under the primary (or age-plugin-tpm's persistent SRK) and starts the
    /// session salted to the key (the module docs say why); what was made is flushed again if
    /// a later step fails.
    #[allow(clippy::type_complexity)]
    fn load_under(
        &self,
        tpm: &mut Tpm,
        primary: u32,
        name: &[u8],
    ) -> Result<((u32, Vec<u8>), Option<(u32, Vec<u8>)>, Session), TpmError> {
        // An empty name (age-plugin-tpm's first version) cannot be checked: the TPM refuses to
        // load a blob under another parent, which says the same, and the session's secrecy
        // does not rest on the parent.
        let parent = if self.key.parent_name.is_empty() || name == self.key.parent_name {
            primary
        } else if tpm.read_public(SHARED_SRK).is_ok_and(|n| n == self.key.parent_name) {
            // age-plugin-tpm's keys may be under the SRK kept at its well-known handle.
            SHARED_SRK
        } else {
            return Err(TpmError::DifferentTpm);
        };
        let load = |tpm: &mut Tpm, b: &crate::key::Blob| {
            let h = tpm.load(parent, &b.private, &b.public).map_err(|e| match e {
                TpmError::Refused { code: rc::INTEGRITY, .. } => TpmError::DifferentTpm,
                e => e,
            })?;
            Ok::<_, TpmError>((h, name_of(&b.public)))
        };
        let ecdh = load(tpm, &self.key.ecdh)?;
        let rest = (|| {
            let sealed = self.key.sealed.as_ref().map(|b| load(tpm, b)).transpose()?;
            match tpm.start_session(ecdh.0, &self.key.point, !self.key.pcrs.is_empty()) {
                Ok(s) => Ok((sealed, s)),
                Err(e) => {
                    if let Some((h, _)) = &sealed {
                        let _ = tpm.flush(*h);
                    }
                    Err(e)
                }
            }
        })();
        match rest {
            Ok((sealed, session)) => Ok((ecdh, sealed, session)),
            Err(e) => {
                let _ = tpm.flush(ecdh.0);
                Err(e)
            }
        }
    }

    /// Runs `op` on the loaded objects (loading them first), with failures explained.
    fn with_loaded<T>(
        &self,
        state: &mut State,
        op: impl FnOnce(&mut Loaded) -> Result<T, TpmError>,
    ) -> Result<T, Error> {
        if let Some(e) = &state.failed {
            return Err(e.clone().into_error());
        }
        let result = (|| {
            if state.loaded.is_none() {
                state.loaded = Some(self.load()?);
            }
            let l = state.loaded.as_mut().expect("just loaded");
            if !self.key.pcrs.is_empty() {
                l.tpm.run_policy(l.session.handle, &self.key.pcrs, self.key.pin)?;
            }
            op(l)
        })();
        result.map_err(|e| {
            let e = self.explain(state, e);
            if !matches!(e, TpmError::Timeout(_) | TpmError::Protocol(_)) {
                state.failed = Some(e.clone());
            }
            if let Some(l) = state.loaded.take() {
                state.commands += l.tpm.commands_sent();
            }
            e.into_error()
        })
    }

    /// Turns a refusal into what it means for this key (asking the TPM what it needs to say so).
    fn explain(&self, state: &mut State, e: TpmError) -> TpmError {
        let TpmError::Refused { command, code } = e else { return e };
        let Some(l) = state.loaded.as_mut() else {
            return e;
        };
        match code {
            // Without a PIN the authValue is empty: the HMAC the TPM refused was keyed by the
            // session alone, so the session or the command was not what reached the TPM.
            rc::AUTH_FAIL | rc::BAD_AUTH if !self.key.pin => TpmError::SessionRefused { command },
            rc::AUTH_FAIL | rc::BAD_AUTH => {
                let count = l.tpm.property(PT_LOCKOUT_COUNTER).ok().flatten();
                let max = l.tpm.property(PT_MAX_AUTH_FAIL).ok().flatten();
                TpmError::WrongPin { tries_left: count.zip(max).map(|(c, m)| m.saturating_sub(c)) }
            }
            rc::LOCKOUT => {
                TpmError::Lockout { recovery_s: l.tpm.property(PT_LOCKOUT_INTERVAL).ok().flatten() }
            }
            rc::VALUE | rc::POLICY_FAIL | rc::PCR_CHANGED => {
                let changed: Vec<u8> = self
                    .key
                    .pcrs
                    .iter()
                    .filter(|(i, v)| l.tpm.pcr_read(*i).ok().is_none_or(|now| now != *v))
                    .map(|p| p.0)
                    .collect();
                if changed.is_empty() {
                    e
                } else {
                    TpmError::PcrChanged(changed)
                }
            }
            _ => e,
        }
    }
}

impl Identity for TpmIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, Error>> {
        let guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = RefCell::new(guard);
        let ecdh = |peer: &[u8; 65]| {
            let peer = *peer;
            self.with_loaded(&mut state.borrow_mut(), |l| {
                l.tpm.ecdh_zgen((l.ecdh.0, &l.ecdh.1), &mut l.session, &l.pin, &peer)
            })
        };
        let point = &self.key.point;
        if self.key.sealed.is_none() {
            return tag_held::unwrap_classic(point, stanza, ecdh);
        }
        let seed = || {
            self.with_loaded(&mut state.borrow_mut(), |l| {
                let (h, name) = l.sealed.as_ref().expect("a post-quantum key");
                let data = l.tpm.unseal((*h, name), &mut l.session, &l.pin)?;
                if data.len() != tag_held::MLKEM_SEED_BYTES {
                    return Err(TpmError::BadIdentity("the sealed seed has the wrong length".into()));
                }
                let mut seed = Zeroizing::new([0u8; tag_held::MLKEM_SEED_BYTES]);
                seed.copy_from_slice(&data);
                Ok(seed)
            })
        };
        tag_held::unwrap_hybrid(point, stanza, ecdh, seed)
    }
}
