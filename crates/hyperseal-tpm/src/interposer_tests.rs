//! An active interposer on the TPM's bus, as a socket proxy between this crate and swtpm: it
//! rewrites what passes (the storage primary's point in `CreatePrimary`'s answer, a byte of a
//! command's HMAC) and, where the code salted its session to a point the interposer chose,
//! derives the session key from what it saw and tries every 4-digit PIN against the first HMAC
//! (the offline guessing the TPM's lockout cannot stop). Skipped without swtpm, as
//! `swtpm_tests.rs`.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use aws_lc_rs::{agreement, hmac};
use hyperseal::recipient::NoCallbacks;
use hyperseal::Identity;
use sha2::{Digest, Sha256};

use crate::marshal::In;
use crate::session::{kdfa, kdfe, name_of};
use crate::swtpm_tests::{stanza, tpm_error, Pin, Swtpm};
use crate::{generate, Location, Options, TpmIdentity};

const CREATE_PRIMARY: u32 = 0x131;
const LOAD: u32 = 0x157;
const ECDH_ZGEN: u32 = 0x154;
const UNSEAL: u32 = 0x15E;
const START_AUTH_SESSION: u32 = 0x176;
const FLUSH_CONTEXT: u32 = 0x165;

/// What an interposer does to the commands and answers it passes on.
trait Tamper: Send + 'static {
    /// A new connection from the code under test begins.
    fn connected(&mut self) {}
    fn command(&mut self, _cmd: &mut [u8]) {}
    fn response(&mut self, _cmd: &[u8], _resp: &mut [u8]) {}
}

fn code(cmd: &[u8]) -> u32 {
    u32::from_be_bytes(cmd[6..10].try_into().unwrap())
}

fn ok(resp: &[u8]) -> bool {
    resp[6..10] == [0; 4]
}

/// A proxy in front of swtpm that hands every command and answer to its [`Tamper`].
struct Interposer<T> {
    location: Location,
    state: Arc<Mutex<T>>,
}

impl<T: Tamper> Interposer<T> {
    fn start(tpm: &Location, tamper: T) -> Self {
        let Location::Socket { port: to, .. } = *tpm else { panic!("swtpm listens on a socket") };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(tamper));
        let shared = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { return };
                let mut tpm = TcpStream::connect(("127.0.0.1", to)).unwrap();
                shared.lock().unwrap().connected();
                let _ = relay(&mut client, &mut tpm, &shared);
            }
        });
        Interposer { location: Location::Socket { host: "127.0.0.1".into(), port }, state }
    }
}

fn read_u32(s: &mut TcpStream) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

/// The mssim protocol: `TPM_SEND_COMMAND`, locality, length, command; length, answer, ack.
fn relay<T: Tamper>(client: &mut TcpStream, tpm: &mut TcpStream, state: &Mutex<T>) -> std::io::Result<()> {
    loop {
        let op = read_u32(client)?;
        tpm.write_all(&op.to_be_bytes())?;
        if op != 8 {
            return Ok(());
        }
        let mut head = [0u8; 5];
        client.read_exact(&mut head)?;
        let mut cmd = vec![0u8; u32::from_be_bytes(head[1..].try_into().unwrap()) as usize];
        client.read_exact(&mut cmd)?;
        state.lock().unwrap().command(&mut cmd);
        tpm.write_all(&head)?;
        tpm.write_all(&cmd)?;
        let mut resp = vec![0u8; read_u32(tpm)? as usize];
        tpm.read_exact(&mut resp)?;
        let ack = read_u32(tpm)?;
        state.lock().unwrap().response(&cmd, &mut resp);
        client.write_all(&(resp.len() as u32).to_be_bytes())?;
        client.write_all(&resp)?;
        client.write_all(&ack.to_be_bytes())?;
    }
}

/// Swaps the storage primary's point in `CreatePrimary`'s answer for its own (and, with
/// `rename`, the answer's name for the altered area's), then plays the attacker on every
/// session salted to that point.
struct SwapPoint {
    key: agreement::PrivateKey,
    point: [u8; 65],
    rename: bool,
    names: HashMap<u32, Vec<u8>>,
    sessions: HashMap<u32, ([u8; 32], Vec<u8>)>,
    /// The PIN (possibly empty) under which a command's HMAC verified with the derived key.
    found: Option<String>,
}

impl SwapPoint {
    fn new(rename: bool) -> Self {
        let key = agreement::PrivateKey::generate(&agreement::ECDH_P256).unwrap();
        let point = key.compute_public_key().unwrap().as_ref().try_into().unwrap();
        SwapPoint { key, point, rename, names: HashMap::new(), sessions: HashMap::new(), found: None }
    }
}

