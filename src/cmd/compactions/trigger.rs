//! Why a compaction happened: the trigger and its basis, decided from the clues Pi leaves (a
//! trigger an extension recorded in `details`; what lies before the compaction on its branch:
//! the nearest reply, a context_edit hiding it, a tool result, a model change; an earlier
//! reply over the threshold left uncompacted; `tokensBefore` against the configured window).
//! Pi 0.73.1 and Pi 1.x files have rules of their own (docs/FORMAT.md, "How the trigger is
//! inferred"). [`infer_trigger`] is the decision, a pure function of those clues;
//! [`settle_continuation`] finishes it once the message after the compaction is known.

use super::session::EntryId;
use crate::json::Raw;

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
    /// The stop reason written `s` (text as bytes, [`super::read::name_of`]).
    pub fn of(s: Option<&[u8]>) -> StopReason {
        match s {
            Some(b"stop") => StopReason::Stop,
            Some(b"length") => StopReason::Length,
            Some(b"toolUse") => StopReason::ToolUse,
            Some(b"error") => StopReason::Error,
            Some(b"aborted") => StopReason::Aborted,
            _ => StopReason::Other,
        }
    }
}

/// What is kept of an assistant message: the clues it can give about a compaction after it.
#[derive(Debug, Clone)]
pub(super) struct AssistantFacts {
    pub line: u64,
    pub id: Option<EntryId>,
    pub stop: StopReason,
    /// stopReason error with an error text that Pi 0.73.1 takes for a context overflow (its
    /// patterns alone: what Pi 0.73.1 recovers from).
    pub overflow: bool,
    /// The same by Pi 1.6.0's patterns alone (what Pi 1.6.0 recovers from).
    pub overflow_pi16: bool,
    /// The model of the message (its index in the session's models, `session::ModelIx`).
    pub model: u32,
    pub usage: ReplyUsage,
}

/// The token counts of an assistant message's `usage` (0 where absent or not a count).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ReplyUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total_tokens: u64,
}

impl ReplyUsage {
    /// The context size Pi 1.6.0 compares with the threshold (`calculateContextTokens`):
    /// `totalTokens`, or when that is 0 the sum of the four counts.
    pub fn pi_context(&self) -> u128 {
        if self.total_tokens > 0 {
            self.total_tokens.into()
        } else {
            [self.input, self.output, self.cache_read, self.cache_write]
                .iter()
                .map(|&n| u128::from(n))
                .sum()
        }
    }

    /// `input + cacheRead`: what pi-ai's silent-overflow check compares with the window.
    pub fn input_read(&self) -> u128 {
        u128::from(self.input) + u128::from(self.cache_read)
    }
}

/// An entry a clue is on: its line and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Place {
    pub line: u64,
    pub id: Option<EntryId>,
}

/// What lies on a compaction's parent chain before it, back to the nearest assistant message
/// (the walk stops at a user message or another compaction).
#[derive(Debug, Clone, Default)]
pub(super) struct Before {
    pub assistant: Option<AssistantFacts>,
    /// The context_edit with replacement null on the way that hides that message.
    pub hidden_by: Option<Place>,
    /// Whether any context_edit lies between it and the compaction.
    pub edited: bool,
    /// Whether a model_change lies between it and the compaction.
    pub model_changed: bool,
    /// The first message met walking back, when it is a tool result: the compaction came in
    /// the middle of a run.
    pub tool_result: Option<Place>,
    /// Only the nearest assistant message is known (file order stood in for the chain): what
    /// lies between is not, so no rule may rest on the absence of a clue.
    pub partial: bool,
}

/// Nothing but model changes and settings (thinking_level_change, label, session_info), one at
/// least, lies on a compaction's parent chain back to the previous compaction or the branch's
/// first entry: no message, so no reply since the latest compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Quiet {
    /// The previous compaction; none when the chain goes back to the branch's first entry.
    pub previous: Option<Place>,
}

/// Evidence that auto-compaction did not run when the context was over the threshold: a reply
/// over it, followed on the branch by the next request to the model (a prompt, or the next
/// reply of the same run) with no compaction between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Uncompacted {
    pub reply: Place,
    pub context: u128,
    pub limit: i128,
    /// The next request: the prompt, or the next reply.
    pub next: Place,
}

/// A compaction earlier in the session (in file order, which is the order Pi wrote) that only
/// Pi's automatic compaction makes: one in the middle of a run that went on (`mid_run`), or an
/// overflow recovery that retried the failed turn. Auto-compaction was on then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AutoOn {
    pub at: Place,
    /// The rule that showed that compaction automatic.
    pub rule: &'static str,
}

impl AutoOn {
    fn evidence(&self) -> Evidence {
        Evidence::at(
            &self.at,
            "auto_compaction_on",
            format!(
                "this earlier compaction was automatic (rule {}) and nothing since shows auto-compaction off: it was on then, so the compaction was most likely Pi's; still, /compact after Pi's own attempt failed, or with auto-compaction turned off since, looks the same",
                self.rule
            ),
        )
    }
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

impl Evidence {
    fn at(place: &Place, rule: &'static str, detail: impl Into<String>) -> Evidence {
        Evidence {
            rule,
            line: place.line,
            entry: place.id.as_ref().map(|i| i.text().into()),
            detail: detail.into(),
        }
    }
}

impl AssistantFacts {
    fn place(&self) -> Place {
        Place {
            line: self.line,
            id: self.id.clone(),
        }
    }
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
    /// What lies before it on its parent chain.
    pub before: &'a Before,
    /// Written by Pi 1.x (the compaction has `systemMessage` or `usage`, or the session has a
    /// system message, a context_edit or a usage entry): Pi 1.6.0's rules apply.
    pub pi1: bool,
    /// The nearest assistant message is of the model in effect at the compaction.
    pub same_model: bool,
    /// The context window of the model in effect, when configured.
    pub window: Option<u64>,
    pub tokens_before: Option<u64>,
    /// Pi's compaction reserve; none when the setting Pi would use is invalid.
    pub reserve: Option<u64>,
    /// The settings.json key the reserve came from, when it did: today's settings are assumed
    /// to be those Pi had (rule settings_assumed).
    pub reserve_key: Option<&'a str>,
    /// `fromHook` (or oh-my-pi's `fromExtension`) as recorded, and which of the two it is.
    pub from_hook: Option<bool>,
    pub from_hook_key: &'a str,
    /// Pi 1.x: an earlier reply over the threshold that was not compacted (see [`Uncompacted`]).
    pub uncompacted: Option<&'a Uncompacted>,
    /// Pi 1.x: the latest compaction that shows auto-compaction on, when nothing since shows
    /// it off (see [`AutoOn`]).
    pub auto_on: Option<&'a AutoOn>,
    /// Pi 0.73.1: no message on the chain since the previous compaction or the branch's start
    /// (see [`Quiet`]).
    pub quiet: Option<&'a Quiet>,
    /// A field of the compaction entry that only oh-my-pi writes (`tokensAfter`, which every
    /// compaction it writes has, `method`, ...), when it has one: Pi's rules do not apply.
    pub oh_my_pi: Option<&'a str>,
}

impl Clues<'_> {
    fn here(&self, rule: &'static str, detail: String) -> Evidence {
        Evidence {
            rule,
            line: self.line,
            entry: self.entry.map(Into::into),
            detail,
        }
    }

