//! A plugin answers twenty files in one run: the project's test plugin `age-plugin-hstest`
//! (`make test-plugin`, on age's own plugin package) counts its runs in `$HSTEST_COUNT`. Without
//! it the test passes with a note, unless HYPERSEAL_REQUIRE_PEERS is set (as `make test` sets it).
#![cfg(feature = "plugin")]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;

use hyperseal_age as age;

#[test]
fn twenty_files_one_plugin_run() {
    let tools = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/bin"));
    let plugin = tools.join("age-plugin-hstest");
    if !plugin.is_file() {
        assert!(
            std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(),
            "age-plugin-hstest is missing under make test"
        );
        eprintln!("note: {} missing (make test-plugin): skipped", plugin.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    // This test binary holds this one test: the plugin inherits these from it.
    std::env::set_var("HSTEST_COUNT", &count);
    std::env::set_var("PATH", format!("{}:{}", tools.display(), std::env::var("PATH").unwrap_or_default()));
    let keys = Command::new(&plugin).arg("--keygen").output().unwrap();
    let keys = String::from_utf8(keys.stdout).unwrap();
    let (identity, recipient) = keys.trim().split_once('\n').unwrap();
    let identity: age::plugin::Identity = identity.parse().unwrap();
    let recipient: age::plugin::Recipient = recipient.parse().unwrap();

    let to = age::plugin::RecipientPluginV1::new("hstest", &[recipient], &[], age::NoCallbacks).unwrap();
    let files: Vec<Vec<u8>> = (0..20)
        .map(|i| {
            let e = age::Encryptor::with_recipients(std::iter::once(&to as &dyn age::Recipient)).unwrap();
            let mut file = vec![];
            let mut w = e.wrap_output(&mut file).unwrap();
            w.write_all(format!("file {i}").as_bytes()).unwrap();
            w.finish().unwrap();
            file
        })
        .collect();
    std::fs::write(&count, "").unwrap();

    let with = age::plugin::IdentityPluginV1::new("hstest", &[identity], age::NoCallbacks).unwrap();
    let decryptors: Vec<_> = files.iter().map(|f| age::Decryptor::new(&f[..]).unwrap()).collect();
    let stanzas: Vec<_> = decryptors.iter().map(|d| d.stanzas()).collect();
    let refs: Vec<&[_]> = stanzas.iter().map(|s| &s[..]).collect();
    let keys = with.unwrap_files(&refs);
    for (i, (d, key)) in decryptors.into_iter().zip(keys).enumerate() {
        let mut plain = String::new();
        d.decrypt_with_file_key(key.expect("mine").unwrap()).unwrap().read_to_string(&mut plain).unwrap();
        assert_eq!(plain, format!("file {i}"));
    }
    let runs = std::fs::read_to_string(&count).unwrap();
    assert_eq!(runs.matches("run").count(), 1, "plugin runs: {runs:?}");
}
