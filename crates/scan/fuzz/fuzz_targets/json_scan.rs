//! The scanner never panics, and agrees with serde_json on what is valid JSON, except where
//! JSON.parse and serde_json differ (lone surrogate escapes, which JSON.parse accepts); the
//! nested scans the reader uses agree with the flat one, `validate` with `skip_value`, the
//! second look of a `Raw` (`for_each_field`) with the validating scan, `string_written`
//! with the validator and `written_len`, and the noting scan's notes with `string_written`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_jsonl_scan::json;

fuzz_target!(|data: &[u8]| {
    let start = json::skip_ws(data, 0);
    let ours = json::skip_value(data, start).map(|end| json::skip_ws(data, end) == data.len());
    let ours = matches!(ours, Ok(true));
    assert_eq!(json::validate(data).is_ok(), ours);
    if let Ok(text) = std::str::from_utf8(data) {
        let theirs = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
        let surrogates = text.contains("\\u");
        let deep = text.bytes().filter(|&b| b == b'[' || b == b'{').count() > 100;
        if !surrogates && !deep {
            assert_eq!(ours, theirs, "scanner and serde_json disagree on {text:?}");
        }
    }
    if data.first() == Some(&b'{') {
        // Opening every object member in the same pass changes neither the result nor the
        // top-level members.
        let mut flat = Vec::new();
        let flat_end = json::scan_members(data, 0, |k, v| flat.push((k, v)));
        let mut top = Vec::new();
        let end = json::scan_members_nested(
            data,
            0,
            |_| true,
            |m, k, v| {
                if m != json::Member::Nested {
                    top.push((k, v));
                }
            },
        );
        assert_eq!(flat_end, end);
        if let Ok(object) = end {
            assert_eq!(flat, top);
            // The second look finds the members the validating scan handed out.
            let mut again = Vec::new();
            object.for_each_field(|k, v| again.push((k, v)));
            assert_eq!(flat, again);
        }
        // Opening every object member two levels down: the same result and top-level
        // members, and the members of each value opened at the second level are those a
        // second look finds.
        let (mut top2, mut deep) = (Vec::new(), Vec::new());
        let end2 = json::scan_members_deep(
            data,
            0,
            |_, _| true,
            |m, k, v| match m {
                json::Member::Top | json::Member::Opened => top2.push((k, v)),
                json::Member::Deep => deep.push((k, v)),
                json::Member::NestedOpened => {
                    let mut again = Vec::new();
                    v.for_each_field(|k, v| again.push((k, v)));
                    assert_eq!(std::mem::take(&mut deep), again);
                }
                json::Member::Nested => {}
            },
        );
        assert_eq!(flat_end, end2);
        if end2.is_ok() {
            assert_eq!(flat, top2);
        }
        // Noting the long strings changes neither the result nor the members, and each note
        // is what a second look at its string finds.
        let (mut top3, mut notes) = (Vec::new(), Vec::new());
        let end3 = json::scan_members_deep_noting(
            data,
            0,
            |_, _| true,
            |m, k, v| {
                if matches!(m, json::Member::Top | json::Member::Opened) {
                    top3.push((k, v));
                }
            },
            &mut notes,
        );
        assert_eq!(flat_end, end3);
        if end3.is_ok() {
            assert_eq!(flat, top3);
            for note in &notes {
                assert_eq!(json::string_written(data, note.open), (note.end, note.written));
            }
            // An array's objects read again with the notes are read as without.
            let noted = json::Noted::new(data, &notes);
            for (_, v) in &top3 {
                let (mut plain, mut with_notes) = (Vec::new(), Vec::new());
                v.for_each_object_element(|f| {
                    while let Some(m) = f.next_written(|_| true) {
                        plain.push(m);
                    }
                });
                v.for_each_object_element_noted(noted, |f| {
                    while let Some(m) = f.next_written(|_| true) {
                        with_notes.push(m);
                    }
                });
                assert_eq!(plain, with_notes);
            }
        }
        let _ = json::scan_members(data, 0, |k, v| {
            // A validated string's end and whether it is written as a minimal writer writes
            // it, found in one pass, as the validator and the full check find them.
            if v.first() == Some(&b'"') {
                let at = v.as_ptr() as usize - data.as_ptr() as usize;
                let (end, written) = json::string_written(data, at);
                assert_eq!(end, at + v.len());
                assert_eq!(written, json::written_len(&v[1..v.len() - 1]));
            }
            let _ = json::key_is(k, "id");
            let _ = v.as_str();
            let _ = v.as_u64();
            let _ = v.get("id");
            v.for_each_element(|e| {
                let _ = e.as_f64();
            });
        });
    }
});
