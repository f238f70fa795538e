//! The commands with their structures: templates of the objects this crate makes, and what each
//! command's answer holds (TCG TPM 2.0 Library, Part 2 for the structures, Part 3 for the
//! commands), every returned length bounded by the field's size.

use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::command::{cc, selection, Auth, Tpm, RH_NULL, RH_OWNER};
use crate::error::TpmError;
use crate::marshal::ALG_SHA256;
use crate::marshal::{In, Out};
use crate::session::{name_of, Session, DECRYPT as PARAM_IN, ENCRYPT as PARAM_OUT};

const ALG_KEYEDHASH: u16 = 0x0008;
const ALG_AES: u16 = 0x0006;
const ALG_NULL: u16 = 0x0010;
const ALG_CFB: u16 = 0x0043;
const ALG_ECC: u16 = 0x0023;
const ECC_NIST_P256: u16 = 0x0003;
const CAP_TPM_PROPERTIES: u32 = 6;

/// Object attributes (Part 2, `TPMA_OBJECT`).
const FIXED_TPM: u32 = 1 << 1;
const FIXED_PARENT: u32 = 1 << 4;
const SENSITIVE_DATA_ORIGIN: u32 = 1 << 5;
const USER_WITH_AUTH: u32 = 1 << 6;
const NO_DA: u32 = 1 << 10;
const RESTRICTED: u32 = 1 << 16;
const DECRYPT: u32 = 1 << 17;

/// Largest public area, private blob and name we accept from a TPM or a file.
pub(crate) const MAX_PUBLIC: usize = 1024;
pub(crate) const MAX_PRIVATE: usize = 1024;
pub(crate) const MAX_NAME: usize = 2 + 64;

/// The storage primary: the TCG's ECC P-256 SRK template (Provisioning Guidance §7.5.1, as
/// go-tpm's `ECCSRKTemplate`). The TPM derives it from the owner seed and this template alone,
/// so every `CreatePrimary` with it gives the same key: no persistent handle is needed, and a
/// different TPM (or a cleared one) gives another key, with another name.
fn srk_template() -> Vec<u8> {
    let attrs =
        FIXED_TPM | FIXED_PARENT | SENSITIVE_DATA_ORIGIN | USER_WITH_AUTH | NO_DA | RESTRICTED | DECRYPT;
    let mut o = Out::default();
    o.u16(ALG_ECC).u16(ALG_SHA256).u32(attrs).b(&[]);
    o.u16(ALG_AES).u16(128).u16(ALG_CFB).u16(ALG_NULL).u16(ECC_NIST_P256).u16(ALG_NULL);
    o.b(&[0; 32]).b(&[0; 32]);
    o.take()
}

/// Attributes shared by the key and the sealed object: bound to this TPM and this parent; the
/// PIN or an empty authValue alone opens it without a policy; dictionary-attack protection only
/// when there is a PIN to guess.
fn child_attrs(policy: &Option<[u8; 32]>, pin: bool) -> u32 {
    let mut a = FIXED_TPM | FIXED_PARENT;
    if policy.is_none() {
        a |= USER_WITH_AUTH;
    }
    if !pin {
        a |= NO_DA;
    }
    a
}

/// A P-256 key for `ECDH_ZGen` (decrypt, not restricted, no scheme).
pub(crate) fn ecdh_template(policy: &Option<[u8; 32]>, pin: bool) -> Vec<u8> {
    let mut o = Out::default();
    o.u16(ALG_ECC).u16(ALG_SHA256).u32(child_attrs(policy, pin) | SENSITIVE_DATA_ORIGIN | DECRYPT);
    o.b(policy.as_ref().map_or(&[][..], |p| &p[..]));
    o.u16(ALG_NULL).u16(ALG_NULL).u16(ECC_NIST_P256).u16(ALG_NULL).b(&[]).b(&[]);
    o.take()
}

/// A sealed data object (`KEYEDHASH`, no scheme): the data comes from us.
pub(crate) fn sealed_template(policy: &Option<[u8; 32]>, pin: bool) -> Vec<u8> {
    let mut o = Out::default();
    o.u16(ALG_KEYEDHASH).u16(ALG_SHA256).u32(child_attrs(policy, pin));
    o.b(policy.as_ref().map_or(&[][..], |p| &p[..]));
    o.u16(ALG_NULL).b(&[]);
    o.take()
}

