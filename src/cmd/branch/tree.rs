//! `pi-branch --tree`: a session tree drawn for a person.
//!
//! Each line is one entry: `●` on the active branch, `○` elsewhere, its id, a short description
//! and its label. Branch points open `├─`/`└─` children (in file order); linear runs longer
//! than `--fold` lose their uninteresting middle to a `… N entries …` line. Text from the
//! session is cut short and its control characters escaped.

use super::{Payload, Session, Tree, BAD, NONE};
use crate::diag::{sanitize, Diags};
use crate::json;
use crate::model::{content_text, truncate_chars};
use crate::output::{Out, Stop};

const TEXT_CHARS: usize = 60;

pub(crate) fn draw(
    out: &mut Out,
    s: &Session,
    t: &Tree,
    p: &Payload,
    fold: usize,
    d: &mut Diags,
) -> Result<(), Stop> {
    let n = s.nodes.len();
    let linear = s.version < 2;
    let parent = |i: usize| -> u32 {
        if linear {
            if i == 0 {
                NONE
            } else {
                i as u32 - 1
            }
        } else {
            t.parent_of[i]
        }
    };
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in 0..n {
        match parent(i) {
            NONE => roots.push(i as u32),
            p => children[p as usize].push(i as u32),
        }
    }
    let leaves = (0..n).filter(|&i| children[i].is_empty()).count();
    let kept = t.kept.len();
    let head = format!(
        "session {} (v{}): {n} entries, {leaves} {}, {kept} on the active branch",
        sanitize(&s.id),
        s.version,
        if leaves == 1 { "leaf" } else { "leaves" }
    );
    out.line(head.as_bytes())?;
    let mut visited = vec![false; n];
    let mut buf = Vec::new();
    let mut stack: Vec<(u32, String, String)> = roots
        .iter()
        .rev()
        .map(|&r| (r, String::new(), String::new()))
        .collect();
    let mut next_unvisited = 0;
    loop {
        let Some((start, first, cont)) = stack.pop() else {
            // Entries no root reaches sit in a parentId cycle: draw them from their first.
            while next_unvisited < n && visited[next_unvisited] {
                next_unvisited += 1;
            }
            if next_unvisited == n {
                break;
            }
            out.line("(entries in a parentId cycle:)".as_bytes())?;
            stack.push((next_unvisited as u32, String::new(), String::new()));
            continue;
        };
        // The linear run from `start`.
        let mut run = vec![start];
        visited[start as usize] = true;
        loop {
            let last = *run.last().unwrap() as usize;
            match children[last].as_slice() {
                [only] if !visited[*only as usize] => {
                    visited[*only as usize] = true;
                    run.push(*only);
                }
                _ => break,
            }
        }
        let interesting = |k: usize| {
            let i = run[k] as usize;
            k == 0
                || k + 1 == run.len()
                || s.labels.contains_key(&s.nodes[i].id)
                || Some(run[k]) == t.leaf
        };
        let mut k = 0;
        while k < run.len() {
            let prefix = if k == 0 { &first } else { &cont };
            if fold > 0 && !interesting(k) {
                let end = (k..run.len())
                    .find(|&j| interesting(j))
                    .unwrap_or(run.len());
                if end - k > fold {
                    let mark = if t.on_chain[run[k] as usize] {
                        '●'
                    } else {
                        '○'
                    };
                    out.line(format!("{prefix}{mark} … {} entries …", end - k).as_bytes())?;
                    k = end;
                    continue;
                }
            }
            let i = run[k] as usize;
            let line = describe_node(s, t, p, i, children[i].is_empty(), &mut buf, d);
            out.line(format!("{prefix}{line}").as_bytes())?;
            k += 1;
        }
        let last = *run.last().unwrap() as usize;
        let kids: Vec<u32> = children[last]
            .iter()
            .copied()
            .filter(|&c| !visited[c as usize])
            .collect();
        for (j, &c) in kids.iter().enumerate().rev() {
            let is_last = j + 1 == kids.len();
            let f = format!("{cont}{}", if is_last { "└─" } else { "├─" });
            let c2 = format!("{cont}{}", if is_last { "  " } else { "│ " });
            stack.push((c, f, c2));
        }
    }
    Ok(())
}

