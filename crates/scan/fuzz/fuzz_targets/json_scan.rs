//! The scanner never panics, and agrees with serde_json on what is valid JSON, except where
//! JSON.parse and serde_json differ (lone surrogate escapes, which JSON.parse accepts); the
//! nested scan the reader uses agrees with the flat one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_jsonl_scan::json;

fuzz_target!(|data: &[u8]| {
    let start = json::skip_ws(data, 0);
    let ours = json::skip_value(data, start).map(|end| json::skip_ws(data, end) == data.len());
    let ours = matches!(ours, Ok(true));
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
        let flat_end = json::scan_object(data, 0, |k, v| flat.push((k, v)));
        let mut top = Vec::new();
        let end = json::scan_object_nested(data, 0, |_| true, |m, k, v| {
            if m != json::Member::Nested {
                top.push((k, v));
            }
        });
        assert_eq!(flat_end, end);
        if end.is_ok() {
            assert_eq!(flat, top);
        }
        let _ = json::scan_object(data, 0, |k, v| {
            let _ = json::key_is(k, "id");
            let _ = json::as_str(v);
            let _ = json::as_u64(v);
            json::for_each_element(v, |e| {
                let _ = json::as_f64(e);
            });
        });
    }
});