/// The policy the objects are bound to: `PolicyPCR` over `pcrs` (their values now), then
/// `PolicyAuthValue` when there is a PIN (Part 3 §23.7 and §23.17: policyDigest extended by the
/// command code and its arguments). `None` without PCRs: the authValue alone then.
pub(crate) fn policy_digest(pcrs: &[(u8, [u8; 32])], pin: bool) -> Option<[u8; 32]> {
    if pcrs.is_empty() {
        return None;
    }
    let indexes: Vec<u8> = pcrs.iter().map(|p| p.0).collect();
    let mut d: [u8; 32] = Sha256::new()
        .chain_update([0u8; 32])
        .chain_update(cc::POLICY_PCR.to_be_bytes())
        .chain_update(selection(&indexes))
        .chain_update(pcr_digest(pcrs))
        .finalize()
        .into();
    if pin {
        d = Sha256::new().chain_update(d).chain_update(cc::POLICY_AUTH_VALUE.to_be_bytes()).finalize().into();
    }
    Some(d)
}

/// SHA-256 of the PCR values in ascending index order (what `PolicyPCR` compares).
pub(crate) fn pcr_digest(pcrs: &[(u8, [u8; 32])]) -> [u8; 32] {
    let mut h = Sha256::new();
    for (_, v) in pcrs {
        h.update(v);
    }
    h.finalize().into()
}

impl Tpm {
    /// `CreatePrimary` of the SRK: its transient handle, its name and its public point.
    ///
    /// The name is computed here from the public area the answer holds, and the answer's own
    /// name field must equal it: a point swapped on the bus then changes the name the caller
    /// compares with the identity file's, instead of passing under an intact name field. The
    /// area must be the SRK template's with a point filled in (what the TPM derives).
    pub(crate) fn create_primary(&mut self) -> Result<(u32, Vec<u8>, [u8; 65]), TpmError> {
        let template = srk_template();
        let mut p = Out::default();
        p.sized(|s| {
            s.b(&[]).b(&[]);
        });
        p.b(&template).b(&[]).u32(0);
        let r = self.run("CreatePrimary", cc::CREATE_PRIMARY, &[RH_OWNER], Some(Auth::Empty), &p.0, 1)?;
        let checked = (|| {
            let mut i = In::new(&r.params);
            let public = i.b(MAX_PUBLIC)?;
            i.b(MAX_PUBLIC)?; // creationData
            i.b(64)?; // creationHash
            i.u16()?;
            i.u32()?;
            i.b(64)?; // creationTicket
            let name = verified_name("CreatePrimary", public, i.b(MAX_NAME)?)?;
            // The template's unique field is two 32-byte zero coordinates, each after its length.
            let fixed = template.len() - 2 * (2 + 32);
            if public.len() != template.len() || public[..fixed] != template[..fixed] {
                return Err(TpmError::Protocol("CreatePrimary made a key of another template".into()));
            }
            Ok((name, ecc_point(public)?))
        })();
        match checked {
            Ok((name, point)) => Ok((r.handles[0], name, point)),
            Err(e) => {
                // An answer not as the TPM wrote it: the connection is given up, and the primary
                // the TPM did make is flushed (over a new connection on a simulator).
                self.abandon();
                let _ = self.flush(r.handles[0]);
                Err(e)
            }
        }
    }

    /// `Create` under `parent` (its name `parent_name`), the sensitive part (PIN, data)
    /// encrypted in `session`: (private blob, public area), both as the TPM wrote them.
    pub(crate) fn create(
        &mut self,
        (parent, parent_name): (u32, &[u8]),
        session: &mut Session,
        template: &[u8],
        auth: &[u8],
        data: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>), TpmError> {
        let mut p = Out::default();
        p.sized(|s| {
            s.b(auth).b(data);
        });
        p.b(template).b(&[]).u32(0);
        let p = Zeroizing::new(p.take());
        let auth = Auth::Session { s: session, names: &[parent_name], value: &[], attrs: PARAM_IN };
        let r = self.run("Create", cc::CREATE, &[parent], Some(auth), &p, 0)?;
        let mut i = In::new(&r.params);
        let private = i.b(MAX_PRIVATE)?.to_vec();
        let public = i.b(MAX_PUBLIC)?.to_vec();
        Ok((private, public))
    }