    /// `window - reserve` (in 128 bits: the counts are u64 and the limit may be negative).
    fn limit(&self) -> Option<(u64, i128)> {
        let r = self.reserve?;
        self.window.map(|w| (w, i128::from(w) - i128::from(r)))
    }

    /// The reserve, once [`Clues::limit`] has found it.
    fn reserve(&self) -> u64 {
        self.reserve.unwrap_or_default()
    }

    /// The over_threshold clue, when tokensBefore is over the limit.
    fn over_threshold(&self) -> Option<Evidence> {
        let ((w, limit), t) = (self.limit()?, self.tokens_before?);
        (i128::from(t) > limit).then(|| {
            self.here(
                "over_threshold",
                format!(
                    "tokensBefore {t} > context window {w} - reserve {} = {limit}",
                    self.reserve()
                ),
            )
        })
    }
}

/// The trigger of a compaction, how it is known, and every rule that applied, strongest first:
/// a recorded trigger decides; else the rules of the Pi that wrote it ([`pi1_rules`] or
/// [`pi0_rules`]), none for a compaction oh-my-pi wrote (rule oh_my_pi); else it is unknown.
/// from_hook is listed but decides nothing.
pub(super) fn infer_trigger(c: &Clues<'_>) -> (Trigger, Basis, Vec<Evidence>) {
    let mut evidence = Vec::new();
    if let Some(r) = c.recorded {
        evidence.push(c.here(
            "recorded",
            format!("details.{} says {}", r.key, r.trigger.name()),
        ));
    }
    let inferred = if let Some(field) = c.oh_my_pi {
        // oh-my-pi 18.x (pi-agent-core's shouldCompact, session-maintenance.ts): its threshold
        // is the window less the larger of 15 % of it and the reserve, unless a percentage or
        // a token count is set; it also compacts when idle and through the provider's own
        // compaction. Pi's rules would call its threshold compactions manual.
        evidence.push(c.here(
            "oh_my_pi",
            format!("written by oh-my-pi (it records {field}, which Pi does not write): it compacts by rules of its own (a lower default threshold, compaction when idle, the provider's own compaction), which Pi's rules here do not describe"),
        ));
        None
    } else if c.pi1 {
        pi1_rules(c, &mut evidence)
    } else {
        pi0_rules(c, &mut evidence)
    };
    if c.from_hook == Some(true) {
        evidence.push(c.here(
            "from_hook",
            format!("written by an extension ({}: true)", c.from_hook_key),
        ));
    }
    let on_reserve = evidence
        .iter()
        .any(|e| matches!(e.rule, "over_threshold" | "under_threshold"));
    if let (Some(key), true) = (c.reserve_key, on_reserve) {
        evidence.push(c.here(
            "settings_assumed",
            format!(
                "the reserve {} is {key} of Pi's settings.json as it is now: the settings Pi had when it wrote the session are not recorded, and a project's .pi/settings.json is not read",
                c.reserve()
            ),
        ));
    }
    let (trigger, basis) = match (c.recorded, inferred) {
        (Some(r), _) => (r.trigger, Basis::Recorded),
        (None, Some(t)) => (t, Basis::Inferred),
        (None, None) => (Trigger::Unknown, Basis::Unknown),
    };
    (trigger, basis, evidence)
}

