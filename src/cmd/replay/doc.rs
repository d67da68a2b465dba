//! The document every format renders: sessions made of items, each item a titled block of
//! parts (Markdown text, preformatted text, folded groups, images). Building it is the one
//! place that knows Pi's entry kinds; the renderers only know parts.

/// One rendered session.
pub(super) struct Session {
    pub title: String,
    /// `label: value` lines about the session (id, cwd, totals, …).
    pub facts: Vec<(String, String)>,
    /// The recorded context per assistant message, for the chart.
    pub chart: Chart,
    pub items: Vec<Item>,
}

/// One entry (or a tool call joined to its result), as shown.
pub(super) struct Item {
    /// What it is: `user`, `assistant`, `tool`, `command`, `compaction`, `meta`, `unknown`…
    /// (a CSS class in HTML, a colour on a terminal).
    pub kind: &'static str,
    /// pi-tools gives the tool call (or command) the status `error`: shown in the error
    /// style (red on a terminal, `--bad` in HTML; Markdown has the status in words).
    pub failed: bool,
    pub title: String,
    /// Short facts shown under the title (model, tokens, status, …).
    pub meta: Vec<String>,
    pub parts: Vec<Part>,
}

pub(super) enum Part {
    /// Text written as Markdown (user and assistant text, summaries).
    Markdown(String),
    /// Text shown as it is (outputs, arguments, raw JSON), maybe cut.
    Pre(Pre),
    /// Parts folded away behind a summary line.
    Folded(String, Vec<Part>),
    Image(Image),
    /// A short line in words (something left out, a note).
    Note(String),
    /// An item inside this one (a tool call inside its assistant turn).
    Nested(Item),
}

pub(super) struct Pre {
    pub text: String,
    /// Size in bytes of the whole text, when `text` was cut.
    pub cut_from: Option<usize>,
}

impl Pre {
    /// `cut: the first 100 of 650 bytes shown` (`none of the 650 bytes` when nothing is
    /// left), when the text was cut.
    pub fn cut_note(&self) -> Option<String> {
        let n = self.cut_from?;
        Some(match self.text.len() {
            0 => format!(
                "cut: none of the {} shown",
                counted(n as u64, "byte", "bytes")
            ),
            k => format!("cut: the first {k} of {n} bytes shown"),
        })
    }

    /// `text` cut to at most `max` bytes at a character boundary.
    pub fn cut(text: &str, max: usize) -> Pre {
        if text.len() <= max {
            return Pre {
                text: text.to_string(),
                cut_from: None,
            };
        }
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Pre {
            text: text[..end].to_string(),
            cut_from: Some(text.len()),
        }
    }
}

pub(super) struct Image {
    /// The MIME type as recorded (shown escaped; only known image types are inlined).
    pub mime: Option<String>,
    /// The base64 data as recorded.
    pub data: String,
}

impl Image {
    /// `png` for `image/png`; `image` when unknown.
    pub fn short_type(&self) -> String {
        match &self.mime {
            Some(m) => m.strip_prefix("image/").unwrap_or(m).to_string(),
            None => "unknown type".into(),
        }
    }
    /// `[image: png, 34 KB]`; `[image: png, 34 KB, redacted]` for the placeholder pi-redact
    /// writes in place of the data, which gives the size the data had.
    pub fn label(&self) -> String {
        let size = match crate::cmd::redact::image_placeholder_size(&self.data) {
            Some(size) => format!("{size}, redacted"),
            None => crate::view::bytes(crate::message::base64_decoded_len(self.data.as_bytes())),
        };
        format!("[image: {}, {size}]", self.short_type())
    }
}

/// A whole number with thousands separators: `16,505`.
pub(super) fn count(n: u64) -> String {
    crate::view::thousands(n.into())
}

/// `n` with thousands separators and the noun that goes with it: `1 line`, `0 lines`,
/// `16,505 lines` (`one` when `n` is 1, else `many`).
pub(super) fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), noun(n, one, many))
}

/// `one` when `n` is 1, else `many`.
pub(super) fn noun<'w>(n: u64, one: &'w str, many: &'w str) -> &'w str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// A recorded cost or a sum of costs (JSON number text) as pi-usage's table writes it:
/// `$1,234.5678`; as written, after `$`, when it is no cost pi-usage reads (a negative one).
pub(super) fn dollars(raw: &str) -> String {
    use crate::cmd::usage::{parse_cost, Amount};
    match parse_cost(raw.as_bytes()) {
        Ok(c) => {
            let mut sum = Amount::default();
            sum.add(&c);
            crate::cmd::usage::dollars(&sum)
        }
        Err(_) => format!("${raw}"),
    }
}

/// The context chart's data: one point per assistant message with recorded usage.
#[derive(Default)]
pub(super) struct Chart {
    pub points: Vec<ChartPoint>,
}

pub(super) struct ChartPoint {
    pub tokens: u64,
    /// The configured context window of the message's model, when one is known (models.json,
    /// else Pi's catalogue).
    pub window: Option<u64>,
    /// A compaction lies between this message and the previous one.
    pub after_compaction: bool,
    /// pi-usage inferred a context drop here.
    pub inferred_drop: bool,
}
