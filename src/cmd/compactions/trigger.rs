//! Why a compaction happened: the trigger and its basis, decided from the clues Pi leaves (a
//! trigger an extension recorded in `details`, the nearest assistant message before the
//! compaction, `tokensBefore` against the configured window). [`infer_trigger`] is the whole
//! decision, a pure function of those clues.

use crate::json::Raw;
use std::rc::Rc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    Manual,
    Threshold,
    Overflow,
    Automatic,
    Unknown,
}

impl Trigger {
    /// Every trigger, in the order of the variants (the `--table` counts' order).
    pub const ALL: [Trigger; 5] = [
        Trigger::Manual,
        Trigger::Threshold,
        Trigger::Overflow,
        Trigger::Automatic,
        Trigger::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Trigger::Manual => "manual",
            Trigger::Threshold => "threshold",
            Trigger::Overflow => "overflow",
            Trigger::Automatic => "automatic",
            Trigger::Unknown => "unknown",
        }
    }

    /// Its place in [`Trigger::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// A trigger an extension recorded in `details` (case-insensitive).
    fn from_recorded(s: &str) -> Option<Trigger> {
        match s.trim().to_ascii_lowercase().as_str() {
            "manual" => Some(Trigger::Manual),
            "threshold" => Some(Trigger::Threshold),
            "overflow" => Some(Trigger::Overflow),
            "auto" | "automatic" => Some(Trigger::Automatic),
            _ => None,
        }
    }
}

/// How the trigger is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Basis {
    Recorded,
    Inferred,
    Unknown,
}

impl Basis {
    /// Every basis, in the order of the variants.
    pub const ALL: [Basis; 3] = [Basis::Recorded, Basis::Inferred, Basis::Unknown];

    pub fn name(self) -> &'static str {
        match self {
            Basis::Recorded => "recorded",
            Basis::Inferred => "inferred",
            Basis::Unknown => "unknown",
        }
    }

    /// Its place in [`Basis::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// An assistant message's `stopReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Other,
}

impl StopReason {
    pub fn of(s: Option<&str>) -> StopReason {
        match s {
            Some("stop") => StopReason::Stop,
            Some("length") => StopReason::Length,
            Some("toolUse") => StopReason::ToolUse,
            Some("error") => StopReason::Error,
            Some("aborted") => StopReason::Aborted,
            _ => StopReason::Other,
        }
    }
}

/// What is kept of an assistant message: the clues it can give about a compaction after it.
#[derive(Debug, Clone)]
pub(super) struct AssistantFacts {
    pub line: u64,
    pub id: Option<Rc<str>>,
    pub stop: StopReason,
    /// stopReason error with an error text that says the context was too long.
    pub overflow: bool,
}

/// One clue that decided, or supports, a trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Evidence {
    pub rule: &'static str,
    /// The line the clue is on, and that entry's id.
    pub line: u64,
    pub entry: Option<Box<str>>,
    /// The clue in words: fixed text and numbers, never session text.
    pub detail: String,
}

/// A trigger recorded in a compaction's `details`, and the member that says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Recorded {
    pub key: &'static str,
    pub trigger: Trigger,
}

/// The trigger a compaction's `details` object records: its `trigger`, else its `reason`, when
/// that is a trigger's name.
pub(super) fn recorded_trigger(details: Raw<'_>) -> Option<Recorded> {
    ["trigger", "reason"].into_iter().find_map(|key| {
        details
            .get(key)
            .and_then(Raw::as_str)
            .and_then(|v| Trigger::from_recorded(&v))
            .map(|trigger| Recorded { key, trigger })
    })
}

