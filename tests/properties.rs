//! Property tests on generated session trees and streams.

use clap::Parser;
use pi_jsonl::cmd::branch;
use pi_jsonl::diag::Diags;
use pi_jsonl::output::Out;
use pi_jsonl::tool::Tool;
use proptest::prelude::*;

/// One generated entry: its id (None = id-less), its parent (an index into earlier entries, a
/// dangling id, or none) and its type.
#[derive(Debug, Clone)]
enum Parent {
    Root,
    Earlier(usize),
    Dangling,
    /// Any entry, later ones and itself included (cycles).
    Any(usize),
}

#[derive(Debug, Clone)]
struct Gen {
    has_id: bool,
    dup_of: Option<usize>,
    parent: Parent,
    kind: u8,
}

fn entries(max: usize, wild: bool) -> impl Strategy<Value = Vec<Gen>> {
    prop::collection::vec(
        (
            any::<bool>(),
            any::<u8>(),
            any::<u8>(),
            0usize..1000,
            any::<u8>(),
        ),
        1..max,
    )
    .prop_map(move |raw| {
        raw.into_iter()
            .enumerate()
            .map(|(i, (idless, dupr, pr, pick, kind))| {
                let has_id = !(wild && idless && pr % 5 == 0);
                let dup_of = (wild && i > 0 && dupr % 11 == 0).then(|| pick % i);
                let parent = if i == 0 || pr % 13 == 0 {
                    Parent::Root
                } else if wild && pr % 17 == 1 {
                    Parent::Dangling
                } else if wild && pr % 19 == 2 {
                    Parent::Any(pick)
                } else {
                    // Mostly the previous entry (long chains), sometimes an earlier one (branches).
                    Parent::Earlier(if pr % 3 == 0 { pick % i } else { i - 1 })
                };
                Gen {
                    has_id,
                    dup_of,
                    parent,
                    kind,
                }
            })
            .collect()
    })
}

fn render(session: &str, gens: &[Gen]) -> String {
    let id = |i: usize| match gens[i].dup_of {
        Some(j) => format!("e{j}"),
        None => format!("e{i}"),
    };
    let mut s = format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{session}\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/p\"}}\n");
    for (i, g) in gens.iter().enumerate() {
        let parent = match g.parent {
            Parent::Root => "null".to_string(),
            Parent::Earlier(j) => format!("\"{}\"", id(j)),
            Parent::Dangling => "\"gone\"".to_string(),
            Parent::Any(j) => format!("\"{}\"", id(j % gens.len())),
        };
        let idf = if g.has_id {
            format!("\"id\":\"{}\",", id(i))
        } else {
            String::new()
        };
        let body = match g.kind % 3 {
            0 => format!("\"type\":\"message\",{idf}\"parentId\":{parent},\"message\":{{\"role\":\"user\",\"content\":\"m{i} é\\n\"}}"),
            1 => format!("\"type\":\"custom\",{idf}\"parentId\":{parent},\"data\":{{\"n\":{i}}}"),
            _ => format!("\"type\":\"label\",{idf}\"parentId\":{parent},\"targetId\":\"e0\",\"label\":\"l{i}\""),
        };
        s.push('{');
        s.push_str(&body);
        s.push_str("}\n");
    }
    s
}

fn branch_of(args: &[&str], input: &[u8]) -> (Vec<u8>, String) {
    let mut argv = vec!["pi-branch"];
    argv.extend_from_slice(args);
    let a = branch::Args::try_parse_from(argv).unwrap();
    let mut out = Out::held();
    let mut d = Diags::new("pi-branch", "<stdin>", false);
    branch::Branch::run_bytes(&a, input, &mut out, &mut d).unwrap();
    (out.buf, d.held().to_string())
}

fn lines(b: &[u8]) -> Vec<&[u8]> {
    b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).collect()
}

fn field(line: &[u8], k: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    v.get(k).and_then(|x| x.as_str()).map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Well-formed trees: the output is the header and a parent chain from a root to the last
    /// entry, made of input lines.
    #[test]
    fn output_is_the_chain_from_a_root_to_the_last_entry(gens in entries(80, false)) {
        let input = render("s", &gens);
        let (out, diags) = branch_of(&[], input.as_bytes());
        prop_assert_eq!(diags, "");
        let inl = lines(input.as_bytes());
        let outl = lines(&out);
        prop_assert_eq!(outl[0], inl[0]);
        prop_assert_eq!(*outl.last().unwrap(), *inl.last().unwrap());
        prop_assert_eq!(field(outl[1], "parentId"), None);
        for w in outl[1..].windows(2) {
            prop_assert_eq!(field(w[1], "parentId"), field(w[0], "id"));
        }
        for l in &outl {
            prop_assert!(inl.contains(l));
        }
    }

    /// Any tree, malformed ones included: it terminates, every output line is an input line,
    /// kept + omitted = entries, and pi-branch | pi-branch = pi-branch.
    #[test]
    fn any_tree_is_handled_and_branch_is_idempotent(gens in entries(60, true)) {
        let input = render("s", &gens);
        let (out, _) = branch_of(&[], input.as_bytes());
        let inl = lines(input.as_bytes());
        for l in lines(&out) {
            prop_assert!(inl.contains(&l));
        }
        let (again, _) = branch_of(&[], &out);
        prop_assert_eq!(&again, &out);
        let (info, _) = branch_of(&["--info"], input.as_bytes());
        let r: serde_json::Value = serde_json::from_slice(&info).unwrap();
        prop_assert_eq!(r["kept"].as_u64().unwrap() + r["omitted"].as_u64().unwrap(), gens.len() as u64);
        prop_assert_eq!(r["kept"].as_u64().unwrap() as usize, lines(&out).len() - 1);
    }

    /// Splitting a stream at session headers and concatenating the outputs changes nothing.
    #[test]
    fn sessions_in_one_stream_are_independent(a in entries(30, true), b in entries(30, true)) {
        let (sa, sb) = (render("a", &a), render("b", &b));
        let (oa, _) = branch_of(&[], sa.as_bytes());
        let (ob, _) = branch_of(&[], sb.as_bytes());
        let (both, _) = branch_of(&[], format!("{sa}{sb}").as_bytes());
        prop_assert_eq!(both, [oa, ob].concat());
    }

    /// No input makes the reader or pi-branch panic or hang.
    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..2000)) {
        for args in [&[][..], &["--info"][..], &["--leaves"][..], &["--tree"][..]] {
            let _ = branch_of(args, &data);
        }
    }
}
