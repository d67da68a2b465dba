//! The residual scan: before a rewritten line is written, it must hold none of the input
//! strings that were replaced on it (outside the text it copies on purpose: ids, names, keys)
//! and none of the secrets the user named. A line that does is not written.

use super::rewrite::LineCheck;
use memchr::memmem;

/// The shortest replaced string the scan looks for (shorter ones occur by chance: `main`,
/// `true`).
pub const MIN_LEN: usize = 8;

/// The first input string that survived in `line`, if any: a replaced string found outside
/// the ranges copied on purpose, or a named secret found anywhere.
pub fn residual<'s>(line: &[u8], check: &'s LineCheck, secrets: &'s [String]) -> Option<&'s [u8]> {
    for s in &check.replaced {
        let found = memmem::find_iter(line, s).any(|at| {
            !check
                .kept
                .iter()
                .any(|&(a, b)| a <= at && at + s.len() <= b)
        });
        if found {
            return Some(s);
        }
    }
    secrets
        .iter()
        .find(|s| memmem::find(line, s.as_bytes()).is_some())
        .map(|s| s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_on_purpose_are_not_leaks() {
        let check = LineCheck {
            replaced: vec![b"my-tool-name".to_vec()],
            kept: vec![(2, 16)],
            masked: vec![],
        };
        assert_eq!(residual(b"{\"my-tool-name\"}", &check, &[]), None);
        assert_eq!(
            residual(b"{\"x\":\"my-tool-name\"}", &check, &[]),
            Some(&b"my-tool-name"[..])
        );
        let secrets = vec!["hunter2hunter2".to_string()];
        assert_eq!(
            residual(
                b"{\"id\":\"hunter2hunter2\"}",
                &LineCheck::default(),
                &secrets
            ),
            Some(&b"hunter2hunter2"[..])
        );
    }
}
