//! The test harness: run one of the built binaries once, with arguments, stdin and
//! environment, and assert on its status, stdout and stderr.
#![allow(dead_code)]

pub mod records;

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The directory holding the built binaries (next to the test executable's `deps/`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("target profile dir").to_path_buf()
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    root().join("fixtures").join(name)
}

/// Every `fixtures/*.jsonl` (not the folders of fixtures), sorted.
pub fn fixture_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

pub fn fixture_str(name: &str) -> String {
    fixture(name).to_string_lossy().into_owned()
}

pub fn read_fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// The shared corpus of real sessions, when it is present: `PI_JSONL_CORPUS` when set (a git
/// worktree beside the main checkout has no `../shared`), else `../shared/corpus`.
pub fn corpus() -> Option<PathBuf> {
    let p = std::env::var_os("PI_JSONL_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("..").join("shared").join("corpus"));
    p.is_dir().then_some(p)
}

/// Every file of the corpus (README excluded), sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let Some(c) = corpus() else { return vec![] };
    let mut out = vec![];
    let mut stack = vec![c];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name() != Some(OsStr::new("README.md")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every file of the corpus, or `None` with a note on stderr when the corpus is absent (a
/// corpus test then returns at once: `let Some(files) = corpus_files_or_skip() else { return };`).
pub fn corpus_files_or_skip() -> Option<Vec<PathBuf>> {
    let files = corpus_files();
    if files.is_empty() {
        eprintln!("corpus absent: skipped");
        return None;
    }
    Some(files)
}

/// docs/FORMAT.md's rule for a Pi entry (what starts a fragment when no header came before),
/// written apart from the reader's, for the corpus tests' independent models.
pub fn is_pi_entry(v: &serde_json::Value) -> bool {
    let Some(kind) = v["type"].as_str() else {
        return false;
    };
    if kind == "session" || !v["timestamp"].is_string() {
        return false;
    }
    let tree = v["id"].is_string()
        && (v["parentId"].is_string() || v["parentId"].is_null())
        && v.get("parentId").is_some();
    let v1 = match kind {
        "message" => v["message"].is_object(),
        "model_change" | "thinking_level_change" | "compaction" => true,
        _ => false,
    };
    tree || v1
}

pub struct TestCommand {
    cmd: Command,
    stdin: Option<Vec<u8>>,
}

pub fn cmd(bin: &str) -> TestCommand {
    let mut cmd = Command::new(bin_dir().join(bin));
    // Tests never read the user's sessions or models.
    cmd.env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env_remove("PI_JSONL_ASSUME_TTY");
    cmd.env("HOME", root().join("fixtures").join("no-home"));
    cmd.env("TZ", "UTC");
    TestCommand { cmd, stdin: None }
}

#[derive(Debug)]
pub struct Output {
    pub status: i32,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Output {
    pub fn out(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("stdout is UTF-8")
    }
    /// stdout parsed as JSON Lines.
    pub fn records(&self) -> Vec<serde_json::Value> {
        self.out()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }
}

impl TestCommand {
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.cmd.arg(a);
        self
    }
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, a: I) -> Self {
        self.cmd.args(a);
        self
    }
    pub fn env(mut self, k: &str, v: impl AsRef<OsStr>) -> Self {
        self.cmd.env(k, v);
        self
    }
    pub fn env_remove(mut self, k: &str) -> Self {
        self.cmd.env_remove(k);
        self
    }
    pub fn dir(mut self, d: &Path) -> Self {
        self.cmd.current_dir(d);
        self
    }
    pub fn stdin(mut self, data: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(data.into());
        self
    }

    /// Runs once and returns what happened; panics only if the process could not run or was
    /// killed by a signal (a crash is always a failure).
    pub fn run(mut self) -> Output {
        self.cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        self.cmd.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let mut child = self.cmd.spawn().expect("spawn binary (is it built?)");
        let feeder = self.stdin.take().map(|data| {
            let mut si = child.stdin.take().unwrap();
            std::thread::spawn(move || {
                let _ = si.write_all(&data);
            })
        });
        let o = child.wait_with_output().expect("wait");
        if let Some(f) = feeder {
            let _ = f.join();
        }
        let status = o
            .status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal: {:?}", o.status));
        assert_ne!(
            status,
            101,
            "panicked: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        Output {
            status,
            stdout: o.stdout,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Runs and asserts exit status 0 with nothing on stderr.
    pub fn ok(self) -> Output {
        let o = self.run();
        assert_eq!(o.status, 0, "status; stderr:\n{}", o.stderr);
        assert_eq!(o.stderr, "", "stderr should be empty");
        o
    }
}

/// A temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "pi-jsonl-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn write(&self, rel: &str, data: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, data).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
