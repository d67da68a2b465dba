//! The output records of the tools as docs/FORMAT.md describes them, typed: one struct per
//! record type, each rejecting a field the doc does not give it (`deny_unknown_fields`), a
//! value of another type, a documented field that is missing, and a string outside the set
//! of values the doc lists. Reading a tool's stdout into `Record` is the doc as a test.
//!
//! Field types follow the doc's type column: "or null" is `Option` (read with `nullable`, so
//! the field must be present), "only with `--flag`" is `Option` that may be absent, "as
//! recorded" is a `serde_json::Value` (the input's bytes, any JSON), and objects are structs.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// A field the doc types "… or null": always present, its value may be null. (A plain
/// `Option` field would also accept a missing one.)
/// A whole number of any size: token sums, context sizes and drops are exact integers that can
/// pass u64 (issue 19, item 2), which serde_json's `Value` holds as a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Whole(pub f64);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Whole, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() != 0.0 => Err(serde::de::Error::custom(format!(
                "{n} is not a whole number"
            ))),
            Some(f) => Ok(Whole(f)),
            None => Err(serde::de::Error::custom(format!("{n} is not a number"))),
        }
    }
}

fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::deserialize(d)
}

/// Any output record, told apart by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    BranchInfo(BranchInfo),
    Leaf(Leaf),
    CompactionReport(CompactionReport),
    CompactionFailure(CompactionFailure),
    AssistantError(AssistantError),
    BranchSummaryReport(BranchSummaryReport),
    SessionFile(SessionFile),
    ToolCall(Box<ToolCall>),
    ToolResult(ToolResult),
    Usage(Box<Usage>),
    UsageCall(Box<UsageCall>),
    Context(Context),
}

/// Every line of a tool's stdout as a `Record`; panics naming the line that does not fit.
pub fn parse_records(stdout: &str) -> Vec<Record> {
    stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("record does not fit docs/FORMAT.md ({e}): {line}"))
        })
        .collect()
}

/// `branch_info` (pi-branch --info).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchInfo {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub version: u64,
    #[serde(deserialize_with = "nullable")]
    pub leaf: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub leaf_line: Option<u64>,
    pub entries: u64,
    pub kept: u64,
    pub omitted: u64,
    pub leaves: u64,
    pub diagnostics: BTreeMap<DiagnosticKind, u64>,
}

/// The kinds of problems the doc lists (the keys of `diagnostics`).
#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    IoError,
    InvalidUtf8,
    ByteOrderMark,
    MalformedJson,
    NotObject,
    GluedRecords,
    MissingHeader,
    MalformedHeader,
    SecondHeader,
    ParentCycle,
    MissingParent,
    DuplicateId,
    BadId,
    IdlessLeaf,
    BadField,
    NotFound,
}

/// `leaf` (pi-branch --leaves).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Leaf {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry_type: Option<String>,
    pub depth: u64,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub label: Option<String>,
    pub active: bool,
    /// Only with `--preview`.
    #[serde(default)]
    pub preview: Option<String>,
}

/// `compaction_report` (pi-compactions).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionReport {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub tokens_before: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub tokens_after: Option<u64>,
    pub first_kept: FirstKept,
    pub retain_none: bool,
    #[serde(deserialize_with = "nullable")]
    pub method: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub replay_through: Option<ReplayThrough>,
    #[serde(deserialize_with = "nullable")]
    pub summary_bytes: Option<u64>,
    pub files: FileCounts,
    #[serde(deserialize_with = "nullable")]
    pub from_hook: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub usage: Option<SummaryUsage>,
    #[serde(deserialize_with = "nullable")]
    pub system_message_bytes: Option<u64>,
    pub trigger: Trigger,
    pub basis: Basis,
    pub evidence: Vec<Evidence>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub configured_window: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub configured_window_source: Option<WindowSource>,
    #[serde(deserialize_with = "nullable")]
    pub window_catalogue: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub reserve_tokens: Option<u64>,
    pub reserve_source: ReserveSource,
    #[serde(deserialize_with = "nullable")]
    pub context_after: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub context_after_line: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub inferred_drop: Option<Whole>,
    /// Only with `--summary`.
    #[serde(default)]
    pub summary: Option<String>,
    /// Only with `--files`.
    #[serde(default)]
    pub read_files: Option<Vec<String>>,
    /// Only with `--files`.
    #[serde(default)]
    pub modified_files: Option<Vec<String>>,
}

/// `compaction_report.first_kept`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirstKept {
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub index: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub line: Option<u64>,
    pub found: bool,
}

