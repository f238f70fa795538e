//! The `hash --check` line target (the parser `hyperseal hash --check` uses, from the toolkit).

use hyperseal_toolkit::checklist::{format_line, parse_line, status_line, Style};

pub fn checklist(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // As a line of a list: parsing never panics, and what parses formats back to itself.
    for line in text.split('\n') {
        if let Some(p) = parse_line(line) {
            let style = if p.tag.is_some() { Style::Tag } else { Style::Gnu };
            let again = format_line(style, p.tag.unwrap_or(""), p.hex, &p.name);
            let q = parse_line(&again).expect("a formatted line parses");
            assert_eq!((q.tag, q.hex, &q.name), (p.tag, p.hex, &p.name));
        }
    }
    // As a file name: it survives both line styles and never adds a line.
    if text.is_empty() {
        return;
    }
    for style in [Style::Gnu, Style::Tag] {
        let line = format_line(style, "SHA256", "00ff", text);
        assert!(!line.contains('\n') && !line.contains('\r'), "a name put a line break into {line:?}");
        let p = parse_line(&line).unwrap_or_else(|| panic!("cannot parse back {line:?}"));
        assert_eq!((p.hex, p.name.as_str()), ("00ff", text));
        assert_eq!(p.tag, (style == Style::Tag).then_some("SHA256"));
    }
    assert!(!status_line(text, "OK").contains('\n'));
}