    /// `Load`: a transient handle for the object.
    pub(crate) fn load(&mut self, parent: u32, private: &[u8], public: &[u8]) -> Result<u32, TpmError> {
        let mut p = Out::default();
        p.b(private).b(public);
        Ok(self.run("Load", cc::LOAD, &[parent], Some(Auth::Empty), &p.0, 1)?.handles[0])
    }

    /// `ECDH_ZGen`: the x-coordinate of the key's scalar times `point` (uncompressed, on the
    /// curve); the answer comes back encrypted in `session`.
    pub(crate) fn ecdh_zgen(
        &mut self,
        (key, name): (u32, &[u8]),
        session: &mut Session,
        pin: &[u8],
        point: &[u8; 65],
    ) -> Result<Zeroizing<[u8; 32]>, TpmError> {
        let mut p = Out::default();
        p.sized(|s| {
            s.b(&point[1..33]).b(&point[33..]);
        });
        let auth = Auth::Session { s: session, names: &[name], value: pin, attrs: PARAM_OUT };
        let r = self.run("ECDH_ZGen", cc::ECDH_ZGEN, &[key], Some(auth), &p.0, 0)?;
        let mut i = In::new(&r.params);
        let outer = i.b(2 + 66 + 2 + 66)?;
        let x = In::new(outer).b(66)?;
        // The TPM may drop leading zero bytes of a coordinate; put them back.
        if x.len() > 32 {
            return Err(TpmError::Protocol("ECDH_ZGen answered a coordinate over 32 bytes".into()));
        }
        let mut out = Zeroizing::new([0u8; 32]);
        out[32 - x.len()..].copy_from_slice(x);
        Ok(out)
    }

