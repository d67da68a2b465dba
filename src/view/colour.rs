//! Colour in the human views: `--color auto|always|never` (every tool with a human view takes
//! it, see [`crate::tool::command`]) and `NO_COLOR`. `auto`, the default, colours when stdout
//! is a terminal and `NO_COLOR` is unset or empty (<https://no-color.org>). JSON Lines are
//! never coloured. The styles are anstyle's, as clap's are.

use anstyle::{AnsiColor, Effects, Style};
use std::io::IsTerminal;
use std::sync::OnceLock;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset or empty.
    Auto,
    Always,
    Never,
}

static CHOICE: OnceLock<ColorChoice> = OnceLock::new();

/// Records the run's `--color` (once, from the command line).
pub fn set_choice(choice: ColorChoice) {
    let _ = CHOICE.set(choice);
}

/// Whether the human view is coloured in this run.
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        decide(
            CHOICE.get().copied().unwrap_or(ColorChoice::Auto),
            std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            std::io::stdout().is_terminal(),
        )
    })
}

/// The rule: `always` and `never` win; `auto` colours a terminal unless NO_COLOR is set.
fn decide(choice: ColorChoice, no_color: bool, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && !no_color,
    }
}

/// What a part of a view means, and so its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    Plain,
    /// A column's head, a heading.
    Head,
    /// A failure: an error status, a failed compaction.
    Error,
    /// Something to look at that is no failure: no result, unknown.
    Warn,
    /// Went well.
    Good,
    /// Less important: ids, evidence, folded runs.
    Dim,
}

impl Paint {
    fn style(self) -> Style {
        match self {
            Paint::Plain => Style::new(),
            Paint::Head => Style::new().effects(Effects::BOLD),
            Paint::Error => Style::new()
                .fg_color(Some(AnsiColor::Red.into()))
                .effects(Effects::BOLD),
            Paint::Warn => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Paint::Good => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Paint::Dim => Style::new().effects(Effects::DIMMED),
        }
    }

    /// `text` in this paint when `colour`, else as it is.
    pub fn apply(self, text: &str, colour: bool) -> String {
        let style = self.style();
        if !colour || style == Style::new() || text.is_empty() {
            return text.to_string();
        }
        format!("{style}{text}{style:#}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        assert!(decide(ColorChoice::Always, true, false));
        assert!(!decide(ColorChoice::Never, false, true));
        assert!(decide(ColorChoice::Auto, false, true));
        assert!(!decide(ColorChoice::Auto, true, true));
        assert!(!decide(ColorChoice::Auto, false, false));
        assert_eq!(Paint::Error.apply("x", false), "x");
        assert_eq!(
            Paint::Error.apply("x", true),
            "\u{1b}[1m\u{1b}[31mx\u{1b}[0m"
        );
    }
}
