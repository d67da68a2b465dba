//! pi-sessions' cache: each file's description ([`FileMeta`]) but for what depends on where the
//! file was found or on the file system now (its path and place in the layout, and a project
//! read from its folder's name: both found again). A file that grew is described again whole:
//! its description counts things over the whole file (entries, leaves, the last activity) that
//! a continued pass would have to carry over, for a pass that costs as much as the reading it
//! saves only on files far larger than sessions are.
//!
//! With the description, the members of the file's `session_file` record that come from it, as
//! written ([`WrittenParts`]): a run that finds the file unchanged copies them between the
//! members it writes itself (path, place, project, the first prompt cut to `--prompt-chars`),
//! where writing them field by field was most of such a run's work.

use super::codec::{Reader, Writer};
use super::{Cache, FileKey, Lookup};
use crate::cmd::sessions::record::written_parts;
use crate::discover::describe::project_of;
use crate::discover::{
    self, FileMeta, FileReport, FileStatus, Found, ProjectCache, SessionCounts, WrittenParts,
};
use std::borrow::Cow;
use std::fs::File;

/// [`discover::describe`], answered from `store` when the file is as it was described (then
/// the description's `found` is blank: the caller puts `f` there; its text is borrowed from
/// `store`), and whether it was (`false`: the file was read). The file's key is its lookup,
/// `f.stat` ([`discover::stat_files`]); a file without one is read.
pub fn describe<'c>(
    store: &'c Cache,
    f: &Found,
    prompt: bool,
    projects: &ProjectCache,
) -> (FileReport<'c>, bool) {
    let key = match f.stat {
        Some(st) if st.is_file() => st.key,
        _ => return (discover::describe(f, prompt, projects), false),
    };
    let mut note = |m: String| super::note("pi-sessions", Some(&f.path), &m);
    let found = store.lookup(&key, &f.path, false, &mut note, |p, _| {
        decode(p, f, prompt, projects)
    });
    if let Lookup::Hit(meta) = found {
        let r = FileReport {
            meta: Some(meta),
            problem: None,
        };
        return (r, true);
    }
    let mut r = discover::describe(f, prompt, projects);
    if let (Some(m), None) = (&mut r.meta, &r.problem) {
        // Kept only when what was read is the file the key names (it did not change meanwhile).
        let file = File::open(&f.path).ok();
        let same = |file: &File| file.metadata().is_ok_and(|md| FileKey::of(&md) == key);
        if let Some(file) = file.filter(|file| m.bytes == key.size && same(file)) {
            // Written here, on the thread that read the file, for this run's output too.
            m.written = Some(written_parts(m));
            store.put(&key, &f.path, &file, (encode(m, prompt), 0), None);
        }
    }
    (r, false)
}

const STATUS: [FileStatus; 5] = FileStatus::ALL;
const MODIFIED_SOURCES: [&str; 3] = ["message", "header", "mtime"];

fn encode(m: &FileMeta<'_>, prompt: bool) -> Vec<u8> {
    let mut w = Writer::default();
    w.bool(prompt);
    w.u8(STATUS.iter().position(|s| *s == m.status).unwrap_or(0) as u8);
    w.opt_str(m.reason.as_deref());
    w.opt_str(m.session.as_deref());
    w.opt_var(m.version);
    w.u64(m.headers);
    w.opt_str(m.cwd.as_deref());
    w.opt_str(m.name.as_deref());
    w.opt_str(m.parent_session.as_deref());
    w.opt_i64(m.created);
    w.opt_i64(m.modified);
    let source = m.modified_source;
    w.opt(source, |w, s| {
        w.u8(MODIFIED_SOURCES.iter().position(|x| *x == s).unwrap_or(0) as u8)
    });
    w.u64(m.bytes);
    w.u64(m.lines);
    w.opt(m.counts.as_ref(), |w, c| {
        for v in [
            c.entries,
            c.messages,
            c.user_messages,
            c.assistant_messages,
            c.leaves,
            c.compactions,
            c.unknown_entries,
            c.unknown_roles,
        ] {
            w.u64(v);
        }
    });
    w.var(m.models.len() as u64);
    for model in &m.models {
        w.str(model);
    }
    w.u64(m.bad_lines);
    w.opt_str(m.first_prompt.as_deref());
    let parts = m.written.clone().unwrap_or_else(|| written_parts(m));
    w.bytes(&parts.bytes);
    for end in parts.ends {
        w.var(end as u64);
    }
    w.0
}

/// The description of the file found at `f` from `payload`; `None` when the payload is damaged
/// or lacks the first prompt asked for. Its text and written members are borrowed from
/// `payload`, where the cache holds them.
fn decode<'c>(
    payload: &'c [u8],
    f: &Found,
    prompt: bool,
    projects: &ProjectCache,
) -> Option<FileMeta<'c>> {
    let text = |r: &mut Reader<'c>| r.opt(Reader::str).map(|s| s.map(Cow::Borrowed));
    let mut r = Reader::new(payload);
    let has_prompt = r.bool()?;
    if prompt && !has_prompt {
        return None;
    }
    let status = *STATUS.get(usize::from(r.u8()?))?;
    let reason = text(&mut r)?;
    let session = text(&mut r)?;
    let version = r.opt_var()?;
    let headers = r.u64()?;
    let cwd = r.opt(Reader::str)?;
    let name = text(&mut r)?;
    let parent_session = text(&mut r)?;
    let created = r.opt_i64()?;
    let modified = r.opt_i64()?;
    let modified_source = r.opt(|r| MODIFIED_SOURCES.get(usize::from(r.u8()?)).copied())?;
    let (bytes, lines) = (r.u64()?, r.u64()?);
    let counts = r.opt(|r| {
        Some(SessionCounts {
            entries: r.u64()?,
            messages: r.u64()?,
            user_messages: r.u64()?,
            assistant_messages: r.u64()?,
            leaves: r.u64()?,
            compactions: r.u64()?,
            unknown_entries: r.u64()?,
            unknown_roles: r.u64()?,
        })
    })?;
    let n = r.count(1)?;
    let models = (0..n)
        .map(|_| r.str().map(Cow::Borrowed))
        .collect::<Option<Vec<_>>>()?;
    let bad_lines = r.u64()?;
    let first_prompt = text(&mut r)?.filter(|_| prompt);
    let written = r.bytes()?;
    let ends = [r.var()?, r.var()?].map(|e| usize::try_from(e).unwrap_or(usize::MAX));
    if ends[0] > ends[1] || ends[1] > written.len() {
        return None;
    }
    if !r.is_empty() {
        return None;
    }
    let (project, project_source) = project_of(cwd, f, projects).unzip();
    Some(FileMeta {
        // The caller's to fill in (pi-sessions moves each file's own in: a copy of every path
        // found was a tenth of what describing it from the cache cost).
        found: Found {
            path: std::path::PathBuf::new(),
            parent_file: None,
            project_folder: None,
            role: f.role,
            stat: None,
        },
        status,
        reason,
        session,
        version,
        headers,
        cwd: cwd.map(Cow::Borrowed),
        project,
        project_source,
        name,
        parent_session,
        created,
        modified,
        modified_source,
        bytes,
        lines,
        counts,
        models,
        bad_lines,
        first_prompt,
        written: Some(WrittenParts {
            bytes: Cow::Borrowed(written),
            ends,
        }),
    })
}
