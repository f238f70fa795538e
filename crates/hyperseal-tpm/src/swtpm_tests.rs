//! The crate against a real TPM 2.0 implementation: swtpm (Debian's `swtpm`), started on free
//! ports in a scratch folder. Skipped with a note where swtpm is not installed, unless
//! `HYPERSEAL_REQUIRE_PEERS` is set (`make test`).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use hyperseal::recipient::{NoCallbacks, Recipient};
use hyperseal::{Error, FileKey, Identity};

use crate::{generate, Location, Options, TpmError, TpmIdentity};

/// One swtpm process and its state folder, killed and removed when dropped.
pub(crate) struct Swtpm {
    child: Child,
    _dir: tempdir::Dir,
    pub location: Location,
}

mod tempdir {
    /// A scratch folder under the system's temporary folder.
    pub struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn free_port_pair() -> u16 {
    loop {
        let a = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = a.local_addr().unwrap().port();
        if port < 65535 && TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

impl Swtpm {
    pub(crate) fn start() -> Option<Swtpm> {
        if Command::new("swtpm").arg("--version").output().is_err() {
            eprintln!("note: swtpm not installed (apt-get install swtpm swtpm-tools); skipping");
            assert!(
                std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(),
                "a peer is missing under make test"
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!("hs-swtpm-{}-{}", std::process::id(), free_port_pair()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port_pair();
        let child = Command::new("swtpm")
            .args(["socket", "--tpm2", "--flags", "not-need-init,startup-clear"])
            .arg("--server")
            .arg(format!("type=tcp,port={port},bindaddr=127.0.0.1"))
            .arg("--ctrl")
            .arg(format!("type=tcp,port={},bindaddr=127.0.0.1", port + 1))
            .arg("--tpmstate")
            .arg(format!("dir={}", dir.display()))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        let location = Location::Socket { host: "127.0.0.1".into(), port };
        Some(Swtpm { child, _dir: tempdir::Dir(dir), location })
    }
}

impl Drop for Swtpm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Pin(pub &'static str);
impl hyperseal::recipient::Callbacks for Pin {
    fn request_passphrase(&self, _: &str) -> Option<zeroize::Zeroizing<String>> {
        Some(zeroize::Zeroizing::new(self.0.into()))
    }
}

pub(crate) fn stanza(r: &dyn Recipient) -> (FileKey, hyperseal::format::Stanza) {
    let fk = FileKey::generate(16);
    (fk.clone(), r.wrap_file_key(&fk).unwrap().0.remove(0))
}

#[test]
fn both_kinds_open_many_stanzas_with_one_set_up() {
    let Some(tpm) = Swtpm::start() else { return };
    for pq in [true, false] {
        let (key, recipient) =
            generate(&tpm.location, &Options { postquantum: pq, pin: None, pcrs: &[] }).unwrap();
        assert_eq!(recipient.is_postquantum(), pq);
        let line = key.to_identity_string();
        assert!(line.starts_with("AGE-PLUGIN-HYPERSEAL-1"));
        let key = crate::TpmKey::from_identity_string(&line).unwrap();
        let id = TpmIdentity::new(key, tpm.location.clone(), Arc::new(NoCallbacks), "test");
        let (fk, s) = stanza(&recipient);
        assert_eq!(id.unwrap_stanza(&s).unwrap().unwrap().expose(), fk.expose());
        let first = id.commands_sent();
        for _ in 0..20 {
            let (fk, s) = stanza(&recipient);
            assert_eq!(id.unwrap_stanza(&s).unwrap().unwrap().expose(), fk.expose());
        }
        // Per stanza: ECDH_ZGen, and Unseal for the post-quantum kind; the set-up once.
        let per = if pq { 2 } else { 1 };
        assert_eq!(id.commands_sent() - first, 20 * per, "pq: {pq}");
    }
}

pub(crate) fn tpm_error(r: Option<Result<FileKey, Error>>) -> String {
    let e = r.unwrap().expect_err("an error");
    let (m, h) = crate::split_hint(&e).unwrap_or_else(|| panic!("not a TPM error: {e}"));
    format!("{m} | {h}")
}

#[test]
fn a_wrong_pin_says_the_tries_left_and_is_not_tried_again() {
    let Some(tpm) = Swtpm::start() else { return };
    let o = Options { postquantum: true, pin: Some(b"1234"), pcrs: &[] };
    let (key, recipient) = generate(&tpm.location, &o).unwrap();
    let good = TpmIdentity::new(key.clone(), tpm.location.clone(), Arc::new(Pin("1234")), "k");
    let (fk, s) = stanza(&recipient);
    assert_eq!(good.unwrap_stanza(&s).unwrap().unwrap().expose(), fk.expose());
    // swtpm serves one connection at a time: the first identity's goes first.
    drop(good);
    let bad = TpmIdentity::new(key, tpm.location.clone(), Arc::new(Pin("0000")), "k");
    let msg = tpm_error(bad.unwrap_stanza(&s));
    assert!(msg.contains("wrong PIN (") && msg.contains("tries left"), "{msg}");
    let sent = bad.commands_sent();
    assert_eq!(tpm_error(bad.unwrap_stanza(&s)), msg, "the same answer");
    assert_eq!(bad.commands_sent(), sent, "not asked of the TPM again");
}

#[test]
fn another_tpm_is_named() {
    let (Some(a), Some(b)) = (Swtpm::start(), Swtpm::start()) else { return };
    let (key, recipient) =
        generate(&a.location, &Options { postquantum: true, pin: None, pcrs: &[7] }).unwrap();
    let id = TpmIdentity::new(key, b.location.clone(), Arc::new(NoCallbacks), "k");
    let (_, s) = stanza(&recipient);
    let msg = tpm_error(id.unwrap_stanza(&s));
    assert!(msg.contains("different TPM"), "{msg}");
    let _ = TpmError::DifferentTpm;
}

#[test]
fn an_age_plugin_tpm_identity_opens_p256tag_stanzas() {
    let Some(tpm) = Swtpm::start() else { return };
    let o = Options { postquantum: false, pin: Some(b"42"), pcrs: &[] };
    let (key, recipient) = generate(&tpm.location, &o).unwrap();
    let line = crate::age_plugin_tpm::encode(&key, 2);
    assert!(line.starts_with("AGE-PLUGIN-TPM-1") && crate::age_plugin_tpm::is_identity(&line));
    let theirs = crate::age_plugin_tpm::parse(&line).unwrap();
    assert!(theirs.has_pin() && !theirs.is_postquantum());
    let id = TpmIdentity::new(theirs, tpm.location.clone(), Arc::new(Pin("42")), "k");
    let (fk, s) = stanza(&recipient);
    assert_eq!(id.unwrap_stanza(&s).unwrap().unwrap().expose(), fk.expose());
    for cut in [3, line.len() - 8] {
        let data = hyperseal::recipient::plugin::identity_data(&line).unwrap().1;
        let short = hyperseal::recipient::plugin::identity_string("tpm", &data[..cut.min(data.len() - 1)]);
        assert!(crate::age_plugin_tpm::parse(&short).is_err());
    }
}

#[test]
fn a_pcr_bound_key_with_a_pin_opens_in_a_policy_session_salted_to_itself() {
    let Some(tpm) = Swtpm::start() else { return };
    let o = Options { postquantum: true, pin: Some(b"2580"), pcrs: &[0, 7] };
    let (key, recipient) = generate(&tpm.location, &o).unwrap();
    let id = TpmIdentity::new(key, tpm.location.clone(), Arc::new(Pin("2580")), "k");
    for _ in 0..3 {
        let (fk, s) = stanza(&recipient);
        assert_eq!(id.unwrap_stanza(&s).unwrap().unwrap().expose(), fk.expose());
    }
}
