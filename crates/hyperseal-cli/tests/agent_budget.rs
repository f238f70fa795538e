//! A request's work is bounded by its deadline, and a full agent waits without spinning: every
//! one of the 32 slots answers a request of 5,000 stanzas that each cost the agent an RSA
//! private-key operation; each is answered within its deadline, the files left over "not
//! tried", while a 33rd connection leaves the accepting thread asleep. It keeps both cores busy
//! for the agent's budget beside the suite's other tests, so every slot's work ends late and at
//! once: the answers must still arrive (the agent gives each its answer time however late its
//! work ended). And connections one after another are served by threads
//! kept between them, not a thread each (whose start and end land on the next one's path).

use crate::agent_support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

use agent_support::{proc_status, Agent};

/// An SSH RSA key added to the agent, and `n` files of one stanza each that carries the key's
/// tag and a damaged body: each costs the agent a private-key operation, then fails.
fn costly_files(a: &Agent, n: usize) -> Vec<Vec<hyperseal::format::Stanza>> {
    let key = a.path("rsa");
    let o =
        Command::new("ssh-keygen").args(["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f"]).arg(&key).output();
    assert!(o.is_ok_and(|o| o.status.success()), "ssh-keygen (make ssh-keygen)");
    a.ok(&["agent", "add", key.to_str().unwrap()]);
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let to = [hyperseal::recipient::parse_recipient(public.trim()).unwrap()];
    let file = hyperseal::encrypt(&to, b"x").unwrap();
    let header = hyperseal::Decryptor::from_slice(&file).unwrap();
    let mut stanza = header.header().stanzas[0].clone();
    assert_eq!(stanza.tag, "ssh-rsa");
    stanza.body[7] ^= 1;
    vec![vec![stanza]; n]
}

#[test]
fn a_request_works_within_its_deadline_and_a_full_agent_waits_without_spinning() {
    let a = Agent::start(&[]);
    let files = costly_files(&a, 5_000);
    let sock = a.sock();
    // Every slot answering a request of 5,000 private-key operations (minutes of work each
    // on two cores, were it done).
    let started = Instant::now();
    let askers: Vec<_> = (0..hyperseal::limits::AGENT_CONNECTIONS)
        .map(|_| {
            let (sock, files) = (sock.clone(), files.clone());
            std::thread::spawn(move || {
                hyperseal::agent::AgentIdentity::new(sock)
                    .with_timeout(Duration::from_secs(60))
                    .unwrap_files(files)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    // One more connection: the accepting thread waits for a slot, asleep.
    let mut waiting = UnixStream::connect(&sock).unwrap();
    let mut request = Vec::new();
    hyperseal::agent::proto::write_message(&mut request, &hyperseal::agent::proto::Request::List.encode())
        .unwrap();
    waiting.write_all(&request).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let before = proc_status(&format!("/proc/{0}/task/{0}/status", a.pid()), "voluntary_ctxt_switches");
    std::thread::sleep(Duration::from_secs(1));
    let woke =
        proc_status(&format!("/proc/{0}/task/{0}/status", a.pid()), "voluntary_ctxt_switches") - before;
    assert!(woke < 50, "the accepting thread woke {woke} times in a second while every slot was answering");
    for asker in askers {
        let answers = asker.join().unwrap().expect("an answer within the agent's budget, not a timeout");
        assert_eq!(answers.len(), files.len());
        let untried = answers
            .iter()
            .filter(|r| matches!(r, Some(Err(e)) if e.to_string().contains("not tried")))
            .count();
        assert!(untried > 0, "every file was tried: the request's work was not bounded");
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(40), "the requests took {took:?}");
    // The waiting connection is served once a slot is free.
    waiting.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut answer = [0u8; 4];
    waiting.read_exact(&mut answer).unwrap();
}

/// The agent's threads now.
fn threads(pid: u32) -> BTreeSet<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks.map(|t| t.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn connections_one_after_another_are_served_by_kept_threads() {
    let a = Agent::start(&[]);
    let mut list = Vec::new();
    hyperseal::agent::proto::write_message(&mut list, &hyperseal::agent::proto::Request::List.encode())
        .unwrap();
    let mut seen = BTreeSet::new();
    for _ in 0..12 {
        // Connected with nothing sent yet, the connection waits on a thread of its own.
        let mut conn = UnixStream::connect(a.sock()).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        seen.extend(threads(a.pid()));
        conn.write_all(&list).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut length = [0u8; 4];
        conn.read_exact(&mut length).unwrap();
    }
    // The accepting thread, the housekeeping, the end signals' thread and a connection's thread
    // (or two, where one was still zeroing its stack when the next came): not one per connection.
    assert!(seen.len() <= 5, "{} threads served 12 connections one after another: {seen:?}", seen.len());
}