fn describe_node(
    s: &Session,
    t: &Tree,
    p: &Payload,
    i: usize,
    is_leaf: bool,
    buf: &mut Vec<u8>,
    d: &mut Diags,
) -> String {
    let node = &s.nodes[i];
    let mark = if t.on_chain[i] { '●' } else { '○' };
    let id = if node.id < BAD {
        s.ids.text(node.id).to_string()
    } else {
        format!("line {}", node.line())
    };
    let what = if p.line(node, buf, d) {
        describe(buf)
    } else {
        "(unreadable)".into()
    };
    let mut line = format!("{mark} {} {}", sanitize(&id), sanitize(&what));
    if let Some((label, _)) = s.labels.get(&node.id).filter(|_| node.id < BAD) {
        line.push_str(&format!(" [{}]", sanitize(label)));
    }
    if t.leaf == Some(i as u32) {
        line.push_str("  ← leaf (active)");
    } else if is_leaf {
        line.push_str("  ← leaf");
    }
    line
}

/// A few words saying what an entry is.
fn describe(line: &[u8]) -> String {
    let get = |k: &str| json::get(line, k);
    let s = |raw: Option<&[u8]>| {
        raw.and_then(json::as_str)
            .map(|c| c.into_owned())
            .unwrap_or_default()
    };
    let kind = s(get("type"));
    match kind.as_str() {
        "message" => {
            let msg = get("message").unwrap_or(b"{}");
            let role = s(json::get(msg, "role"));
            match role.as_str() {
                "user" | "custom" => {
                    let text = json::get(msg, "content")
                        .and_then(content_text)
                        .unwrap_or_default();
                    format!("{role}: {}", quote(&text))
                }
                "assistant" => {
                    let mut tools = Vec::new();
                    if let Some(c) = json::get(msg, "content") {
                        json::for_each_element(c, |b| {
                            if json::get(b, "type") == Some(b"\"toolCall\"") {
                                tools.push(s(json::get(b, "name")));
                            }
                        });
                    }
                    let text = json::get(msg, "content")
                        .and_then(content_text)
                        .unwrap_or_default();
                    let mut out = "assistant".to_string();
                    if !text.trim().is_empty() {
                        out.push_str(&format!(": {}", quote(&text)));
                    }
                    if !tools.is_empty() {
                        out.push_str(&format!(" → {}", tools.join(", ")));
                    }
                    let stop = s(json::get(msg, "stopReason"));
                    if stop == "error" || stop == "aborted" || stop == "length" {
                        out.push_str(&format!(" ({stop})"));
                    }
                    out
                }
                "toolResult" => {
                    let err = json::get(msg, "isError") == Some(b"true");
                    format!(
                        "toolResult {}{}",
                        s(json::get(msg, "toolName")),
                        if err { " (error)" } else { "" }
                    )
                }
                "bashExecution" => format!(
                    "!{}",
                    truncate_chars(&s(json::get(msg, "command")), TEXT_CHARS)
                ),
                other => format!("message ({other})"),
            }
        }
        "compaction" => match get("tokensBefore").and_then(json::as_u64) {
            Some(n) => format!("compaction ({n} tokens before)"),
            None => "compaction".into(),
        },
        "model_change" => format!("model_change {}", s(get("modelId").or(get("model")))),
        "label" => format!("label {:?}", s(get("label"))),
        "" => "(no type)".into(),
        other => other.to_string(),
    }
}

fn quote(text: &str) -> String {
    format!("\"{}\"", truncate_chars(text, TEXT_CHARS))
}