/// `replay_through` of `compaction_report` (oh-my-pi's `providerReplayThroughEntryId`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayThrough {
    pub entry: String,
    #[serde(deserialize_with = "nullable")]
    pub line: Option<u64>,
    pub found: bool,
}

/// `usage` of `compaction_report` and `branch_summary_report`: the summarization's call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryUsage {
    #[serde(deserialize_with = "nullable")]
    pub input: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub output: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cache_read: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cache_write: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub total_tokens: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cost: Option<f64>,
}

/// `files` of `compaction_report` and `branch_summary_report`: counts from `details`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCounts {
    #[serde(deserialize_with = "nullable")]
    pub read: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub modified: Option<u64>,
}

/// `compaction_report.trigger`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Manual,
    Threshold,
    Overflow,
    Automatic,
    Unknown,
}

/// `compaction_report.basis`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Recorded,
    Inferred,
    Unknown,
}

/// `compaction_report.evidence[]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub rule: EvidenceRule,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    pub detail: String,
}

/// `compaction_report.evidence[].rule`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceRule {
    Recorded,
    OverflowError,
    FilledWindow,
    OverThreshold,
    LengthStop,
    FromHook,
    OverflowRecovery,
    LengthOverflow,
    Retried,
    NoRetry,
    UnrecoveredOverflow,
    SilentOverflow,
    MidRun,
    RunContinued,
    RunEnded,
    AutoCompactionOff,
    AutoCompactionOn,
    AutoCompactionUnproven,
    ModelSwitch,
    UnderThreshold,
    NoReplySince,
    OhMyPi,
    SettingsAssumed,
}

/// `compaction_report.reserve_source`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum ReserveSource {
    Option,
    Settings,
    SettingsModelOverride,
    Default,
}

/// `compaction_failure` (pi-compactions).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionFailure {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
    pub trigger: FailureTrigger,
    pub failure: Failure,
    #[serde(deserialize_with = "nullable")]
    pub summarization: Option<Summarization>,
    pub error_kind: ErrorKind,
    #[serde(deserialize_with = "nullable")]
    pub http_status: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub retry_attempt: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub stop_reason: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
}

/// `compaction_failure.trigger`: what the failure text belongs to.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum FailureTrigger {
    Threshold,
    Overflow,
    Manual,
    Unknown,
}

/// `compaction_failure.failure`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    AutoCompaction,
    OverflowRecovery,
    TruncationRecovery,
    ManualCompaction,
    Summarization,
    TurnPrefixSummarization,
}

/// `compaction_failure.summarization`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Summarization {
    History,
    TurnPrefix,
}

/// `error_kind` of `compaction_failure` and `assistant_error`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    ContextOverflow,
    RateLimit,
    Timeout,
    Connection,
    Server,
    Aborted,
    Other,
}

/// `assistant_error` (pi-compactions --errors).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssistantError {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub stop_reason: Option<String>,
    pub error_kind: ErrorKind,
    #[serde(deserialize_with = "nullable")]
    pub http_status: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub retry_attempt: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
}

/// `branch_summary_report` (pi-compactions --branch-summaries).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchSummaryReport {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub target: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub from_id: Option<String>,
    pub from_found: bool,
    pub from_root: bool,
    #[serde(deserialize_with = "nullable")]
    pub summary_bytes: Option<u64>,
    pub files: FileCounts,
    #[serde(deserialize_with = "nullable")]
    pub from_hook: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub usage: Option<SummaryUsage>,
    /// Only with `--summary`.
    #[serde(default)]
    pub summary: Option<String>,
    /// Only with `--files`.
    #[serde(default)]
    pub read_files: Option<Vec<String>>,
    /// Only with `--files`.
    #[serde(default)]
    pub modified_files: Option<Vec<String>>,
}

/// `session_file` (pi-sessions).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionFile {
    pub path: String,
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub version: Option<u64>,
    pub status: FileStatus,
    #[serde(deserialize_with = "nullable")]
    pub reason: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub parent_file: Option<String>,
    pub role: FileRole,
    #[serde(deserialize_with = "nullable")]
    pub cwd: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub project: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub project_source: Option<ProjectSource>,
    #[serde(deserialize_with = "nullable")]
    pub name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub parent_session: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub created: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub modified: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub modified_source: Option<ModifiedSource>,
    pub bytes: u64,
    pub lines: u64,
    pub headers: u64,
    #[serde(deserialize_with = "nullable")]
    pub entries: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub messages: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub user_messages: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub assistant_messages: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub leaves: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub compactions: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub unknown_entries: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub unknown_roles: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub models: Option<Vec<String>>,
    pub bad_lines: u64,
    /// Only with `--prompts`.
    #[serde(default)]
    pub first_prompt: Option<String>,
}

