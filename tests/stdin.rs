//! A FILE and the same bytes on stdin (docs/FORMAT.md, "Reading input"): the same records
//! and diagnostics, but for the `file` they name and what a file says of itself (an empty
//! FILE, a second header in one). Given a FILE, pi-branch and pi-tools read bytes again from
//! it by offset where stdin's are held: the fixtures as they are, and with blanks around
//! every line's record (JSON allows them).

use crate::util::*;

/// What a FILE reports that the same bytes on stdin do not.
const FILE_ONLY: [&str; 2] = [
    ": empty file: no session header",
    ": a second session header in this file; it starts a new session",
];

/// stdout and stderr of `tool` over `file`, with the file's name written as stdin's, and
/// without what only a FILE reports.
fn from_file(tool: &str, args: &[&str], file: &std::path::Path) -> (String, String) {
    let o = cmd(tool).args(args).arg(file).run();
    let name = file.to_str().unwrap();
    let as_stdin = |s: &str| {
        s.replace(&format!("\"{name}\""), "\"<stdin>\"")
            .replace(&format!(" {name}:"), " <stdin>:")
    };
    let stderr: String = (o.stderr.lines())
        .filter(|l| !FILE_ONLY.iter().any(|only| l.ends_with(only)))
        .map(|l| as_stdin(l) + "\n")
        .collect();
    (as_stdin(&String::from_utf8_lossy(&o.stdout)), stderr)
}

fn from_stdin(tool: &str, args: &[&str], bytes: &[u8]) -> (String, String) {
    let o = cmd(tool).args(args).stdin(bytes.to_vec()).run();
    (String::from_utf8_lossy(&o.stdout).into_owned(), o.stderr)
}

#[test]
fn a_file_reads_as_its_bytes_on_stdin() {
    let dir = TempDir::new("stdin-file");
    let tools: [(&str, &[&str]); 7] = [
        ("pi-branch", &[]),
        ("pi-branch", &["--info"]),
        ("pi-tools", &[]),
        ("pi-usage", &["--json"]),
        ("pi-usage", &["--calls"]),
        ("pi-compactions", &[]),
        ("pi-redact", &[]),
    ];
    let mut compared = 0;
    for path in fixture_files() {
        let plain = std::fs::read(&path).unwrap();
        // Each line's record with blanks before and after it (a line of nothing stays so).
        let mut spaced = Vec::new();
        for line in plain.split_inclusive(|&b| b == b'\n') {
            let (body, eol) = match line.strip_suffix(b"\n") {
                Some(body) => (body, &b"\n"[..]),
                None => (line, &b""[..]),
            };
            if !body.is_empty() {
                spaced.extend_from_slice(b" \t");
                spaced.extend_from_slice(body);
                spaced.extend_from_slice(b"\t ");
            }
            spaced.extend_from_slice(eol);
        }
        let name = path.file_name().unwrap().to_str().unwrap();
        let copy = dir.write(&format!("spaced-{name}"), &spaced);
        for (file, bytes) in [(&path, &plain), (&copy, &spaced)] {
            for (tool, args) in tools {
                let got = from_file(tool, args, file);
                assert_eq!(
                    got,
                    from_stdin(tool, args, bytes),
                    "{tool} {args:?} {}",
                    file.display()
                );
                compared += usize::from(!got.0.is_empty());
            }
        }
    }
    assert!(compared > 1000, "{compared}");
}
