//! The frame scanner: reads the head of a relay frame (`["EVENT","<sub>"`, `["EOSE","<sub>"`,
//! `["CLOSED","<sub>"`) without parsing the rest, so that frames of other subscriptions are
//! forwarded untouched and an intercepted event is parsed straight from its object's text.
//!
//! Every function here takes any `&str` (the bytes of a text frame from a relay) and never
//! panics; the fuzz entry point [`crate::__fuzz`] re-exports them.

/// Kind of frame, from a scan of its head.
#[derive(Debug, PartialEq, Eq)]
pub enum Head<'a> {
    /// `["EVENT","<id>"` with the raw (unescaped) id and the index just after it.
    Event(&'a str, usize),
    /// `["EOSE"` or `["CLOSED"` with the raw id.
    EoseOrClosed(&'a str),
    /// Anything else, or an id containing an escape (needs a full parse).
    Other,
    /// An id containing a backslash: decide after a full parse.
    Escaped,
}

/// JSON's whitespace (RFC 8259): space, tab, line feed, carriage return. Nothing else: the
/// SDK parses frames with serde_json, which rejects any other character around the message
/// (U+00A0, U+2028, form feed, …), so neither may the tap skip it.
pub(crate) fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// `s` without JSON whitespace (RFC 8259: space, tab, line feed, carriage return; nothing
/// else, as serde_json, which parses the SDK's frames, rejects any other character there) at
/// either end.
pub fn trim_json(s: &str) -> &str {
    s.trim_matches(is_json_ws)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Reads `"<string>"` at `i`; returns the raw content and the index after the closing quote,
/// or `Err(())` if the string contains a backslash, `None` if malformed.
fn raw_string(s: &str, i: usize) -> Option<Result<(&str, usize), ()>> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let mut j = start;
    while j < b.len() {
        match b[j] {
            b'"' => return Some(Ok((&s[start..j], j + 1))),
            b'\\' => return Some(Err(())),
            _ => j += 1,
        }
    }
    None
}

/// The event object of an `EVENT` frame: the text after `,` following the subscription id, up
/// to the closing `]`. Parsing it directly skips the `serde_json::Value` tree that
/// `RelayMessage::from_json` builds first. A frame with extra elements after the event does not
/// parse as an event and is dropped.
///
/// `after_id` is the index [`scan_head`] returned with [`Head::Event`] for the same `s`; any
/// other index gives `None` or a wrong slice, never a panic.
pub fn event_object(s: &str, after_id: usize) -> Option<&str> {
    let b = s.as_bytes();
    let i = skip_ws(b, after_id);
    if b.get(i) != Some(&b',') {
        return None;
    }
    s[i + 1..].trim_end_matches(is_json_ws).strip_suffix(']')
}

/// Whether `obj` (an event object's text) holds something that `Event::from_json` reads but
/// `RelayMessage::from_json`, the SDK's parser, refuses, so that only the SDK's own parse may
/// decide the frame. `Event::from_json` skips an unknown field without checking what
/// `RelayMessage::from_json` checks when it builds its `serde_json::Value` tree first: that
/// each number fits an `f64`, that each `\u` escape is not half of a surrogate pair, and that
/// the nesting stays within serde_json's depth limit. (Found by
/// `fuzz/fuzz_targets/relay_frame.rs`: an unknown field `"cont":266e04470951`.)
///
/// Conservative: `true` for any number with an exponent or a run of more than 300 digits
/// outside strings, any unpaired surrogate escape, or more than 32 open brackets; a relay's
/// events have none of these, and a `true` only costs the frame the SDK's slower parse.
pub fn needs_full_parse(obj: &str) -> bool {
    let b = obj.as_bytes();
    let mut i = 0;
    let mut depth = 0u32;
    let mut digits = 0usize;
    while i < b.len() {
        let c = b[i];
        i += 1;
        match c {
            b'"' => {
                digits = 0;
                // A string: only `"` and `\` matter.
                loop {
                    let Some(&c) = b.get(i) else { return false };
                    i += 1;
                    match c {
                        b'"' => break,
                        b'\\' => {
                            if b.get(i) != Some(&b'u') {
                                i += 1; // a one-character escape
                                continue;
                            }
                            match hex4(b, i + 1) {
                                Some(0xD800..=0xDBFF) => {
                                    let low = (b.get(i + 5) == Some(&b'\\')
                                        && b.get(i + 6) == Some(&b'u'))
                                    .then(|| hex4(b, i + 7))
                                    .flatten();
                                    if !matches!(low, Some(0xDC00..=0xDFFF)) {
                                        return true;
                                    }
                                    i += 11;
                                }
                                Some(0xDC00..=0xDFFF) => return true,
                                Some(_) => i += 5,
                                None => i += 1, // malformed: both parsers refuse it
                            }
                        }
                        _ => {}
                    }
                }
            }
            b'0'..=b'9' => {
                digits += 1;
                if digits > 300 {
                    return true;
                }
            }
            b'e' | b'E' if i >= 2 && b[i - 2].is_ascii_digit() => return true,
            b'[' | b'{' => {
                digits = 0;
                depth += 1;
                if depth > 32 {
                    return true;
                }
            }
            b']' | b'}' => {
                digits = 0;
                depth = depth.saturating_sub(1);
            }
            _ => digits = 0,
        }
    }
    false
}

/// The value of four hex digits at `b[i..i + 4]`, if they are.
fn hex4(b: &[u8], i: usize) -> Option<u16> {
    let d = b.get(i..i + 4)?;
    let mut v = 0u16;
    for &c in d {
        v = v << 4 | (c as char).to_digit(16)? as u16;
    }
    Some(v)
}

/// Classifies a frame (already trimmed by the caller, with [`trim_json`]) by its first two
/// elements.
pub fn scan_head(s: &str) -> Head<'_> {
    let b = s.as_bytes();
    let i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return Head::Other;
    }
    let i = skip_ws(b, i + 1);
    let (kind, i) = match raw_string(s, i) {
        Some(Ok(x)) => x,
        _ => return Head::Other,
    };
    let i = skip_ws(b, i);
    if b.get(i) != Some(&b',') {
        return Head::Other;
    }
    let i = skip_ws(b, i + 1);
    let (id, after) = match raw_string(s, i) {
        Some(Ok(x)) => x,
        Some(Err(())) => return Head::Escaped,
        None => return Head::Other,
    };
    match kind {
        "EVENT" => Head::Event(id, after),
        "EOSE" | "CLOSED" => Head::EoseOrClosed(id),
        _ => Head::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_scan() {
        assert_eq!(scan_head(r#"["EVENT","bv:1",{}]"#), Head::Event("bv:1", 15));
        assert_eq!(
            scan_head(r#" [ "EVENT" , "abc" ,{}]"#),
            Head::Event("abc", 18)
        );
        assert_eq!(scan_head(r#"["EOSE","bv:1"]"#), Head::EoseOrClosed("bv:1"));
        assert_eq!(
            scan_head(r#"["CLOSED","bv:1","x"]"#),
            Head::EoseOrClosed("bv:1")
        );
        assert_eq!(scan_head(r#"["EVENT","bv\u003a1",{}]"#), Head::Escaped);
        assert_eq!(scan_head(r#"["NOTICE","hi"]"#), Head::Other);
        assert_eq!(scan_head(r#"["OK","id",true,""]"#), Head::Other);
        assert_eq!(scan_head(r#"["EVENT""#), Head::Other);
        assert_eq!(scan_head(r#"{"EVENT":1}"#), Head::Other);
        assert_eq!(scan_head(""), Head::Other);
        let f = r#"["EVENT","bv:1" , {"a":[1]} ] "#.trim();
        assert_eq!(event_object(f, 15), Some(r#" {"a":[1]} "#));
        assert_eq!(event_object(r#"["EVENT","bv:1"]"#, 15), None);
        assert_eq!(event_object(r#"["EVENT","bv:1",{}"#, 15), None);
    }

    #[test]
    fn only_json_whitespace_is_trimmed() {
        // Found by fuzz/fuzz_targets/relay_frame.rs: `str::trim` also strips U+00A0 and other
        // Unicode spaces, which serde_json (the SDK's parser) rejects around a message.
        assert_eq!(trim_json(" \t\r\n[1]\n "), "[1]");
        assert_eq!(trim_json("\u{a0}[1]"), "\u{a0}[1]");
        assert_eq!(trim_json("[1]\u{2028}"), "[1]\u{2028}");
        assert_eq!(trim_json("\u{c}[1]"), "\u{c}[1]");
        let f = "[\"EVENT\",\"bv:1\",{}\u{a0}]";
        assert_eq!(event_object(f, 15), Some("{}\u{a0}"));
        let f = "[\"EVENT\",\"bv:1\",{}]\u{a0}";
        assert_eq!(event_object(f, 15), None);
    }

    #[test]
    fn what_only_the_sdk_parse_may_decide() {
        // Numbers out of an f64's range, as `RelayMessage::from_json` reads them.
        assert!(needs_full_parse(r#"{"kind":1,"x":266e04470951}"#));
        assert!(needs_full_parse(r#"{"x":1.5E3}"#));
        assert!(needs_full_parse(&format!(r#"{{"x":{}}}"#, "9".repeat(301))));
        assert!(!needs_full_parse(&format!(
            r#"{{"x":{}}}"#,
            "9".repeat(300)
        )));
        // Letters e outside numbers: true, false, and text in strings.
        assert!(!needs_full_parse(
            r#"{"a":true,"b":false,"c":null,"content":"1e9 ee","kind":1}"#
        ));
        // Surrogate escapes: a pair is fine, half of one is not.
        assert!(!needs_full_parse(
            r#"{"content":"\ud83d\ude00 \u00e9 \n \\u"}"#
        ));
        assert!(needs_full_parse(r#"{"x":"\ud83d"}"#));
        assert!(needs_full_parse(r#"{"x":"\ud83d\u0041"}"#));
        assert!(needs_full_parse(r#"{"x":"\ude00"}"#));
        assert!(needs_full_parse(r#"{"\udBff":1}"#));
        // Nesting.
        let deep = format!(r#"{{"x":{}1{}}}"#, "[".repeat(32), "]".repeat(32));
        assert!(needs_full_parse(&deep));
        let ok = format!(r#"{{"x":{}1{}}}"#, "[".repeat(31), "]".repeat(31));
        assert!(!needs_full_parse(&ok));
        // Truncated input never panics.
        for s in [r#"{"x":"\ud83d\u"#, r#"{"x":"\"#, r#"{"x":"\u12"#, "\\"] {
            needs_full_parse(s);
        }
    }
}
