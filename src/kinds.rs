//! The entry types and message roles the Pi versions and forks the tools follow write: what a
//! type or role outside these lists is (an extension's, a newer Pi's) is "unknown", passed
//! through untouched and counted as such.

/// Entry types (besides the `session` header): Pi 0.x (`message`, `model_change`,
/// `thinking_level_change`, `compaction`, `branch_summary`, `custom`, `custom_message`,
/// `label`, `session_info`), Pi 1.x (`usage`, `context_edit`), and oh-my-pi's own.
pub const ENTRY_TYPES: &[&str] = &[
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "usage",
    "context_edit",
    "model_usage",
    "service_tier_change",
    "reset_boundary",
    "archive",
    "title_change",
    "ttsr_injection",
    "credential_pin",
    "session_init",
    "mode_change",
];

/// Message roles: `user`, `assistant`, `toolResult`, `bashExecution`, `custom` (version 2's
/// `hookMessage`), `branchSummary`, `compactionSummary`, and Pi 1.x's `system`.
pub const ROLES: &[&str] = &[
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "hookMessage",
    "branchSummary",
    "compactionSummary",
    "system",
];

/// The keys by which a compaction or branch summary says an extension wrote it, in the order
/// they are read: Pi's `fromHook`, then oh-my-pi's `fromExtension` (its `appendCompaction`
/// and `branchWithSummary` write it, `false` for its own).
pub const FROM_EXTENSION_KEYS: [&str; 2] = ["fromHook", "fromExtension"];

/// Whether an entry of type `kind` is one the tools know.
pub fn is_known_entry_type(kind: &str) -> bool {
    ENTRY_TYPES.contains(&kind)
}

/// Whether a message of role `role` is one the tools know.
pub fn is_known_role(role: &str) -> bool {
    ROLES.contains(&role)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown() {
        assert!(is_known_entry_type("context_edit"));
        assert!(is_known_entry_type("model_usage"));
        assert!(!is_known_entry_type("session"), "the header is no entry");
        assert!(!is_known_entry_type("my_extension_state"));
        assert!(is_known_role("system"));
        assert!(!is_known_role("narrator"));
    }
}