/// What is known about a compaction when its trigger is decided.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clues<'a> {
    /// The compaction's line and id.
    pub line: u64,
    pub entry: Option<&'a str>,
    /// A trigger its `details` record.
    pub recorded: Option<Recorded>,
    /// The nearest assistant message before it, with no user message or compaction between.
    pub nearest: Option<&'a AssistantFacts>,
    /// The context window of the model in effect, when configured.
    pub window: Option<u64>,
    pub tokens_before: Option<u64>,
    /// Pi's compaction reserve.
    pub reserve: u64,
    /// `fromHook` as recorded.
    pub from_hook: Option<bool>,
}

/// The trigger of a compaction, how it is known, and every rule that applied, strongest first:
/// a recorded trigger decides; else the first of overflow_error, over_threshold and
/// length_stop; else it is unknown. from_hook is listed but decides nothing.
pub(super) fn infer_trigger(c: &Clues<'_>) -> (Trigger, Basis, Vec<Evidence>) {
    let here = |rule, detail| Evidence {
        rule,
        line: c.line,
        entry: c.entry.map(Into::into),
        detail,
    };
    let at_nearest = |a: &AssistantFacts, rule, detail: &str| Evidence {
        rule,
        line: a.line,
        entry: a.id.as_deref().map(Into::into),
        detail: detail.into(),
    };
    let mut evidence = Vec::new();
    if let Some(r) = c.recorded {
        evidence.push(here(
            "recorded",
            format!("details.{} says {}", r.key, r.trigger.name()),
        ));
    }
    let mut inferred = None;
    if let Some(a) = c.nearest.filter(|a| a.overflow) {
        inferred.get_or_insert(Trigger::Overflow);
        evidence.push(at_nearest(
            a,
            "overflow_error",
            "the assistant message right before ended with stopReason error: the context was too long",
        ));
    }
    if let (Some(w), Some(t)) = (c.window, c.tokens_before) {
        // In 128 bits: the counts are u64 and the limit may be negative.
        let limit = i128::from(w) - i128::from(c.reserve);
        if i128::from(t) > limit {
            inferred.get_or_insert(Trigger::Threshold);
            evidence.push(here(
                "over_threshold",
                format!(
                    "tokensBefore {t} > context window {w} - reserve {} = {limit}",
                    c.reserve
                ),
            ));
        }
    }
    if let Some(a) = c.nearest.filter(|a| a.stop == StopReason::Length) {
        inferred.get_or_insert(Trigger::Automatic);
        evidence.push(at_nearest(
            a,
            "length_stop",
            "the assistant message right before ended with stopReason length",
        ));
    }
    if c.from_hook == Some(true) {
        evidence.push(here(
            "from_hook",
            "written by an extension (fromHook: true)".into(),
        ));
    }
    let (trigger, basis) = match (c.recorded, inferred) {
        (Some(r), _) => (r.trigger, Basis::Recorded),
        (None, Some(t)) => (t, Basis::Inferred),
        (None, None) => (Trigger::Unknown, Basis::Unknown),
    };
    (trigger, basis, evidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clues() -> Clues<'static> {
        Clues {
            line: 10,
            entry: Some("c1"),
            recorded: None,
            nearest: None,
            window: None,
            tokens_before: None,
            reserve: 16384,
            from_hook: None,
        }
    }

    fn assistant(stop: StopReason, overflow: bool) -> AssistantFacts {
        AssistantFacts {
            line: 9,
            id: Some(Rc::from("a1")),
            stop,
            overflow,
        }
    }

    /// The trigger, basis and the rules of the evidence.
    fn verdict(c: &Clues<'_>) -> (Trigger, Basis, Vec<&'static str>) {
        let (t, b, e) = infer_trigger(c);
        (t, b, e.iter().map(|e| e.rule).collect())
    }

    #[test]
    fn without_clues_the_trigger_is_unknown() {
        assert_eq!(
            verdict(&clues()),
            (Trigger::Unknown, Basis::Unknown, vec![])
        );
        let near = assistant(StopReason::Stop, false);
        let c = Clues {
            nearest: Some(&near),
            tokens_before: Some(100_000),
            ..clues()
        };
        assert_eq!(
            verdict(&c),
            (Trigger::Unknown, Basis::Unknown, vec![]),
            "no window: being near a limit is never enough"
        );
    }

    #[test]
    fn a_recorded_trigger_decides_and_the_rules_are_still_listed() {
        let near = assistant(StopReason::Error, true);
        let c = Clues {
            recorded: Some(Recorded {
                key: "reason",
                trigger: Trigger::Manual,
            }),
            nearest: Some(&near),
            ..clues()
        };
        let (t, b, e) = infer_trigger(&c);
        assert_eq!((t, b), (Trigger::Manual, Basis::Recorded));
        assert_eq!(
            e[0],
            Evidence {
                rule: "recorded",
                line: 10,
                entry: Some("c1".into()),
                detail: "details.reason says manual".into()
            }
        );
        assert_eq!(
            (e[1].rule, e[1].line, e[1].entry.as_deref()),
            ("overflow_error", 9, Some("a1"))
        );
    }

    #[test]
    fn the_strongest_inferred_rule_decides() {
        let overflow = assistant(StopReason::Error, true);
        let length = assistant(StopReason::Length, false);
        let over = Clues {
            window: Some(200_000),
            tokens_before: Some(190_000),
            ..clues()
        };
        assert_eq!(
            verdict(&Clues {
                nearest: Some(&overflow),
                ..over
            }),
            (
                Trigger::Overflow,
                Basis::Inferred,
                vec!["overflow_error", "over_threshold"]
            )
        );
        assert_eq!(
            verdict(&Clues {
                nearest: Some(&length),
                ..over
            }),
            (
                Trigger::Threshold,
                Basis::Inferred,
                vec!["over_threshold", "length_stop"]
            )
        );
        assert_eq!(
            verdict(&Clues {
                nearest: Some(&length),
                ..clues()
            }),
            (Trigger::Automatic, Basis::Inferred, vec!["length_stop"])
        );
    }

    #[test]
    fn over_threshold_means_strictly_greater_than_window_minus_reserve() {
        let at = |t: u64, w: u64| Clues {
            window: Some(w),
            tokens_before: Some(t),
            ..clues()
        };
        assert_eq!(verdict(&at(183_616, 200_000)).0, Trigger::Unknown);
        let (t, _, e) = infer_trigger(&at(183_617, 200_000));
        assert_eq!(t, Trigger::Threshold);
        assert_eq!(
            e[0].detail,
            "tokensBefore 183617 > context window 200000 - reserve 16384 = 183616"
        );
        let (_, _, e) = infer_trigger(&at(0, 1000));
        assert_eq!(
            e[0].detail, "tokensBefore 0 > context window 1000 - reserve 16384 = -15384",
            "a window smaller than the reserve"
        );
    }

    #[test]
    fn from_hook_is_evidence_but_no_trigger() {
        let c = Clues {
            from_hook: Some(true),
            ..clues()
        };
        assert_eq!(
            verdict(&c),
            (Trigger::Unknown, Basis::Unknown, vec!["from_hook"])
        );
    }

    #[test]
    fn recorded_triggers_are_read_from_trigger_then_reason() {
        let r = |d: &str| recorded_trigger(crate::json::validate(d.as_bytes()).unwrap());
        assert_eq!(
            r(r#"{"reason":"Overflow","trigger":"auto"}"#),
            Some(Recorded {
                key: "trigger",
                trigger: Trigger::Automatic
            })
        );
        assert_eq!(
            r(r#"{"trigger":"why not","reason":" THRESHOLD "}"#),
            Some(Recorded {
                key: "reason",
                trigger: Trigger::Threshold
            })
        );
        assert_eq!(r(r#"{"trigger":3}"#), None);
    }

    #[test]
    fn indexes_follow_all() {
        assert!(Trigger::ALL.iter().enumerate().all(|(i, t)| t.index() == i));
        assert!(Basis::ALL.iter().enumerate().all(|(i, b)| b.index() == i));
    }
}
