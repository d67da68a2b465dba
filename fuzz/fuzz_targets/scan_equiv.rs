//! The scanner's 64-byte string loop gives, on any bytes, exactly what the stepwise loop it
//! replaced gives (`json::reference`): the same verdict, error kind and position, and the same
//! spans of every value and key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_jsonl_scan::json::{self, reference, Error, Member};

/// Where a piece of `data` starts and how long it is: spans compared by place, not by text.
fn span(data: &[u8], piece: &[u8]) -> (usize, usize) {
    (piece.as_ptr() as usize - data.as_ptr() as usize, piece.len())
}

type Members = Vec<(Member, (usize, usize), (usize, usize))>;

fn members(
    data: &[u8],
    start: usize,
    open: fn(&[u8]) -> bool,
    reference: bool,
) -> (Result<(usize, usize), Error>, Members) {
    let mut seen = Vec::new();
    let mut note = |m, k: &[u8], v: json::Raw| seen.push((m, span(data, k), span(data, &v)));
    let end = if reference {
        reference::scan_members_nested(data, start, open, &mut note)
    } else {
        json::scan_members_nested(data, start, open, &mut note)
    };
    (end.map(|object| span(data, &object)), seen)
}

fuzz_target!(|data: &[u8]| {
    let whole = |r: Result<json::Raw, Error>| r.map(|raw| span(data, &raw));
    assert_eq!(whole(json::validate(data)), whole(reference::validate(data)));
    // Every quote starts a string somewhere: skipped from each (the first 512), block
    // boundaries fall at every offset from the text's start.
    for (at, _) in data.iter().enumerate().filter(|(_, &c)| c == b'"').take(512) {
        assert_eq!(
            json::skip_value(data, at),
            reference::skip_value(data, at),
            "string at {at}"
        );
    }
    let start = json::skip_ws(data, 0);
    if data.get(start) == Some(&b'{') {
        for open in [(|_| true) as fn(&[u8]) -> bool, |k| k == b"message"] {
            assert_eq!(
                members(data, start, open, false),
                members(data, start, open, true)
            );
        }
    }
});
