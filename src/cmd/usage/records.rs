//! The records pi-usage writes: `usage` (the sums of a group) and `context` (one assistant
//! message's recorded context), each a type that writes itself. docs/FORMAT.md describes
//! their fields, in the order of their `FIELDS`.

use super::decimal::format_decimal;
use super::sums::{label_of, GroupUsage, Sums};
use crate::models_json::Window;
use crate::output::Obj;
use crate::record::Record;
use std::borrow::Cow;

/// A `usage` record: the sums of one group, or (`grand_total`) the grand total.
pub struct UsageRecord<'a> {
    pub group: &'a GroupUsage,
    pub grand_total: bool,
}

impl Record for UsageRecord<'_> {
    const TYPE: &'static str = "usage";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "grand_total",
        "session",
        "file",
        "project",
        "parent_session",
        "lineage",
        "provider",
        "model",
        "month",
        "week",
        "day",
        "first",
        "last",
        "sessions",
        "forks",
        "forks_unresolved",
        "duplicates",
        "nested_calls",
        "nested_calls_incomplete",
        "messages",
        "messages.count",
        "messages.input",
        "messages.output",
        "messages.cache_read",
        "messages.cache_write",
        "messages.tokens",
        "messages.total_tokens",
        "messages.total_tokens_computed",
        "messages.reasoning",
        "messages.reasoning_calls",
        "messages.cache_write_1h",
        "messages.cache_write_1h_calls",
        "messages.cost",
        "messages.cost_missing",
        "messages.cost_from_provider",
        "messages.cost_from_provider_calls",
        "messages.other",
        "summarization",
        "summarization.count",
        "summarization.input",
        "summarization.output",
        "summarization.cache_read",
        "summarization.cache_write",
        "summarization.tokens",
        "summarization.total_tokens",
        "summarization.total_tokens_computed",
        "summarization.reasoning",
        "summarization.reasoning_calls",
        "summarization.cache_write_1h",
        "summarization.cache_write_1h_calls",
        "summarization.cost",
        "summarization.cost_missing",
        "summarization.cost_from_provider",
        "summarization.cost_from_provider_calls",
        "summarization.other",
        "usage_entries",
        "usage_entries.count",
        "usage_entries.input",
        "usage_entries.output",
        "usage_entries.cache_read",
        "usage_entries.cache_write",
        "usage_entries.tokens",
        "usage_entries.total_tokens",
        "usage_entries.total_tokens_computed",
        "usage_entries.reasoning",
        "usage_entries.reasoning_calls",
        "usage_entries.cache_write_1h",
        "usage_entries.cache_write_1h_calls",
        "usage_entries.cost",
        "usage_entries.cost_missing",
        "usage_entries.cost_from_provider",
        "usage_entries.cost_from_provider_calls",
        "usage_entries.other",
        "tool_results",
        "tool_results.count",
        "tool_results.input",
        "tool_results.output",
        "tool_results.cache_read",
        "tool_results.cache_write",
        "tool_results.tokens",
        "tool_results.total_tokens",
        "tool_results.total_tokens_computed",
        "tool_results.reasoning",
        "tool_results.reasoning_calls",
        "tool_results.cache_write_1h",
        "tool_results.cache_write_1h_calls",
        "tool_results.cost",
        "tool_results.cost_missing",
        "tool_results.cost_from_provider",
        "tool_results.cost_from_provider_calls",
        "tool_results.other",
        "total",
        "total.count",
        "total.input",
        "total.output",
        "total.cache_read",
        "total.cache_write",
        "total.tokens",
        "total.total_tokens",
        "total.total_tokens_computed",
        "total.reasoning",
        "total.reasoning_calls",
        "total.cache_write_1h",
        "total.cache_write_1h_calls",
        "total.cost",
        "total.cost_missing",
        "total.cost_from_provider",
        "total.cost_from_provider_calls",
        "total.other",
        "subagents",
        "subagents.count",
        "subagents.input",
        "subagents.output",
        "subagents.cache_read",
        "subagents.cache_write",
        "subagents.tokens",
        "subagents.total_tokens",
        "subagents.total_tokens_computed",
        "subagents.reasoning",
        "subagents.reasoning_calls",
        "subagents.cache_write_1h",
        "subagents.cache_write_1h_calls",
        "subagents.cost",
        "subagents.cost_missing",
        "subagents.cost_from_provider",
        "subagents.cost_from_provider_calls",
        "subagents.other",
        "usage_kinds",
        "usage_kinds[].kind",
        "usage_kinds[].count",
        "usage_kinds[].input",
        "usage_kinds[].output",
        "usage_kinds[].cache_read",
        "usage_kinds[].cache_write",
        "usage_kinds[].tokens",
        "usage_kinds[].total_tokens",
        "usage_kinds[].total_tokens_computed",
        "usage_kinds[].reasoning",
        "usage_kinds[].reasoning_calls",
        "usage_kinds[].cache_write_1h",
        "usage_kinds[].cache_write_1h_calls",
        "usage_kinds[].cost",
        "usage_kinds[].cost_missing",
        "usage_kinds[].cost_from_provider",
        "usage_kinds[].cost_from_provider_calls",
        "usage_kinds[].other",
        "by_model",
        "by_model[].provider",
        "by_model[].model",
        "by_model[].count",
        "by_model[].input",
        "by_model[].output",
        "by_model[].cache_read",
        "by_model[].cache_write",
        "by_model[].tokens",
        "by_model[].total_tokens",
        "by_model[].total_tokens_computed",
        "by_model[].reasoning",
        "by_model[].reasoning_calls",
        "by_model[].cache_write_1h",
        "by_model[].cache_write_1h_calls",
        "by_model[].cost",
        "by_model[].cost_missing",
        "by_model[].cost_from_provider",
        "by_model[].cost_from_provider_calls",
        "by_model[].other",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        let g = self.group;
        let l = &g.labels;
        let total = g.total();
        o.bool("grand_total", self.grand_total)
            .opt_str("session", l.session.as_deref())
            .opt_str("file", l.file.as_deref())
            .opt_str("project", l.project.as_deref())
            .opt_str("parent_session", l.parent_session.as_deref())
            .opt_str("lineage", l.lineage)
            .opt_str("provider", l.provider.as_deref())
            .opt_str("model", l.model.as_deref())
            .opt_str("month", l.month.as_deref())
            .opt_str("week", l.week.as_deref())
            .opt_str("day", l.day.as_deref())
            .opt_str("first", g.first.as_ref().map(|f| f.1.as_str()))
            .opt_str("last", g.last.as_ref().map(|f| f.1.as_str()))
            .u64("sessions", g.sessions)
            .u64("forks", g.forks)
            .u64("forks_unresolved", g.forks_unresolved)
            .u64("duplicates", g.duplicates)
            .u64("nested_calls", g.nested_calls)
            .u64("nested_calls_incomplete", g.nested_calls_incomplete)
            .obj("messages", |o| write_sums(o, &g.messages))
            .obj("summarization", |o| write_sums(o, &g.summarization))
            .obj("usage_entries", |o| write_sums(o, &g.usage_entries))
            .obj("tool_results", |o| write_sums(o, &g.tool_results))
            .obj("total", |o| write_sums(o, &total))
            .obj("subagents", |o| write_sums(o, &g.subagents))
            .arr("usage_kinds", |a| {
                for (k, s) in &g.usage_kinds {
                    a.obj(|o| {
                        o.opt_str("kind", label_of(k));
                        write_sums(o, s);
                    });
                }
            })
            .arr("by_model", |a| {
                for ((p, m), s) in &g.by_model {
                    a.obj(|o| {
                        o.opt_str("provider", label_of(p))
                            .opt_str("model", label_of(m));
                        write_sums(o, s);
                    });
                }
            });
    }
}

