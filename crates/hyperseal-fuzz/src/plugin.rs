//! The plugin protocol reader: what a plugin writes on its stdout, read through the reader and
//! budgets of a real exchange (`hyperseal::recipient::plugin::read_plugin_output`).

use hyperseal::recipient::plugin::read_plugin_output;
use hyperseal::{limits, Error};

pub fn plugin(data: &[u8]) {
    let (stanzas, err) = read_plugin_output(data);
    if let Some(e) = &err {
        // An over-budget plugin is a limit; anything else a protocol error, never a panic.
        assert!(matches!(e, Error::Limit(_) | Error::Plugin(_)), "unexpected error {e:?}");
    }
    let mut again = Vec::new();
    for s in &stanzas {
        assert!(s.body.len() <= limits::PLUGIN_MESSAGE, "a body of {} bytes passed the cap", s.body.len());
        s.write_to(&mut again);
    }
    // One spelling: what a clean exchange read is exactly what it was sent, and the stanzas
    // read back the same.
    if err.is_none() {
        assert!(again == data, "plugin output has a second spelling");
    }
    let (back, e2) = read_plugin_output(&again);
    assert!(e2.is_none(), "re-encoded stanzas fail to read: {e2:?}");
    assert!(back == stanzas, "re-encoded stanzas read back differently");
}
