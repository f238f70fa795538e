//! The agent protocol's codec: every message round trips, and hostile ones are refused before
//! what they announce is kept.

use super::*;

fn stanza(tag: &str) -> Stanza {
    Stanza::new(tag, vec!["a".into(), "b".into()], vec![7; 32])
}

#[test]
fn requests_and_answers_round_trip() {
    let req = Request::Unwrap(vec![vec![stanza("X25519")], vec![], vec![stanza("x"), stanza("y")]]);
    let Request::Unwrap(files) = Request::decode(&req.encode()).unwrap() else { panic!() };
    assert_eq!(files.len(), 3);
    assert_eq!(files[2][1], stanza("y"));
    let key = FileKey::from_slice(&[9; 16]).unwrap();
    let ans = Answer::Unwrapped(vec![None, Some(Ok(key)), Some(Err("broken".into()))]);
    let Answer::Unwrapped(each) = Answer::decode(&ans.encode()).unwrap() else { panic!() };
    assert!(each[0].is_none());
    assert_eq!(each[1].as_ref().unwrap().as_ref().unwrap().expose(), &[9; 16]);
    assert_eq!(each[2].as_ref().unwrap().as_ref().unwrap_err(), "broken");
}

#[test]
fn prompts_and_replies_round_trip() {
    let req = Request::UnwrapAsking(vec![vec![stanza("piv-p256")]]);
    assert!(matches!(Request::decode(&req.encode()).unwrap(), Request::UnwrapAsking(f) if f.len() == 1));
    for p in [
        Prompt::Message("touch your key".into()),
        Prompt::Confirm { message: "use it?".into(), yes: "yes".into(), no: Some("no".into()) },
        Prompt::Confirm { message: "touch".into(), yes: "ok".into(), no: None },
        Prompt::Public("slot".into()),
        Prompt::Secret("PIN".into()),
    ] {
        let Answer::Ask(back) = Answer::decode(&Answer::Ask(p.clone()).encode()).unwrap() else { panic!() };
        assert_eq!(back, p);
    }
    for v in [None, Some(Zeroizing::new("123456".to_string()))] {
        let Request::Reply(back) = Request::decode(&Request::Reply(v.clone()).encode()).unwrap() else {
            panic!()
        };
        assert_eq!(back.as_deref().map(String::as_str), v.as_deref().map(String::as_str));
    }
    assert!(Request::decode(&[VERSION, REPLY, 2]).is_err());
    assert!(Answer::decode(&[VERSION, ASK, 9, 0, 0]).is_err());
}

#[test]
fn hostile_messages_are_refused_before_they_are_kept() {
    // A 4 GiB length prefix: refused from the prefix alone.
    let mut r = &[0xff, 0xff, 0xff, 0xff, 1][..];
    assert!(matches!(read_message(&mut r), Err(Error::Limit(_))));
    // A count far past the budget, with nothing behind it.
    let mut body = vec![VERSION, UNWRAP];
    body.extend_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(Request::decode(&body), Err(Error::Limit(_))));
    // Another version, garbage, trailing bytes, a cut message.
    assert!(matches!(Request::decode(&[2, LIST]), Err(Error::Agent(_))));
    assert!(matches!(Request::decode(&[VERSION, 99]), Err(Error::Agent(_))));
    assert!(matches!(Request::decode(&[VERSION, LIST, 0]), Err(Error::Agent(_))));
    let mut r = &[0, 0, 0, 9, VERSION][..];
    assert!(read_message(&mut r).is_err());
}
