//! Files made through this crate open with the real age v1.3.1, and age's files open through
//! this crate: X25519, post-quantum (`age1pq1…`, which the age crate 0.12 cannot do) and armor.
//! age is `.tools/bin/age` (`make age`); without it these tests pass with a note, unless
//! HYPERSEAL_REQUIRE_PEERS is set (as `make test` sets it). Armor is in every case, so the file
//! needs the `armor` feature (`make age-crate-test` runs all features).
#![cfg(feature = "armor")]

use std::io::{Read, Write};
use std::iter;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use age::secrecy::ExposeSecret;
use hyperseal_age as age;

fn age_bin() -> Option<PathBuf> {
    let bin = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/bin/age"));
    if bin.is_file() {
        return Some(bin);
    }
    assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "age is missing under make test");
    eprintln!("note: {} missing (make age): skipped", bin.display());
    None
}

/// Runs age with `args`, `input` on stdin; its stdout.
fn run_age(bin: &PathBuf, args: &[&str], input: &[u8]) -> Vec<u8> {
    run_age_env(bin, args, input, &[])
}

/// [`run_age`] with `env` added (a PATH that finds age's plugins).
fn run_age_env(bin: &PathBuf, args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Vec<u8> {
    let mut child = Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "age {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn encrypt(recipient: &dyn age::Recipient, plain: &[u8], armor: bool) -> Vec<u8> {
    use age::armor::{ArmoredWriter, Format};
    let format = if armor { Format::AsciiArmor } else { Format::Binary };
    let encryptor = age::Encryptor::with_recipients(iter::once(recipient)).unwrap();
    let mut file = vec![];
    let mut w = encryptor.wrap_output(ArmoredWriter::wrap_output(&mut file, format).unwrap()).unwrap();
    w.write_all(plain).unwrap();
    w.finish().unwrap().finish().unwrap();
    file
}

fn decrypt(identity: &dyn age::Identity, file: &[u8]) -> Vec<u8> {
    let d = age::Decryptor::new_buffered(age::armor::ArmoredReader::new(file)).unwrap();
    let mut plain = vec![];
    d.decrypt(iter::once(identity)).unwrap().read_to_end(&mut plain).unwrap();
    plain
}

/// Both directions with one key pair: `secret` in an identity file for age, `public` for `-r`.
fn both_ways(identity: &dyn age::Identity, recipient: &dyn age::Recipient, secret: &str, public: &str) {
    let Some(bin) = age_bin() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("key.txt");
    std::fs::write(&key_file, format!("{secret}\n")).unwrap();
    let key_file = key_file.to_str().unwrap();
    let plain: Vec<u8> = (0..200_000u32).map(|i| (i % 241) as u8).collect();
    for armor in [false, true] {
        let ours = encrypt(recipient, &plain, armor);
        assert_eq!(run_age(&bin, &["-d", "-i", key_file], &ours), plain, "age opens ours (armor {armor})");
        let mut args = vec!["-e", "-r", public];
        if armor {
            args.push("-a");
        }
        let theirs = run_age(&bin, &args, &plain);
        assert_eq!(decrypt(identity, &theirs), plain, "we open age's (armor {armor})");
    }
}

#[test]
fn x25519_with_age() {
    let key = age::x25519::Identity::generate();
    let public = key.to_public();
    both_ways(&key, &public, key.to_string().expose_secret(), &public.to_string());
}

#[test]
fn post_quantum_with_age() {
    let key = age::pq::Identity::generate();
    let public = key.to_public();
    both_ways(&key, &public, key.to_string().expose_secret(), &public.to_string());
}

/// age has no software identity for tag recipients: its test plugin `age-plugin-tagtest` holds
/// two fixed keys, which the core also reads as P-256 identities (the same data files as the
/// CLI's tag tests).
#[cfg(feature = "cli-common")]
#[test]
fn tag_recipients_with_age() {
    let Some(bin) = age_bin() else { return };
    let tools = bin.parent().unwrap().to_path_buf();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../hyperseal/tests/data");
    let ids = format!("{data}/age_tagtest_identities.txt");
    let classic = "age1tag1qwe0kafsjrar4txm6heqnhpfuggzr0gvznz7fvygxrlq90u5mq2pysxtw6h";
    let hybrid = std::fs::read_to_string(format!("{data}/age_tagtest_hybrid_recipient.txt")).unwrap();
    let identities =
        age::cli_common::read_identities(vec![ids], None, &mut age::cli_common::StdinGuard::new(false))
            .unwrap();
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap_or_default());
    let plain = vec![5u8; 65537];
    let recipients: [Box<dyn age::Recipient>; 2] = [
        Box::new(classic.parse::<age::tag::Recipient>().unwrap()),
        Box::new(hybrid.trim().parse::<age::tagpq::Recipient>().unwrap()),
    ];
    for (recipient, public) in recipients.iter().zip([classic, hybrid.trim()]) {
        // Ours to age, through its plugin.
        let ours = encrypt(recipient.as_ref(), &plain, false);
        assert_eq!(run_age_env(&bin, &["-d", "-j", "tagtest"], &ours, &[("PATH", &path)]), plain);
        // age's to us.
        let theirs = run_age(&bin, &["-e", "-r", public], &plain);
        let d = age::Decryptor::new(&theirs[..]).unwrap();
        let mut got = vec![];
        d.decrypt(identities.iter().map(|i| i.as_ref() as &dyn age::Identity))
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got, plain);
    }
}

/// An ed25519 SSH key from ssh-keygen, both ways.
#[cfg(feature = "ssh")]
#[test]
fn ssh_with_age() {
    let Some(bin) = age_bin() else { return };
    let Ok(keygen) = which_ssh_keygen() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("id");
    let made = Command::new(keygen).args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(&key).status().unwrap();
    assert!(made.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let recipient: age::ssh::Recipient = public.parse().unwrap();
    let identity = age::ssh::Identity::from_buffer(&std::fs::read(&key).unwrap()[..], None).unwrap();
    let plain = vec![3u8; 70_000];
    let ours = encrypt(&recipient, &plain, false);
    assert_eq!(run_age(&bin, &["-d", "-i", key.to_str().unwrap()], &ours), plain);
    let theirs = run_age(&bin, &["-e", "-r", public.trim()], &plain);
    assert_eq!(decrypt(&identity, &theirs), plain);
}

#[cfg(feature = "ssh")]
fn which_ssh_keygen() -> Result<PathBuf, ()> {
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        let p = PathBuf::from(dir).join("ssh-keygen");
        if p.is_file() {
            return Ok(p);
        }
    }
    assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "ssh-keygen is missing under make test");
    eprintln!("note: ssh-keygen missing (make ssh-keygen): skipped");
    Err(())
}