impl Tamper for SwapPoint {
    fn response(&mut self, cmd: &[u8], resp: &mut [u8]) {
        if !ok(resp) {
            return;
        }
        match code(cmd) {
            CREATE_PRIMARY => {
                // handle, parameterSize, then TPM2B_PUBLIC: the point ends the public area.
                let size = usize::from(u16::from_be_bytes([resp[18], resp[19]]));
                let public = 20..20 + size;
                let end = public.end;
                resp[end - 66..end - 34].copy_from_slice(&self.point[1..33]);
                resp[end - 32..end].copy_from_slice(&self.point[33..]);
                if self.rename {
                    let name = name_of(&resp[public]);
                    let mut i = In::new(&resp[end..]);
                    i.b(1024).unwrap(); // creationData
                    i.b(64).unwrap(); // creationHash
                    i.take(6).unwrap();
                    i.b(64).unwrap(); // creationTicket
                    let at = resp.len() - i.rest() + 2;
                    resp[at..at + name.len()].copy_from_slice(&name);
                }
            }
            LOAD => {
                let handle = u32::from_be_bytes(resp[10..14].try_into().unwrap());
                self.names.insert(handle, In::new(&resp[18..]).b(66).unwrap().to_vec());
            }
            START_AUTH_SESSION => {
                let mut i = In::new(&cmd[18..]);
                let caller = i.b(64).unwrap();
                let mut salt = In::new(i.b(200).unwrap());
                let (x, y) = (salt.b(32).unwrap(), salt.b(32).unwrap());
                let eph = [&[4u8][..], x, y].concat();
                let peer = agreement::UnparsedPublicKey::new(&agreement::ECDH_P256, &eph);
                let z = agreement::agree(&self.key, peer, (), |z| Ok(z.to_vec())).unwrap();
                let salt = kdfe(&z, x, &self.point[1..33]);
                let handle = u32::from_be_bytes(resp[10..14].try_into().unwrap());
                let nonce_tpm = In::new(&resp[14..]).b(64).unwrap().to_vec();
                let key = *kdfa(&salt[..], "ATH", &nonce_tpm, caller);
                self.sessions.insert(handle, (key, nonce_tpm));
            }
            _ => {}
        }
    }

    fn command(&mut self, cmd: &mut [u8]) {
        if !matches!(code(cmd), ECDH_ZGEN | UNSEAL) || self.found.is_some() {
            return;
        }
        let handle = u32::from_be_bytes(cmd[10..14].try_into().unwrap());
        let auth_size = u32::from_be_bytes(cmd[14..18].try_into().unwrap()) as usize;
        let mut a = In::new(&cmd[18..18 + auth_size]);
        let session = a.u32().unwrap();
        let (caller, attrs, tag) = (a.b(64).unwrap(), a.u8().unwrap(), a.b(64).unwrap());
        let (Some((key, nonce_tpm)), Some(name)) = (self.sessions.get(&session), self.names.get(&handle))
        else {
            return;
        };
        let cp = Sha256::new().chain_update(&cmd[6..10]).chain_update(name);
        let cp = cp.chain_update(&cmd[18 + auth_size..]).finalize();
        let pins = std::iter::once(String::new()).chain((0..10_000).map(|n| format!("{n:04}")));
        for pin in pins {
            let k = hmac::Key::new(hmac::HMAC_SHA256, &[&key[..], pin.as_bytes()].concat());
            let mut c = hmac::Context::with_key(&k);
            for part in [&cp[..], caller, nonce_tpm, &[attrs]] {
                c.update(part);
            }
            if c.sign().as_ref() == tag {
                self.found = Some(pin);
                return;
            }
        }
    }
}

#[test]
fn a_point_swapped_in_create_primarys_answer_is_refused_and_learns_nothing() {
    let Some(tpm) = Swtpm::start() else { return };
    let o = Options { postquantum: true, pin: Some(b"4711"), pcrs: &[] };
    let (key, recipient) = generate(&tpm.location, &o).unwrap();
    let (_, s) = stanza(&recipient);
    // The name field left as the TPM wrote it: the answer no longer names the key it
    // describes. Renamed to match: the primary is not the identity file's.
    for (rename, says) in [(false, "altered"), (true, "different TPM")] {
        let proxy = Interposer::start(&tpm.location, SwapPoint::new(rename));
        let id = TpmIdentity::new(key.clone(), proxy.location.clone(), Arc::new(Pin("4711")), "k");
        let msg = tpm_error(id.unwrap_stanza(&s));
        let found = proxy.state.lock().unwrap().found.clone();
        assert_eq!(found, None, "the interposer derived the session key and found the PIN offline");
        assert!(msg.contains(says), "rename: {rename}: {msg}");
        assert!(!msg.contains("wrong PIN"), "{msg}");
    }
}