/// The members of a sums object (`messages`, `summarization`, `usage_entries`,
/// `tool_results`, `total`, `subagents`, a `usage_kinds` or `by_model` item).
fn write_sums(o: &mut Obj<'_>, s: &Sums) {
    o.u64("count", s.count);
    wide(o, "input", s.input);
    wide(o, "output", s.output);
    wide(o, "cache_read", s.cache_read);
    wide(o, "cache_write", s.cache_write);
    wide(o, "tokens", s.tokens());
    wide(o, "total_tokens", s.total_tokens);
    o.u64("total_tokens_computed", s.total_tokens_computed);
    // A breakdown no call wrote is unknown (null), not zero.
    let part = |o: &mut Obj<'_>, k: &str, v: u128, calls: u64| {
        match calls {
            0 => o.null(k),
            _ => o.raw(k, itoa::Buffer::new().format(v).as_bytes()),
        };
    };
    part(o, "reasoning", s.reasoning, s.reasoning_calls);
    o.u64("reasoning_calls", s.reasoning_calls);
    part(
        o,
        "cache_write_1h",
        s.cache_write_1h,
        s.cache_write_1h_calls,
    );
    o.u64("cache_write_1h_calls", s.cache_write_1h_calls);
    match s.cost() {
        Some(c) => o.raw("cost", format_decimal(c).as_bytes()),
        None => o.null("cost"),
    };
    o.u64("cost_missing", s.cost_missing);
    match s.cost_from_provider_calls {
        0 => o.null("cost_from_provider"),
        _ => o.raw(
            "cost_from_provider",
            format_decimal(&s.cost_from_provider).as_bytes(),
        ),
    };
    o.u64("cost_from_provider_calls", s.cost_from_provider_calls)
        .obj("other", |m| {
            for (name, v) in &s.other {
                wide_named(m, name, *v);
            }
        });
}