/// Pi 0.73.1's clues, read in its `AgentSession` (`_checkCompaction`, `_runAutoCompaction`,
/// `compact`) and pi-agent-core's `Agent.continue`. Pi 0.73.1 compacts on its own only in
/// `_checkCompaction`, after a run and before a prompt (never in the middle of a run), asking
/// pi-ai's `isContextOverflow(reply, window)` first (for a reply of the model in effect) and
/// the threshold after; its compaction entry has no mark of its own, and `/compact` with
/// auto-compaction off, or after an automatic attempt failed (which writes nothing), writes the
/// same entry at the same place. So, as for Pi 1.x, the file decides only where a clue tells
/// the two apart (checked against sessions Pi 0.73.1 wrote, `truth.mjs --pi 0.73.1`):
/// - overflow_error: the reply before, of the model in effect, failed with one of 0.73.1's
///   overflow texts: Pi's recovery compacts and retries the turn (`_runAutoCompaction` with
///   `willRetry` drops the failed reply and runs `agent.continue()`), so overflow once the
///   retried reply is seen ([`settle_continuation`]: `retried`; without it `no_retry`, unknown:
///   /compact after a recovery Pi gave up, or with auto-compaction off, looks the same);
/// - silent_overflow, filled_window (`isContextOverflow`'s cases 2 and 3): Pi compacts for
///   overflow, but no retry follows (the reply stays last in the context and `Agent.continue()`
///   refuses to continue from an assistant message), so /compact after such a reply looks the
///   same: listed, never deciding;
/// - over_threshold: listed with what speaks for or against auto-compaction
///   ([`over_threshold_after_reply`]), never deciding;
/// - under_threshold: at or below the limit after a reply that is none of these, Pi's check
///   compacts nothing, so `compact()` (/compact or an extension's `ctx.compact()`);
/// - no_reply_since: no message at all since the previous compaction (or the branch's start),
///   only model changes and settings ([`Quiet`]): Pi's check runs on a reply and skips one
///   from before the latest compaction, so `compact()` (seen in the recorded runs: /compact
///   before any reply, and after a compaction and a model switch; Pi's own attempts there
///   compacted nothing). Not for an extension-written compaction (fromHook).
///
/// length_stop is listed and decides nothing: 0.73.1 has no compaction for a truncated reply.
fn pi0_rules(c: &Clues<'_>, evidence: &mut Vec<Evidence>) -> Option<Trigger> {
    let first = evidence.len();
    let mut inferred = None;
    let b = c.before;
    let nearest = b.assistant.as_ref();
    // Any sign that Pi's overflow path, not its threshold check, ran after the reply.
    let mut overflow_clue = false;
    // Pi checks for an overflow only of a reply of the model in effect when it checks (after
    // the run, or before the next prompt, so after any model change): sameModel.
    if let Some(a) = nearest.filter(|a| a.overflow) {
        let detail = if c.same_model {
            inferred = Some(Trigger::Overflow);
            overflow_clue = true;
            "the assistant message right before ended with stopReason error and an error text Pi 0.73.1 takes for a context overflow: with auto-compaction on, its recovery compacts and retries the turn at once"
        } else {
            "the assistant message right before ended with stopReason error: the context was too long, but it is of another model than the one in effect at the compaction, and Pi 0.73.1 compacts for an overflow only of the model in effect (sameModel): decides nothing"
        };
        evidence.push(Evidence::at(&a.place(), "overflow_error", detail));
    }
    // Pi asks only of a reply of the model in effect (sameModel), with that model's window.
    let unchanged = c.same_model && !b.model_changed && !b.partial;
    if let (Some(a), Some(w), true) = (nearest, c.window, unchanged) {
        let read = a.usage.input_read();
        if a.stop == StopReason::Stop && read > w.into() {
            overflow_clue = true;
            evidence.push(Evidence::at(
                &a.place(),
                "silent_overflow",
                format!(
                    "the reply before ended with stopReason stop but input + cacheRead {read} > context window {w}: with auto-compaction on Pi 0.73.1 compacts for overflow after such a reply and retries nothing, so /compact after it (auto-compaction off, or Pi's attempt failed) looks the same"
                ),
            ));
        }
        // pi-ai's `input + cacheRead >= contextWindow * 0.99`, exact in integers.
        if a.stop == StopReason::Length && a.usage.output == 0 && read * 100 >= u128::from(w) * 99 {
            overflow_clue = true;
            evidence.push(Evidence::at(
                &a.place(),
                "filled_window",
                format!(
                    "the reply before ended with stopReason length, output 0 and input + cacheRead {read} at 99% of the context window {w} or more: with auto-compaction on Pi 0.73.1 compacts for overflow after such a reply and retries nothing, so /compact after it looks the same"
                ),
            ));
        }
    }
    if inferred.is_none() {
        if let Some(e) = c.over_threshold() {
            evidence.push(e);
            over_threshold_after_reply(c, evidence);
        } else if !overflow_clue {
            inferred = pi0_under_threshold(c, evidence);
        }
    } else {
        evidence.extend(c.over_threshold());
    }
    if let Some(a) = nearest.filter(|a| a.stop == StopReason::Length) {
        evidence.push(Evidence::at(
            &a.place(),
            "length_stop",
            "the assistant message right before ended with stopReason length: Pi 0.73.1 does not compact for that (only for output 0 with the window filled, filled_window)",
        ));
    }
    if let (None, Some(q), false) = (inferred, c.quiet, c.from_hook == Some(true)) {
        let detail = |since: &str| {
            format!("no message since {since}, only model changes and settings: Pi 0.73.1 compacts on its own only when it checks a reply, and skips a reply from before the latest compaction, so /compact (or an extension's compact)")
        };
        let e = match &q.previous {
            Some(p) => Evidence::at(p, "no_reply_since", detail("this earlier compaction")),
            None => c.here("no_reply_since", detail("the start of the branch")),
        };
        evidence.insert(first, e);
        inferred = Some(Trigger::Manual);
    }
    inferred
}

/// Pi 0.73.1's under_threshold: tokensBefore at or below the limit after a reply that is no
/// overflow. Pi's check counts that reply's usage (an error reply: the estimate of the whole
/// context), tokensBefore counts the same plus the messages after it, so the check did not
/// fire. Not after an aborted reply (Pi's check before a prompt counts its usage, which
/// tokensBefore skips), nor after a reply that called tools: /compact during a run aborts it
/// after `_disconnectFromAgent()` (`AgentSession.compact`), so the aborted reply and tool
/// results of that run stay in Pi's context but never reach the file, and Pi's check before
/// the next prompt counts them (seen in the recorded run: a threshold compaction right after
/// a toolUse reply under the limit). Not for tokens an extension gave (fromHook), not where
/// file order stands in for the chain.
fn pi0_under_threshold(c: &Clues<'_>, evidence: &mut Vec<Evidence>) -> Option<Trigger> {
    let a = c.before.assistant.as_ref()?;
    let ((w, limit), t) = (c.limit()?, c.tokens_before?);
    let excluded = matches!(a.stop, StopReason::Aborted | StopReason::ToolUse)
        || c.from_hook == Some(true)
        || c.before.partial;
    if excluded || i128::from(t) > limit {
        return None;
    }
    evidence.push(c.here(
        "under_threshold",
        format!(
            "tokensBefore {t} <= context window {w} - reserve {} = {limit} after a reply that is no overflow: Pi 0.73.1 compacts on its own only on overflow or over the threshold, so /compact (or an extension's compact)",
            c.reserve()
        ),
    ));
    Some(Trigger::Manual)
}

