//! `hyperseal completions SHELL` and `hyperseal man`, what `make install` installs: generated
//! from the parser's own command tree, so every subcommand is in them.

use crate::common;

use common::{hs, ok};

#[test]
fn completions_know_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = ok(&hs(&["completions", shell], None));
        for sub in ["keygen", "encrypt", "decrypt", "inspect", "age", "hash", "token"] {
            assert!(script.contains(sub), "{shell}: no {sub}");
        }
    }
    let bad = hs(&["completions", "tcsh"], None);
    assert_eq!(bad.status.code(), Some(2), "an unknown shell is a usage error");
}

#[test]
fn the_man_page_is_roff_with_every_subcommand() {
    let page = ok(&hs(&["man"], None));
    assert!(page.contains(".TH hyperseal 1"), "{}", &page[..200.min(page.len())]);
    for sub in ["keygen", "encrypt", "decrypt", "inspect", "completions"] {
        assert!(page.contains(sub), "no {sub}");
    }
    let help = ok(&hs(&["--help"], None));
    assert!(!help.contains("\n  man "), "the man subcommand stays hidden");
}