/// The text of `v`, written in `buf`.
fn digits(buf: &mut itoa::Buffer, v: Option<u128>) -> Option<&[u8]> {
    v.map(|v| buf.format(v).as_bytes())
}

/// Member `k`, the exact integer `v` (a sum may pass u64::MAX).
pub fn wide(o: &mut Obj<'_>, k: &str, v: u128) {
    o.raw(k, itoa::Buffer::new().format(v).as_bytes());
}

/// [`wide`] under a name read from the input (`other`'s usage fields), escaped as a string
/// is ([`Obj::raw_named`]).
pub fn wide_named(o: &mut Obj<'_>, name: &str, v: u128) {
    o.raw_named(name, itoa::Buffer::new().format(v).as_bytes());
}

/// A `context` record: one assistant message's recorded context, its model's configured
/// window, and the drop inferred from the previous message on its branch.
pub struct ContextRecord<'a> {
    pub session: &'a str,
    pub file: &'a str,
    pub line: u64,
    pub entry: Option<Cow<'a, str>>,
    pub timestamp: Option<Cow<'a, str>>,
    pub provider: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    pub stop_reason: Option<Cow<'a, str>>,
    /// input, output, cacheRead, cacheWrite as recorded: `None` without a usage object or
    /// for an invalid field.
    pub recorded: [Option<u64>; 4],
    /// Exact sums (they may pass u64::MAX).
    pub recorded_context_tokens: Option<u128>,
    pub configured_window: Option<Window>,
    pub fill_ratio: Option<f64>,
    pub previous_context_tokens: Option<u128>,
    pub inferred_context_drop: Option<u128>,
    pub after_compaction: bool,
}

impl Record for ContextRecord<'_> {
    const TYPE: &'static str = "context";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "session",
        "file",
        "line",
        "entry",
        "timestamp",
        "provider",
        "model",
        "stop_reason",
        "recorded_input",
        "recorded_output",
        "recorded_cache_read",
        "recorded_cache_write",
        "recorded_context_tokens",
        "configured_context_window",
        "configured_window_source",
        "window_catalogue",
        "fill_ratio",
        "previous_context_tokens",
        "inferred_context_drop",
        "after_compaction",
    ];

    fn write_fields(&self, o: &mut Obj<'_>) {
        let mut buf = [
            itoa::Buffer::new(),
            itoa::Buffer::new(),
            itoa::Buffer::new(),
        ];
        let window = self.configured_window;
        o.opt_str("session", crate::reader::session_id(self.session))
            .str("file", self.file)
            .u64("line", self.line)
            .opt_str("entry", self.entry.as_deref())
            .opt_str("timestamp", self.timestamp.as_deref())
            .opt_str("provider", self.provider.as_deref())
            .opt_str("model", self.model.as_deref())
            .opt_str("stop_reason", self.stop_reason.as_deref())
            .opt_u64("recorded_input", self.recorded[0])
            .opt_u64("recorded_output", self.recorded[1])
            .opt_u64("recorded_cache_read", self.recorded[2])
            .opt_u64("recorded_cache_write", self.recorded[3])
            .opt_raw(
                "recorded_context_tokens",
                digits(&mut buf[0], self.recorded_context_tokens),
            )
            .opt_u64("configured_context_window", window.map(|w| w.tokens))
            .opt_str("configured_window_source", window.map(|w| w.source.name()))
            .opt_str(
                "window_catalogue",
                window.and_then(|w| w.source.catalogue()),
            )
            .opt_f64("fill_ratio", self.fill_ratio)
            .opt_raw(
                "previous_context_tokens",
                digits(&mut buf[1], self.previous_context_tokens),
            )
            .opt_raw(
                "inferred_context_drop",
                digits(&mut buf[2], self.inferred_context_drop),
            )
            .bool("after_compaction", self.after_compaction);
    }
}