/// Pi 1.6.0's clues (read in `AgentSession._checkCompaction`, `_runAutoCompaction` and
/// `compact`), strongest first; the first that applies decides:
/// - overflow_recovery / length_overflow: the reply before failed (an overflow error, or
///   stopReason length) and a context_edit with replacement null hides it: Pi's recovery,
///   which omits the failed reply, compacts (reason overflow) and retries;
/// - unrecovered_overflow: an overflow error of the model in effect that nothing hides: Pi
///   did not recover (auto-compaction off, or its one attempt spent), so a person compacted;
/// - silent_overflow: a stop reply whose input + cacheRead is over the window: listed, never
///   deciding (over_threshold follows);
/// - mid_run: the compaction came between a tool result and the next reply: only the
///   threshold check runs there (once the run is seen to go on, [`settle_continuation`]);
/// - over_threshold: tokensBefore > window - reserve after a reply: listed with what speaks
///   for or against auto-compaction, never deciding ([`over_threshold_after_reply`]);
/// - under_threshold: tokensBefore <= window - reserve with none of the above: no automatic
///   compaction fires there, so /compact (not for extension-written compactions).
fn pi1_rules(c: &Clues<'_>, evidence: &mut Vec<Evidence>) -> Option<Trigger> {
    let b = c.before;
    if let Some(a) = &b.assistant {
        if let Some(t) = reply_rules(c, a, evidence) {
            return Some(t);
        }
    }
    if let Some(tr) = &b.tool_result {
        evidence.push(Evidence::at(
            tr,
            "mid_run",
            "the compaction came right after this tool result, before the next reply: only Pi's threshold check compacts mid-run",
        ));
        evidence.extend(c.over_threshold());
        return Some(Trigger::Threshold);
    }
    let ((w, limit), t) = (c.limit()?, c.tokens_before?);
    if let Some(e) = c.over_threshold() {
        evidence.push(e);
        over_threshold_after_reply(c, evidence);
        return None;
    }
    if c.from_hook == Some(true) || b.partial {
        return None;
    }
    evidence.push(c.here(
        "under_threshold",
        format!(
            "tokensBefore {t} <= context window {w} - reserve {} = {limit} and no overflow before it: no automatic compaction fires there, so /compact",
            c.reserve()
        ),
    ));
    Some(Trigger::Manual)
}

/// A compaction over the threshold that is not in the middle of a run: Pi's threshold check
/// after a run or before a prompt, or /compact with auto-compaction off, after an automatic
/// compaction failed (which leaves nothing in the file) or after a model switch: the file is
/// the same, so it never decides. It lists what speaks for and against auto-compaction having
/// been on: a reply over the threshold left uncompacted (auto_compaction_off), a model_change
/// since the reply (model_switch), an earlier automatic compaction (auto_compaction_on), or
/// none (auto_compaction_unproven). Nothing where file order stands in for the chain.
fn over_threshold_after_reply(c: &Clues<'_>, evidence: &mut Vec<Evidence>) {
    if c.before.partial {
        // A model_change or an uncompacted reply between would not be seen.
        return;
    }
    let clue = if let Some(u) = c.uncompacted {
        Evidence::at(
            &u.reply,
            "auto_compaction_off",
            format!(
                "this reply's context {} > {} was not compacted before the next request to the model (line {}): auto-compaction was off or failed, so the compaction may be /compact",
                u.context, u.limit, u.next.line
            ),
        )
    } else if c.before.model_changed {
        c.here(
            "model_switch",
            "a model_change lies between the reply before and the compaction: Pi's threshold check before the next prompt and /compact after a switch look the same".into(),
        )
    } else if let Some(on) = c.auto_on {
        on.evidence()
    } else {
        c.here(
            "auto_compaction_unproven",
            "no earlier compaction in the session shows auto-compaction on: with it off, /compact over the threshold looks the same".into(),
        )
    };
    evidence.push(clue);
}

/// Whether a compaction inferred first by `rule` (giving `trigger`) is settled by the reply
/// after it: an overflow recovery, which retries (Pi 1.x's, and Pi 0.73.1's `overflow_error`
/// deciding overflow: see [`pi0_rules`]), or a mid-run compaction, after which the run goes on.
/// Only Pi's automatic compaction makes one once that reply follows ([`AutoOn`]).
pub(super) fn awaits_next_reply(rule: &str, trigger: Trigger) -> bool {
    matches!(rule, "overflow_recovery" | "length_overflow" | "mid_run")
        || (rule == "overflow_error" && trigger == Trigger::Overflow)
}

/// Settles a compaction's trigger once what follows it is known: Pi's overflow recovery (the
/// rules overflow_recovery and length_overflow, and Pi 0.73.1's overflow_error) retries the
/// failed turn at once, and Pi's check in the middle of a run (mid_run) is followed by the
/// run's next request, so in both the next message on the branch is a reply with no new
/// prompt between (`retried`,
/// `run_continued`). Without one the clue is not enough: a recovery that failed then /compact,
/// or a run that a tool batch ended (`terminate`) then /compact, look the same: unknown
/// (`no_retry`, `run_ended`). `at` is the compaction's own line and id; `next_reply` that
/// reply.
pub(super) fn settle_continuation(
    (trigger, basis, evidence): (&mut Trigger, &mut Basis, &mut Vec<Evidence>),
    at: Place,
    next_reply: Option<Place>,
) {
    let first = evidence.first().map(|e| e.rule);
    let mid_run = first == Some("mid_run");
    if *basis != Basis::Inferred || !first.is_some_and(|r| awaits_next_reply(r, *trigger)) {
        return;
    }
    match (next_reply, mid_run) {
        (Some(r), false) => evidence.push(Evidence::at(
            &r,
            "retried",
            "the next message on the branch is this reply, with no new prompt between: Pi retried the failed turn",
        )),
        (Some(r), true) => evidence.push(Evidence::at(
            &r,
            "run_continued",
            "the next message on the branch is this reply, with no new prompt between: the run went on, so the compaction was Pi's check before its next request",
        )),
        (None, _) => {
            *trigger = Trigger::Unknown;
            *basis = Basis::Unknown;
            let (rule, detail) = if mid_run {
                ("run_ended", "no reply follows before the next prompt or the end: the run may have ended with the tool results (a tool batch that terminates it), and /compact after it looks the same")
            } else {
                ("no_retry", "no reply follows before the next prompt or the end: Pi's recovery retries at once, so this may be /compact after a recovery that failed")
            };
            evidence.push(Evidence::at(&at, rule, detail));
        }
    }
}