/// `session_file.role`.
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    Session,
    Subagent,
    Advisor,
}

/// `session_file.status`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Ok,
    MetadataOnly,
    Unreadable,
    Empty,
    NotSession,
}

/// `session_file.project_source`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum ProjectSource {
    Header,
    Decoded,
    DecodedPartial,
}

/// `session_file.modified_source`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum ModifiedSource {
    Message,
    Header,
    Mtime,
}

/// `tool_call` (pi-tools).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub call_id: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub namespace: Option<String>,
    pub by_user: bool,
    /// As recorded: any JSON the call held.
    #[serde(deserialize_with = "nullable")]
    pub arguments: Option<serde_json::Value>,
    #[serde(deserialize_with = "nullable")]
    pub arguments_bytes: Option<u64>,
    pub status: CallStatus,
    pub evidence: CallEvidence,
    #[serde(deserialize_with = "nullable")]
    pub stop_reason: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub result: Option<JoinedResult>,
    #[serde(deserialize_with = "nullable")]
    pub bash: Option<BashRun>,
    #[serde(deserialize_with = "nullable")]
    pub duration_ms: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub duration_from: Option<DurationFrom>,
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
}

/// `tool_call.status`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    Error,
    NoResult,
}

/// `tool_call.duration_from`: where `duration_ms` comes from.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum DurationFrom {
    Recorded,
    Timestamps,
}

/// `tool_call.evidence`: what decided `status`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum CallEvidence {
    IsError,
    ExitCode,
    AbortedTurn,
    Cancelled,
    Result,
    NoResult,
}

/// `tool_call.result`: the result joined to the call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinedResult {
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub text: Option<String>,
    pub text_truncated: bool,
    #[serde(deserialize_with = "nullable")]
    pub bytes: Option<u64>,
    pub images: u64,
    pub image_types: Vec<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub is_error: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub exit_code: Option<i64>,
    /// As recorded: any JSON the result held.
    #[serde(deserialize_with = "nullable")]
    pub details: Option<serde_json::Value>,
    #[serde(deserialize_with = "nullable")]
    pub usage: Option<ResultUsage>,
    #[serde(deserialize_with = "nullable")]
    pub nested_calls: Option<NestedCalls>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
}

/// `tool_call.result.usage`, `tool_result.usage`: a tool result's own usage (Pi 1.x).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultUsage {
    #[serde(deserialize_with = "nullable")]
    pub input: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub output: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cache_read: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cache_write: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub tokens: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub total_tokens: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub reasoning: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cache_write_1h: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cost: Option<f64>,
    #[serde(deserialize_with = "nullable")]
    pub cost_from_provider: Option<bool>,
}

/// `tool_call.result.nested_calls`, `tool_result.nested_calls` (Pi 1.x).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NestedCalls {
    pub count: u64,
    pub errors: u64,
    pub unfinished: u64,
    #[serde(deserialize_with = "nullable")]
    pub complete: Option<bool>,
}

/// `tool_call.bash`: what Pi recorded about a user command.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashRun {
    #[serde(deserialize_with = "nullable")]
    pub cancelled: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub truncated: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub full_output_path: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub exclude_from_context: Option<bool>,
}

/// `tool_result` (pi-tools): a result that joins no call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResult {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub call_id: Option<String>,
    pub status: UnjoinedStatus,
    #[serde(deserialize_with = "nullable")]
    pub call_line: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub call_entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub first_result_line: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub text: Option<String>,
    pub text_truncated: bool,
    #[serde(deserialize_with = "nullable")]
    pub bytes: Option<u64>,
    pub images: u64,
    pub image_types: Vec<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub is_error: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    pub exit_code: Option<i64>,
    /// As recorded: any JSON the result held.
    #[serde(deserialize_with = "nullable")]
    pub details: Option<serde_json::Value>,
    #[serde(deserialize_with = "nullable")]
    pub usage: Option<ResultUsage>,
    #[serde(deserialize_with = "nullable")]
    pub nested_calls: Option<NestedCalls>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
}

/// `tool_result.status`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum UnjoinedStatus {
    Orphan,
    Duplicate,
}