#[test]
fn a_key_file_without_its_parents_name_still_keeps_the_session_from_the_interposer() {
    let Some(tpm) = Swtpm::start() else { return };
    let o = Options { postquantum: false, pin: Some(b"0815"), pcrs: &[] };
    let (key, recipient) = generate(&tpm.location, &o).unwrap();
    // age-plugin-tpm's first version records no parent: nothing to check the primary against.
    let v1 = crate::age_plugin_tpm::parse(&crate::age_plugin_tpm::encode(&key, 1)).unwrap();
    let proxy = Interposer::start(&tpm.location, SwapPoint::new(true));
    let id = TpmIdentity::new(v1, proxy.location.clone(), Arc::new(Pin("0815")), "k");
    let (fk, s) = stanza(&recipient);
    let opened = id.unwrap_stanza(&s).unwrap();
    let found = proxy.state.lock().unwrap().found.clone();
    assert_eq!(found, None, "the interposer derived the session key and found the PIN offline");
    assert_eq!(opened.unwrap().expose(), fk.expose(), "the TPM, not the swapped point, salts the session");
}

/// Flips a bit of `ECDH_ZGen`'s HMAC on its way to the TPM.
struct FlipHmac;

impl Tamper for FlipHmac {
    fn command(&mut self, cmd: &mut [u8]) {
        if code(cmd) == ECDH_ZGEN {
            let auth_size = u32::from_be_bytes(cmd[14..18].try_into().unwrap()) as usize;
            cmd[18 + auth_size - 1] ^= 1;
        }
    }
}

#[test]
fn a_refused_hmac_on_a_key_without_a_pin_is_not_a_wrong_pin() {
    let Some(tpm) = Swtpm::start() else { return };
    let (key, recipient) =
        generate(&tpm.location, &Options { postquantum: false, pin: None, pcrs: &[] }).unwrap();
    let proxy = Interposer::start(&tpm.location, FlipHmac);
    let id = TpmIdentity::new(key, proxy.location.clone(), Arc::new(NoCallbacks), "k");
    let (_, s) = stanza(&recipient);
    let msg = tpm_error(id.unwrap_stanza(&s));
    assert!(!msg.contains("wrong PIN") && !msg.contains("check the PIN"), "{msg}");
    assert!(msg.contains("HMAC") && msg.contains("no PIN"), "{msg}");
}

/// Flips a bit of the HMAC of `ECDH_ZGen`'s answer, then notes the commands that still come:
/// on the connection that carried it, and on later ones.
#[derive(Default)]
struct FlipAnswer {
    connections: usize,
    flipped_on: Option<usize>,
    same: usize,
    later: Vec<u32>,
}

impl Tamper for FlipAnswer {
    fn connected(&mut self) {
        self.connections += 1;
    }

    fn command(&mut self, cmd: &mut [u8]) {
        match self.flipped_on {
            Some(c) if c == self.connections => self.same += 1,
            Some(_) => self.later.push(code(cmd)),
            None => {}
        }
    }

    fn response(&mut self, cmd: &[u8], resp: &mut [u8]) {
        if code(cmd) == ECDH_ZGEN && ok(resp) && self.flipped_on.is_none() {
            // The HMAC ends the answer's authorization area, which ends the answer.
            *resp.last_mut().unwrap() ^= 1;
            self.flipped_on = Some(self.connections);
        }
    }
}

#[test]
fn an_answer_failing_its_hmac_is_named_and_its_connection_dropped() {
    let Some(tpm) = Swtpm::start() else { return };
    let (key, recipient) =
        generate(&tpm.location, &Options { postquantum: false, pin: None, pcrs: &[] }).unwrap();
    let proxy = Interposer::start(&tpm.location, FlipAnswer::default());
    let id = TpmIdentity::new(key, proxy.location.clone(), Arc::new(NoCallbacks), "k");
    let (_, s) = stanza(&recipient);
    let msg = tpm_error(id.unwrap_stanza(&s));
    assert!(msg.contains("ECDH_ZGen") && msg.contains("altered"), "{msg}");
    let state = proxy.state.lock().unwrap();
    assert!(state.flipped_on.is_some());
    assert_eq!(state.same, 0, "commands went on over the connection that carried the forged answer");
    // The key and the session are flushed over a new connection (swtpm keeps them otherwise),
    // and that connection carries nothing else.
    assert_eq!(state.later, [FLUSH_CONTEXT; 2]);
}