/// The Pi 1.6.0 rules that rest on the nearest reply `a` (see [`pi1_rules`]).
fn reply_rules(c: &Clues<'_>, a: &AssistantFacts, evidence: &mut Vec<Evidence>) -> Option<Trigger> {
    let b = c.before;
    let explicit = a.stop == StopReason::Error && a.overflow_pi16;
    let length = a.stop == StopReason::Length;
    if let (true, Some(edit)) = (explicit || length, &b.hidden_by) {
        let (rule, what) = if length {
            (
                "length_overflow",
                "ended with stopReason length (a truncated reply, or the input filled the window)",
            )
        } else {
            (
                "overflow_recovery",
                "ended with stopReason error and a context-overflow error text",
            )
        };
        evidence.push(Evidence::at(
            &a.place(),
            rule,
            format!("the reply before {what}"),
        ));
        evidence.push(Evidence::at(
            edit,
            "overflow_recovery",
            "a context_edit with replacement null hides that reply: Pi's overflow recovery, which compacts and retries",
        ));
        return Some(Trigger::Overflow);
    }
    let unchanged = c.same_model && !b.model_changed && !b.partial;
    if explicit && b.hidden_by.is_none() && unchanged {
        evidence.push(Evidence::at(
            &a.place(),
            "unrecovered_overflow",
            "the reply before ended with a context-overflow error that nothing hides: Pi did not recover from it (auto-compaction off, or its one attempt spent), so /compact",
        ));
        return Some(Trigger::Manual);
    }
    let w = c.window?;
    // pi-ai's length-stop overflow: output 0 with input + cacheRead at 99% of the window or more.
    let filled = a.usage.output == 0 && a.usage.input_read() * 100 >= u128::from(w) * 99;
    if length && filled && !b.edited && unchanged {
        evidence.push(Evidence::at(
            &a.place(),
            "unrecovered_overflow",
            format!(
                "the reply before ended with stopReason length, output 0 and input + cacheRead {} filling the context window {w}, and nothing hides it: Pi did not recover from it, so /compact",
                a.usage.input_read()
            ),
        ));
        return Some(Trigger::Manual);
    }
    // Listed, never deciding: with auto-compaction off, or after Pi's overflow compaction
    // failed, /compact after such a reply looks the same (over_threshold follows).
    let silent = a.stop == StopReason::Stop && !b.edited && unchanged && c.uncompacted.is_none();
    if silent && a.usage.input_read() > w.into() {
        evidence.push(Evidence::at(
            &a.place(),
            "silent_overflow",
            format!(
                "the reply before ended with stopReason stop but input + cacheRead {} > context window {w}: with auto-compaction on Pi compacts after such a reply (overflow); /compact after it looks the same",
                a.usage.input_read()
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clues() -> Clues<'static> {
        Clues {
            line: 10,
            entry: Some("c1"),
            recorded: None,
            before: Box::leak(Box::default()),
            pi1: false,
            same_model: true,
            window: None,
            tokens_before: None,
            reserve: Some(16384),
            reserve_key: None,
            from_hook: None,
            from_hook_key: "fromHook",
            uncompacted: None,
            auto_on: None,
            quiet: None,
            oh_my_pi: None,
        }
    }

    /// An automatic compaction on line 3 that shows auto-compaction on.
    fn auto_on() -> &'static AutoOn {
        Box::leak(Box::new(AutoOn {
            at: place(3),
            rule: "mid_run",
        }))
    }

    /// An assistant message on line 9 right before the compaction.
    fn assistant(stop: StopReason, overflow: bool) -> Before {
        Before {
            assistant: Some(AssistantFacts {
                line: 9,
                id: Some(EntryId::from("a1")),
                stop,
                overflow,
                overflow_pi16: overflow,
                model: 0,
                usage: ReplyUsage::default(),
            }),
            ..Before::default()
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
            before: &near,
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
            before: &near,
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
                before: &overflow,
                ..over
            }),
            (
                Trigger::Overflow,
                Basis::Inferred,
                vec!["overflow_error", "over_threshold"]
            )
        );
        // An overflow error of another model than the one in effect: Pi 0.73.1 does not
        // compact for it (sameModel); over the threshold nothing decides (Pi's check and
        // /compact with auto-compaction off look the same); under it, compact() did.
        let other = Clues {
            before: &overflow,
            same_model: false,
            ..over
        };
        assert_eq!(
            verdict(&other),
            (
                Trigger::Unknown,
                Basis::Unknown,
                vec![
                    "overflow_error",
                    "over_threshold",
                    "auto_compaction_unproven"
                ]
            )
        );
        assert!(infer_trigger(&other).2[0]
            .detail
            .contains("decides nothing"));
        let under = Clues {
            tokens_before: Some(100_000),
            ..other
        };
        assert_eq!(
            verdict(&under),
            (
                Trigger::Manual,
                Basis::Inferred,
                vec!["overflow_error", "under_threshold"]
            )
        );
        assert_eq!(
            verdict(&Clues {
                before: &length,
                ..over
            }),
            (
                Trigger::Unknown,
                Basis::Unknown,
                vec!["over_threshold", "auto_compaction_unproven", "length_stop"]
            )
        );
        // Pi 0.73.1 compacts on its own only in _checkCompaction (overflow, then threshold):
        // a length stop alone says nothing of the trigger.
        assert_eq!(
            verdict(&Clues {
                before: &length,
                ..clues()
            }),
            (Trigger::Unknown, Basis::Unknown, vec!["length_stop"])
        );
    }

    /// Pi 0.73.1 clues: the reply before (`before`), the window 200000 and tokensBefore `t`.
    fn pi0<'a>(before: &'a Before, t: u64) -> Clues<'a> {
        Clues {
            before,
            window: Some(200_000),
            tokens_before: Some(t),
            ..clues()
        }
    }

    /// A reply on line 9 that ended with `stop`, its input, cacheRead and output.
    fn reply(stop: StopReason, input: u64, cache_read: u64, output: u64) -> Before {
        let mut b = assistant(stop, false);
        if let Some(a) = b.assistant.as_mut() {
            a.usage = ReplyUsage {
                input,
                output,
                cache_read,
                cache_write: 0,
                total_tokens: input + cache_read + output,
            };
        }
        b
    }

    /// Pi 0.73.1's _checkCompaction asks pi-ai's isContextOverflow(reply, window) first:
    /// besides an overflow error, a stop reply whose input + cacheRead is over the window
    /// (case 2) and a length reply with output 0 and input + cacheRead at 99% of the window or
    /// more (case 3) are overflow, for a reply of the model in effect; the threshold after.
    /// No retry follows those two (Agent.continue() refuses to continue from the reply), so
    /// /compact after such a reply writes the same file: listed, never deciding; nor does the
    /// threshold decide (the recorded run: /compact with auto-compaction off over it).
    #[test]
    fn pi0_silent_filled_window_and_threshold_are_listed_never_deciding() {
        let rules = |c: &Clues<'_>| {
            let (t, b, e) = verdict(c);
            assert_eq!((t, b), (Trigger::Unknown, Basis::Unknown), "{e:?}");
            e
        };
        let silent = reply(StopReason::Stop, 150_000, 50_001, 500);
        assert_eq!(
            rules(&pi0(&silent, 200_501)),
            [
                "silent_overflow",
                "over_threshold",
                "auto_compaction_unproven"
            ]
        );
        let at_window = reply(StopReason::Stop, 150_000, 50_000, 500);
        assert_eq!(
            rules(&pi0(&at_window, 200_500)),
            ["over_threshold", "auto_compaction_unproven"],
            "input + cacheRead equal to the window is no overflow"
        );
        let filled = reply(StopReason::Length, 190_000, 8_000, 0);
        assert_eq!(
            rules(&pi0(&filled, 198_000)),
            [
                "filled_window",
                "over_threshold",
                "auto_compaction_unproven",
                "length_stop"
            ]
        );
        let short = reply(StopReason::Length, 190_000, 7_999, 0);
        assert_eq!(
            rules(&pi0(&short, 197_999)),
            ["over_threshold", "auto_compaction_unproven", "length_stop"],
            "below 99% of the window"
        );
        // Pi checks overflow only for a reply of the model in effect, and needs the window.
        for b in [&silent, &filled] {
            let switched = Before {
                model_changed: true,
                ..b.clone()
            };
            assert_eq!(
                rules(&pi0(&switched, 200_501))[..2],
                ["over_threshold", "model_switch"]
            );
            let other = Clues {
                same_model: false,
                ..pi0(b, 200_501)
            };
            assert_eq!(rules(&other)[0], "over_threshold");
            let unknown = Clues {
                window: None,
                ..pi0(b, 200_501)
            };
            assert!(!rules(&unknown).contains(&"over_threshold"));
        }
        // Nor is a reply so big ever under the threshold: no under_threshold after it.
        let huge_reserve = Clues {
            reserve: Some(0),
            tokens_before: Some(150_000),
            ..pi0(&silent, 0)
        };
        assert_eq!(rules(&huge_reserve), ["silent_overflow"]);
    }

    /// Pi 0.73.1's recovery from an overflow error of the model in effect compacts and retries
    /// the turn at once (_runAutoCompaction with willRetry): overflow once the retried reply
    /// is seen; without it, /compact after a recovery Pi gave up (or with auto-compaction
    /// off) looks the same. Only 0.73.1's own overflow texts count.
    #[test]
    fn pi0_an_overflow_error_is_overflow_once_the_retry_follows() {
        let b = assistant(StopReason::Error, true);
        let (mut t, mut basis, mut e) = infer_trigger(&pi0(&b, 3000));
        assert_eq!((t, basis), (Trigger::Overflow, Basis::Inferred));
        let unsettled = (t, basis, e.clone());
        settle_continuation((&mut t, &mut basis, &mut e), place(10), Some(place(11)));
        assert_eq!((t, basis), (Trigger::Overflow, Basis::Inferred));
        let rules: Vec<_> = e.iter().map(|e| (e.rule, e.line)).collect();
        assert_eq!(rules, [("overflow_error", 9), ("retried", 11)]);
        let (mut t, mut basis, mut e) = unsettled;
        settle_continuation((&mut t, &mut basis, &mut e), place(10), None);
        assert_eq!((t, basis), (Trigger::Unknown, Basis::Unknown));
        assert_eq!(e.last().map(|e| (e.rule, e.line)), Some(("no_retry", 10)));
        // An error 0.73.1 takes for no overflow (a 1.6.0-only text): its threshold check ran.
        let mut plain = assistant(StopReason::Error, false);
        if let Some(a) = plain.assistant.as_mut() {
            a.overflow_pi16 = true;
        }
        assert_eq!(verdict(&pi0(&plain, 3000)).2, ["under_threshold"]);
        assert_eq!(verdict(&pi0(&plain, 190_000)).0, Trigger::Unknown);
        // Of another model, the error decides nothing and awaits no retry.
        let (mut t, mut basis, mut e) = infer_trigger(&Clues {
            same_model: false,
            ..pi0(&b, 3000)
        });
        settle_continuation((&mut t, &mut basis, &mut e), place(10), None);
        assert_eq!((t, basis), (Trigger::Manual, Basis::Inferred));
    }

    /// Under the threshold after a reply that is no overflow, Pi 0.73.1's _checkCompaction
    /// compacts nothing (its count is tokensBefore's: the reply's usage plus what follows), so
    /// the compaction is compact(): /compact, or an extension's ctx.compact().
    #[test]
    fn pi0_under_the_threshold_after_a_reply_is_manual() {
        let length = reply(StopReason::Length, 50_000, 0, 4_000);
        assert_eq!(
            verdict(&pi0(&length, 54_000)),
            (
                Trigger::Manual,
                Basis::Inferred,
                vec!["under_threshold", "length_stop"]
            )
        );
        let stop = reply(StopReason::Stop, 50_000, 0, 4_000);
        assert_eq!(
            verdict(&pi0(&stop, 183_616)),
            (Trigger::Manual, Basis::Inferred, vec!["under_threshold"])
        );
        // Not when Pi's own check counts otherwise or the tokens are an extension's.
        let aborted = reply(StopReason::Aborted, 50_000, 0, 4_000);
        assert_eq!(
            verdict(&pi0(&aborted, 54_000)).0,
            Trigger::Unknown,
            "Pi's check before a prompt counts an aborted reply's usage, tokensBefore skips it"
        );
        let tools = reply(StopReason::ToolUse, 50_000, 0, 40);
        assert_eq!(
            verdict(&pi0(&tools, 50_040)).0,
            Trigger::Unknown,
            "/compact during a run leaves the run's abort out of the file, not out of Pi's check"
        );
        let hook = Clues {
            from_hook: Some(true),
            ..pi0(&stop, 54_000)
        };
        assert_eq!(verdict(&hook).0, Trigger::Unknown);
        let in_file_order = Before {
            partial: true,
            ..stop.clone()
        };
        assert_eq!(verdict(&pi0(&in_file_order, 54_000)).0, Trigger::Unknown);
        assert_eq!(
            verdict(&pi0(&Before::default(), 54_000)).0,
            Trigger::Unknown,
            "no reply before"
        );
    }

    /// No message since the previous compaction (or the branch's start): Pi 0.73.1's check
    /// has no reply to look at, so /compact, over the threshold or not; its evidence is the
    /// previous compaction, first. Not for an extension's compaction, nor for Pi 1.x.
    #[test]
    fn pi0_no_reply_since_the_last_compaction_is_manual() {
        let none = Before::default();
        let at_start = Quiet { previous: None };
        let after = Quiet {
            previous: Some(place(6)),
        };
        let quiet = |q, t| Clues {
            quiet: Some(q),
            ..pi0(&none, t)
        };
        assert_eq!(
            verdict(&quiet(&at_start, 0)),
            (Trigger::Manual, Basis::Inferred, vec!["no_reply_since"])
        );
        let (_, _, e) = infer_trigger(&quiet(&after, 190_000));
        let rules: Vec<_> = e.iter().map(|e| (e.rule, e.line)).collect();
        assert_eq!(
            rules[..2],
            [("no_reply_since", 6), ("over_threshold", 10)],
            "the deciding rule first, the threshold listed"
        );
        assert_eq!(infer_trigger(&quiet(&after, 190_000)).0, Trigger::Manual);
        let hook = Clues {
            from_hook: Some(true),
            ..quiet(&after, 0)
        };
        assert_eq!(verdict(&hook).0, Trigger::Unknown);
        let pi1 = Clues {
            pi1: true,
            ..quiet(&at_start, 0)
        };
        assert!(!verdict(&pi1).2.contains(&"no_reply_since"));
        assert_eq!(verdict(&pi0(&none, 0)).0, Trigger::Unknown, "not quiet");
    }

    #[test]
    fn over_threshold_means_strictly_greater_than_window_minus_reserve() {
        let at = |t: u64, w: u64| Clues {
            window: Some(w),
            tokens_before: Some(t),
            ..clues()
        };
        assert_eq!(verdict(&at(183_616, 200_000)).2, Vec::<&str>::new());
        let (t, _, e) = infer_trigger(&at(183_617, 200_000));
        assert_eq!((t, e[0].rule), (Trigger::Unknown, "over_threshold"));
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

    /// A compaction oh-my-pi wrote gets none of Pi's rules, where Pi's would decide (no
    /// reply since the last compaction: manual); a recorded trigger still decides.
    #[test]
    fn oh_my_pis_compactions_get_no_pi_rule() {
        let none = Before::default();
        let at_start = Quiet { previous: None };
        let quiet = Clues {
            quiet: Some(&at_start),
            ..pi0(&none, 0)
        };
        assert_eq!(verdict(&quiet).0, Trigger::Manual);
        let omp = Clues {
            oh_my_pi: Some("tokensAfter"),
            ..quiet
        };
        let (t, b, e) = infer_trigger(&omp);
        assert_eq!((t, b, e.len()), (Trigger::Unknown, Basis::Unknown, 1));
        assert_eq!(e[0].rule, "oh_my_pi");
        assert!(e[0]
            .detail
            .starts_with("written by oh-my-pi (it records tokensAfter,"));
        let recorded = Clues {
            recorded: Some(Recorded {
                key: "trigger",
                trigger: Trigger::Threshold,
            }),
            ..omp
        };
        let (t, b, e) = infer_trigger(&recorded);
        assert_eq!((t, b), (Trigger::Threshold, Basis::Recorded));
        assert_eq!((e[0].rule, e[1].rule), ("recorded", "oh_my_pi"));
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

    fn place(line: u64) -> Place {
        Place {
            line,
            id: Some(EntryId::from(format!("e{line}").as_str())),
        }
    }

    /// Pi 1.x clues: the reply before (`before`), the window 24000 and tokensBefore `t`.
    fn pi1<'a>(before: &'a Before, t: u64) -> Clues<'a> {
        Clues {
            before,
            pi1: true,
            window: Some(24000),
            tokens_before: Some(t),
            ..clues()
        }
    }

    #[test]
    fn pi1_the_recovery_signature_is_overflow_once_the_retry_follows() {
        let mut b = assistant(StopReason::Error, true);
        b.hidden_by = Some(place(9));
        b.edited = true;
        let (mut t, mut basis, mut e) = infer_trigger(&pi1(&b, 3000));
        assert_eq!((t, basis), (Trigger::Overflow, Basis::Inferred));
        let (t2, b2, e2) = (t, basis, e.clone());
        settle_continuation((&mut t, &mut basis, &mut e), place(10), Some(place(11)));
        assert_eq!((t, basis), (Trigger::Overflow, Basis::Inferred));
        let rules: Vec<_> = e.iter().map(|e| (e.rule, e.line)).collect();
        assert_eq!(
            rules,
            [
                ("overflow_recovery", 9),
                ("overflow_recovery", 9),
                ("retried", 11)
            ]
        );
        let (mut t, mut basis, mut e) = (t2, b2, e2);
        settle_continuation((&mut t, &mut basis, &mut e), place(10), None);
        assert_eq!((t, basis), (Trigger::Unknown, Basis::Unknown));
        assert_eq!(e.last().map(|e| (e.rule, e.line)), Some(("no_retry", 10)));
        // Unhidden, a length reply that filled the window was not recovered from: /compact.
        let mut full = assistant(StopReason::Length, false);
        if let Some(a) = full.assistant.as_mut() {
            a.usage.input = 23760;
        }
        assert_eq!(verdict(&pi1(&full, 30000)).2, ["unrecovered_overflow"]);
        if let Some(a) = full.assistant.as_mut() {
            a.usage.input = 23759;
        }
        assert_eq!(
            verdict(&pi1(&full, 30000)).2,
            ["over_threshold", "auto_compaction_unproven"]
        );
        // A hidden length reply is the same signature; a hidden error that is no overflow is not.
        let mut l = assistant(StopReason::Length, false);
        l.hidden_by = Some(place(9));
        assert_eq!(verdict(&pi1(&l, 3000)).2[0], "length_overflow");
        let mut other = assistant(StopReason::Error, false);
        other.hidden_by = Some(place(9));
        assert_eq!(verdict(&pi1(&other, 3000)).0, Trigger::Manual);
    }

    #[test]
    fn pi1_mid_run_is_threshold_once_the_run_goes_on() {
        let mid = Before {
            tool_result: Some(place(9)),
            ..Before::default()
        };
        let (mut t, mut basis, mut e) = infer_trigger(&pi1(&mid, 100));
        let unsettled = (t, basis, e.clone());
        settle_continuation((&mut t, &mut basis, &mut e), place(10), Some(place(11)));
        assert_eq!((t, basis), (Trigger::Threshold, Basis::Inferred));
        let rules: Vec<_> = e.iter().map(|e| (e.rule, e.line)).collect();
        assert_eq!(rules, [("mid_run", 9), ("run_continued", 11)]);
        let (mut t, mut basis, mut e) = unsettled;
        settle_continuation((&mut t, &mut basis, &mut e), place(10), None);
        assert_eq!((t, basis), (Trigger::Unknown, Basis::Unknown));
        assert_eq!(
            e.last().map(|e| (e.rule, e.line)),
            Some(("run_ended", 10)),
            "a run a tool batch ended, then /compact, looks the same"
        );
        // Other inferred triggers are final as decided.
        let idle = assistant(StopReason::Stop, false);
        let (mut t, mut basis, mut e) = infer_trigger(&pi1(&idle, 100));
        settle_continuation((&mut t, &mut basis, &mut e), place(10), None);
        assert_eq!((t, basis, e.len()), (Trigger::Manual, Basis::Inferred, 1));
    }

    #[test]
    fn pi1_an_unrecovered_overflow_of_the_model_in_effect_is_manual() {
        let b = assistant(StopReason::Error, true);
        assert_eq!(
            verdict(&Clues {
                window: None,
                ..pi1(&b, 30000)
            }),
            (
                Trigger::Manual,
                Basis::Inferred,
                vec!["unrecovered_overflow"]
            )
        );
        let switched = Before {
            model_changed: true,
            ..b.clone()
        };
        assert_eq!(
            verdict(&pi1(&switched, 30000)).2,
            ["over_threshold", "model_switch"]
        );
        // Pi 0.73.1's files keep their rule.
        assert_eq!(
            verdict(&Clues {
                pi1: false,
                ..pi1(&b, 30000)
            })
            .0,
            Trigger::Overflow
        );
    }

    #[test]
    fn pi1_a_stop_reply_over_the_window_is_a_silent_overflow_but_decides_nothing() {
        let mut b = assistant(StopReason::Stop, false);
        if let Some(a) = b.assistant.as_mut() {
            a.usage.input = 3000;
            a.usage.cache_read = 21001;
        }
        assert_eq!(
            verdict(&pi1(&b, 24005)),
            (
                Trigger::Unknown,
                Basis::Unknown,
                vec![
                    "silent_overflow",
                    "over_threshold",
                    "auto_compaction_unproven"
                ]
            ),
            "with auto-compaction off, /compact after such a reply looks the same"
        );
        let on = Clues {
            auto_on: Some(auto_on()),
            ..pi1(&b, 24005)
        };
        let (t, basis, e) = infer_trigger(&on);
        assert_eq!(
            (t, basis),
            (Trigger::Unknown, Basis::Unknown),
            "/compact after Pi's own overflow compaction failed looks the same"
        );
        let rules: Vec<_> = e.iter().map(|e| (e.rule, e.line)).collect();
        assert_eq!(
            rules,
            [
                ("silent_overflow", 9),
                ("over_threshold", 10),
                ("auto_compaction_on", 3)
            ]
        );
        let u = Uncompacted {
            reply: place(4),
            context: 9000,
            limit: 7616,
            next: place(5),
        };
        let off = Clues {
            uncompacted: Some(&u),
            ..on
        };
        assert_eq!(
            verdict(&off),
            (
                Trigger::Unknown,
                Basis::Unknown,
                vec!["over_threshold", "auto_compaction_off"]
            ),
            "an uncompacted reply over the threshold: not even listed as silent"
        );
    }

    #[test]
    fn pi1_mid_run_threshold_and_manual_below_the_limit() {
        let mid = Before {
            tool_result: Some(place(9)),
            ..Before::default()
        };
        assert_eq!(
            verdict(&Clues {
                window: None,
                ..pi1(&mid, 100)
            }),
            (Trigger::Threshold, Basis::Inferred, vec!["mid_run"])
        );
        let idle = assistant(StopReason::Stop, false);
        assert_eq!(
            verdict(&pi1(&idle, 7617)),
            (
                Trigger::Unknown,
                Basis::Unknown,
                vec!["over_threshold", "auto_compaction_unproven"]
            ),
            "over the threshold after a reply: /compact with auto-compaction off looks the same"
        );
        let on = Clues {
            auto_on: Some(auto_on()),
            ..pi1(&idle, 7617)
        };
        assert_eq!(
            verdict(&on),
            (
                Trigger::Unknown,
                Basis::Unknown,
                vec!["over_threshold", "auto_compaction_on"]
            ),
            "auto-compaction on: still /compact after Pi's own attempt failed looks the same"
        );
        let in_file_order = Before {
            partial: true,
            ..idle.clone()
        };
        assert_eq!(
            verdict(&Clues {
                before: &in_file_order,
                ..on
            }),
            (Trigger::Unknown, Basis::Unknown, vec!["over_threshold"]),
            "file order: a model_change or an uncompacted reply between would not be seen"
        );
        let switched = Before {
            model_changed: true,
            ..idle.clone()
        };
        assert_eq!(
            verdict(&Clues {
                before: &switched,
                ..on
            })
            .2,
            ["over_threshold", "model_switch"],
            "after a model switch: Pi's check before the prompt or /compact"
        );
        assert_eq!(
            verdict(&pi1(&idle, 7616)),
            (Trigger::Manual, Basis::Inferred, vec!["under_threshold"])
        );
        let in_file_order = Before {
            partial: true,
            ..assistant(StopReason::Error, true)
        };
        assert_eq!(
            verdict(&pi1(&in_file_order, 7616)).0,
            Trigger::Unknown,
            "what lies between is not known: no rule rests on an absence"
        );
        let hook = Clues {
            from_hook: Some(true),
            ..pi1(&idle, 7616)
        };
        assert_eq!(
            verdict(&hook).0,
            Trigger::Unknown,
            "an extension's tokensBefore"
        );
        assert_eq!(
            verdict(&Clues {
                window: None,
                ..pi1(&idle, 100)
            })
            .0,
            Trigger::Unknown
        );
    }

    #[test]
    fn indexes_follow_all() {
        assert!(Trigger::ALL.iter().enumerate().all(|(i, t)| t.index() == i));
        assert!(Basis::ALL.iter().enumerate().all(|(i, b)| b.index() == i));
    }
}