/// `usage` (pi-usage).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    pub grand_total: bool,
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub file: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub project: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub parent_session: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub lineage: Option<Lineage>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub month: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub week: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub day: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub first: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub last: Option<String>,
    pub sessions: u64,
    pub forks: u64,
    pub forks_unresolved: u64,
    pub duplicates: u64,
    pub nested_calls: u64,
    pub nested_calls_incomplete: u64,
    pub messages: UsageSums,
    pub summarization: UsageSums,
    pub usage_entries: UsageSums,
    pub tool_results: UsageSums,
    pub total: UsageSums,
    pub subagents: UsageSums,
    pub usage_kinds: Vec<KindSums>,
    pub by_model: Vec<ModelSums>,
}

/// `usage.lineage`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Lineage {
    None,
    Resolved,
    Unresolved,
}

/// A struct of pi-usage's sums over calls (the fields of `usage.messages`), after the given
/// leading fields. (A macro rather than `#[serde(flatten)]`, which cannot be combined with
/// `deny_unknown_fields`.)
macro_rules! usage_sums {
    ($(#[$doc:meta])* $name:ident { $($(#[$attr:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$attr])* pub $field: $ty,)*
            pub count: u64,
            pub input: Whole,
            pub output: Whole,
            pub cache_read: Whole,
            pub cache_write: Whole,
            pub tokens: Whole,
            pub total_tokens: Whole,
            pub total_tokens_computed: u64,
            #[serde(deserialize_with = "nullable")]
            pub reasoning: Option<Whole>,
            pub reasoning_calls: u64,
            #[serde(deserialize_with = "nullable")]
            pub cache_write_1h: Option<Whole>,
            pub cache_write_1h_calls: u64,
            #[serde(deserialize_with = "nullable")]
            pub cost: Option<f64>,
            pub cost_missing: u64,
            #[serde(deserialize_with = "nullable")]
            pub cost_from_provider: Option<f64>,
            pub cost_from_provider_calls: u64,
            pub other: BTreeMap<String, Whole>,
        }
    };
}

usage_sums! {
    /// `usage.messages`, `usage.summarization`, `usage.usage_entries`, `usage.tool_results`,
    /// `usage.total`, `usage.subagents`: sums over calls.
    UsageSums {}
}

usage_sums! {
    /// `usage.usage_kinds[]`: the sums of the usage entries of one `kind`.
    KindSums {
        #[serde(deserialize_with = "nullable")]
        kind: Option<String>,
    }
}

usage_sums! {
    /// `usage.by_model[]`: the sums of one provider and model.
    ModelSums {
        #[serde(deserialize_with = "nullable")]
        provider: Option<String>,
        #[serde(deserialize_with = "nullable")]
        model: Option<String>,
    }
}

/// `usage_call` (pi-usage --calls).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageCall {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    #[serde(deserialize_with = "nullable")]
    pub project: Option<String>,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub time: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub day: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub week: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub month: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
    pub source: CallSource,
    #[serde(deserialize_with = "nullable")]
    pub kind: Option<String>,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub tokens: Whole,
    pub total_tokens: Whole,
    pub total_tokens_computed: bool,
    #[serde(deserialize_with = "nullable")]
    pub reasoning: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cache_write_1h: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub cost: Option<f64>,
    pub cost_from_provider: bool,
    #[serde(deserialize_with = "nullable")]
    pub nested_calls: Option<u64>,
    pub nested_calls_incomplete: bool,
    pub other: BTreeMap<String, Whole>,
    #[serde(deserialize_with = "nullable")]
    pub identity: Option<String>,
    pub repeat: bool,
}

/// `usage_call.source`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum CallSource {
    Message,
    Summarization,
    UsageEntry,
    ToolResult,
}

/// `context` (pi-usage --context).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<String>,
    pub file: String,
    pub line: u64,
    #[serde(deserialize_with = "nullable")]
    pub entry: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub timestamp: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub stop_reason: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub recorded_input: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub recorded_output: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub recorded_cache_read: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub recorded_cache_write: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub recorded_context_tokens: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub configured_context_window: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub configured_window_source: Option<WindowSource>,
    #[serde(deserialize_with = "nullable")]
    pub window_catalogue: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub fill_ratio: Option<f64>,
    #[serde(deserialize_with = "nullable")]
    pub previous_context_tokens: Option<Whole>,
    #[serde(deserialize_with = "nullable")]
    pub inferred_context_drop: Option<Whole>,
    pub after_compaction: bool,
}

/// `context.configured_window_source`, `compaction_report.configured_window_source`.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    Models,
    ModelsDefault,
    ModelOverrides,
    Builtin,
}
