//! What the walk skips, it skips alone: a file that cannot be read, or whose name no restore
//! could write, is left out with a warning, and the snapshot still restores whole.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use hyperseal_backup::{restore, RestoreOptions};

use crate::common::{describe, Repo};

/// Runs `f` on a thread of its own that cannot read past a file's mode: as root, with the
/// capabilities that override modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) dropped from that
/// thread alone, so the rest of the test process keeps them. The walk runs on the thread that
/// calls `backup`, so a file of mode 000 is unreadable to it, as to any other user.
fn without_override<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            drop_mode_override();
            f()
        })
        .join()
        .unwrap()
    })
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn drop_mode_override() {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    const VERSION_3: u32 = 0x2008_0522;
    const DAC_OVERRIDE_AND_READ_SEARCH: u32 = (1 << 1) | (1 << 2);
    let mut head = Header { version: VERSION_3, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: capget and capset with a version-3 header and the two data words that version
    // takes, both ours for the call. The raw calls change the calling thread only (glibc's
    // wrappers would change every thread of the process).
    unsafe {
        assert_eq!(libc::syscall(libc::SYS_capget, &mut head, data.as_mut_ptr()), 0, "capget");
        data[0].effective &= !DAC_OVERRIDE_AND_READ_SEARCH;
        assert_eq!(libc::syscall(libc::SYS_capset, &mut head, data.as_ptr()), 0, "capset");
    }
}

#[cfg(not(target_os = "linux"))]
fn drop_mode_override() {}

#[test]
fn an_unreadable_file_with_two_names_is_skipped_not_the_snapshot() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(src.join("a")).unwrap();
    fs::create_dir_all(src.join("b")).unwrap();
    fs::write(src.join("kept.txt"), "kept").unwrap();
    fs::write(src.join("a/locked"), "secret").unwrap();
    fs::hard_link(src.join("a/locked"), src.join("b/twin")).unwrap();
    fs::set_permissions(src.join("a/locked"), fs::Permissions::from_mode(0o000)).unwrap();
    let sum = without_override(|| repo.backup(&[&src]));
    let skipped: Vec<&String> = sum.warnings.iter().filter(|w| w.contains("skipped")).collect();
    assert_eq!(skipped.len(), 2, "both names are read as files, and both skipped: {:?}", sum.warnings);

    let reader = repo.open();
    let snap = reader.find(&sum.snapshot).unwrap().snapshot;
    let out = repo.path("out");
    restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();
    assert_eq!(fs::read(out.join("src/kept.txt")).unwrap(), b"kept");
    assert!(!out.join("src/a/locked").exists() && !out.join("src/b/twin").exists());
}

#[test]
fn a_later_name_of_a_file_is_a_hard_link_to_the_first_stored() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("one"), "shared").unwrap();
    fs::hard_link(src.join("one"), src.join("two")).unwrap();
    fs::hard_link(src.join("one"), src.join("three")).unwrap();
    let sum = repo.backup(&[&src]);
    assert!(sum.warnings.is_empty(), "{:?}", sum.warnings);
    let reader = repo.open();
    let snap = reader.find(&sum.snapshot).unwrap().snapshot;
    let out = repo.path("out");
    restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();
    assert_eq!(describe(&src), describe(&out.join("src")));
}

#[test]
fn a_name_no_restore_could_write_is_skipped_not_the_snapshot() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(src.join("line\nbreak")).unwrap();
    fs::write(src.join("line\nbreak/inside"), "x").unwrap();
    fs::write(src.join("bell\x07"), "x").unwrap();
    // Plain names on Linux, though not on Windows: they restore here.
    fs::write(src.join("a:b"), "colon").unwrap();
    fs::write(src.join(r"x\y"), "backslash").unwrap();
    fs::write(src.join("CON"), "device on Windows").unwrap();
    let sum = repo.backup(&[&src]);
    assert_eq!(sum.warnings.len(), 2, "{:?}", sum.warnings);

    let reader = repo.open();
    let snap = reader.find(&sum.snapshot).unwrap().snapshot;
    let out = repo.path("out");
    restore(&reader, &snap, &out, &RestoreOptions::default()).unwrap();
    for (name, content) in [("a:b", "colon"), (r"x\y", "backslash"), ("CON", "device on Windows")] {
        assert_eq!(fs::read_to_string(out.join("src").join(name)).unwrap(), content);
    }
    assert_eq!(fs::read_dir(out.join("src")).unwrap().count(), 3);
}

#[test]
fn a_fifo_is_skipped_without_blocking() {
    let repo = Repo::new(&[]);
    let src = repo.path("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("file"), "x").unwrap();
    let fifo = std::ffi::CString::new(src.join("fifo").into_os_string().into_encoded_bytes()).unwrap();
    #[allow(unsafe_code)]
    // SAFETY: mkfifo reads a NUL-terminated path that lives across the call.
    let made = unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) };
    assert_eq!(made, 0);
    let sum = repo.backup(&[&src]);
    assert_eq!(sum.warnings.len(), 1, "{:?}", sum.warnings);
    assert!(sum.warnings[0].contains("fifo"), "{:?}", sum.warnings);
}