    /// `Unseal`: the sealed data, which comes back encrypted in `session`.
    pub(crate) fn unseal(
        &mut self,
        (item, name): (u32, &[u8]),
        session: &mut Session,
        pin: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, TpmError> {
        let auth = Auth::Session { s: session, names: &[name], value: pin, attrs: PARAM_OUT };
        let r = self.run("Unseal", cc::UNSEAL, &[item], Some(auth), &[], 0)?;
        Ok(Zeroizing::new(In::new(&r.params).b(128)?.to_vec()))
    }

    /// A session salted to the loaded key `tpm_key` (its point `point`: the TPM uses the key's
    /// scalar), unbound: an HMAC session, or a policy session when `policy`.
    pub(crate) fn start_session(
        &mut self,
        tpm_key: u32,
        point: &[u8; 65],
        policy: bool,
    ) -> Result<Session, TpmError> {
        let (params, finish) = Session::start_params(point, policy)?;
        let r =
            self.run("StartAuthSession", cc::START_AUTH_SESSION, &[tpm_key, RH_NULL], None, &params, 1)?;
        finish.finish(r.handles[0], &r.params)
    }

    /// The objects' policy in `session`: `PolicyPCR` with the expected digest, then
    /// `PolicyAuthValue` when there is a PIN (the PIN then keys the session's HMAC).
    pub(crate) fn run_policy(
        &mut self,
        session: u32,
        pcrs: &[(u8, [u8; 32])],
        pin: bool,
    ) -> Result<(), TpmError> {
        let indexes: Vec<u8> = pcrs.iter().map(|p| p.0).collect();
        let mut p = Out::default();
        p.b(&pcr_digest(pcrs)).raw(&selection(&indexes));
        self.run("PolicyPCR", cc::POLICY_PCR, &[session], None, &p.0, 0)?;
        if pin {
            self.run("PolicyAuthValue", cc::POLICY_AUTH_VALUE, &[session], None, &[], 0)?;
        }
        Ok(())
    }

    /// `ReadPublic`: the object's name, computed from its public area (as `create_primary`).
    pub(crate) fn read_public(&mut self, handle: u32) -> Result<Vec<u8>, TpmError> {
        let r = self.run("ReadPublic", cc::READ_PUBLIC, &[handle], None, &[], 0)?;
        let mut i = In::new(&r.params);
        let public = i.b(MAX_PUBLIC)?;
        verified_name("ReadPublic", public, i.b(MAX_NAME)?)
    }

    /// `PCR_Read` of one SHA-256 PCR.
    pub(crate) fn pcr_read(&mut self, pcr: u8) -> Result<[u8; 32], TpmError> {
        let r = self.run("PCR_Read", cc::PCR_READ, &[], None, &selection(&[pcr]), 0)?;
        let mut i = In::new(&r.params);
        i.u32()?; // pcrUpdateCounter
        let banks = i.u32()?;
        for _ in 0..banks.min(16) {
            i.u16()?;
            let n = usize::from(i.u8()?);
            i.take(n)?;
        }
        let count = i.u32()?;
        let v = i.b(64)?;
        if count != 1 || v.len() != 32 {
            return Err(TpmError::Protocol(format!("PCR {pcr} has no SHA-256 value on this TPM")));
        }
        Ok(v.try_into().expect("32 bytes"))
    }

    /// One `TPM_PT_*` property's value (`GetCapability`), `None` if the TPM did not report it.
    pub(crate) fn property(&mut self, property: u32) -> Result<Option<u32>, TpmError> {
        let mut p = Out::default();
        p.u32(CAP_TPM_PROPERTIES).u32(property).u32(1);
        let r = self.run("GetCapability", cc::GET_CAPABILITY, &[], None, &p.0, 0)?;
        let mut i = In::new(&r.params);
        i.u8()?;
        i.u32()?;
        if i.u32()? == 0 {
            return Ok(None);
        }
        let (prop, value) = (i.u32()?, i.u32()?);
        Ok((prop == property).then_some(value))
    }
}

/// The name of the object whose public area (`TPMT_PUBLIC`) is `public`: nameAlg ‖ H(public)
/// (TCG TPM 2.0 Library, Part 1, "Names"), computed here; the name field of the same answer
/// (`claimed`) must agree, or the answer was altered after the TPM wrote it.
fn verified_name(command: &str, public: &[u8], claimed: &[u8]) -> Result<Vec<u8>, TpmError> {
    let mut i = In::new(public);
    i.u16()?;
    if i.u16()? != ALG_SHA256 {
        // Every object this crate makes or loads is named with SHA-256 (`name_of`).
        return Err(TpmError::Protocol(format!("{command}: a key not named with SHA-256")));
    }
    let name = name_of(public);
    if name != claimed {
        return Err(TpmError::Altered(format!(
            "the answer to {command} names another key than the public area it holds"
        )));
    }
    Ok(name)
}

/// The uncompressed point of an ECC public area (a key of [`ecdh_template`], or the SRK).
pub(crate) fn ecc_point(public: &[u8]) -> Result<[u8; 65], TpmError> {
    let bad = || TpmError::BadIdentity("the key's public area is not a P-256 point".into());
    let mut i = In::new(public);
    if i.u16()? != ALG_ECC {
        return Err(bad());
    }
    if i.u16()? != ALG_SHA256 {
        // Its name, which every session HMAC covers, is computed with SHA-256 (`name_of`).
        return Err(TpmError::BadIdentity("the key is not named with SHA-256".into()));
    }
    i.u32()?;
    i.b(64)?; // authPolicy
    if i.u16()? != ALG_NULL {
        i.u16()?; // symmetric: key bits, mode
        i.u16()?;
    }
    if i.u16()? != ALG_NULL {
        i.u16()?; // scheme's hash
    }
    if i.u16()? != ECC_NIST_P256 {
        return Err(bad());
    }
    if i.u16()? != ALG_NULL {
        i.u16()?; // KDF's hash
    }
    let (x, y) = (i.b(32)?, i.b(32)?);
    if x.len() != 32 || y.len() != 32 {
        return Err(bad());
    }
    let mut p = [4u8; 65];
    p[1..33].copy_from_slice(x);
    p[33..].copy_from_slice(y);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_pcr_then_password() {
        let pcrs = [(7u8, [0u8; 32])];
        let plain = policy_digest(&pcrs, false).unwrap();
        let with_pin = policy_digest(&pcrs, true).unwrap();
        assert_ne!(plain, with_pin);
        assert!(policy_digest(&[], true).is_none(), "no PCRs: the authValue alone");
        // Another value of PCR 7 is another policy.
        assert_ne!(policy_digest(&[(7, [1; 32])], false).unwrap(), plain);
    }

    #[test]
    fn the_point_comes_back_out_of_the_public_area() {
        let mut area = ecdh_template(&None, false);
        area.truncate(area.len() - 4);
        let mut o = Out::default();
        o.b(&[1; 32]).b(&[2; 32]);
        area.extend_from_slice(&o.0);
        let p = ecc_point(&area).unwrap();
        assert_eq!((p[0], p[1], p[64]), (4, 1, 2));
        assert!(ecc_point(&sealed_template(&None, false)).is_err());
    }
}
