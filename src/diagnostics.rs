//! Problems found in values files, with file, line, column and key path,
//! printed for people (with the source line and a caret) or as JSON.

use std::fmt::Write as _;
use std::io::IsTerminal;

use serde::Serialize;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The values are refused.
    Error,
    /// The values are accepted, but may not mean what the writer meant
    /// (e.g. a value YAML 1.1 and YAML 1.2 read differently).
    Warning,
}

/// One problem in one values file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file as the user named it (`<defaults>` for the chart defaults,
    /// `--set` for command-line values).
    pub file: String,
    /// 1-based line, when the problem sits in a file.
    pub line: Option<usize>,
    /// 1-based column, when the problem sits in a file.
    pub column: Option<usize>,
    /// Dotted key path (`strategy.type`); empty for the whole document.
    pub key: String,
    /// The rule id for a broken rule (`ha-requires-recreate`).
    pub rule: Option<String>,
    /// The JSON Schema keyword for a shape error (`type`, `enum`, `additionalProperties`), or `yaml` / `io`.
    pub keyword: Option<String>,
    /// What is wrong, naming the values involved.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// `error` (the values are refused) or `warning`.
    pub severity: Severity,
    /// Length of the offending text on its line, for the caret.
    #[serde(skip)]
    pub span_len: usize,
}

impl Diagnostic {
    /// The rule id or schema keyword, whichever names this problem.
    pub fn code(&self) -> &str {
        self.rule
            .as_deref()
            .or(self.keyword.as_deref())
            .unwrap_or("error")
    }

    /// `file:line:column` (or just the file when there is no position).
    pub fn location(&self) -> String {
        match (self.line, self.column) {
            (Some(line), Some(column)) => format!("{}:{line}:{column}", self.file),
            _ => self.file.clone(),
        }
    }
}

/// An error diagnostic with no position; fill in what is known.
impl Default for Diagnostic {
    fn default() -> Self {
        Diagnostic {
            file: String::new(),
            line: None,
            column: None,
            key: String::new(),
            rule: None,
            keyword: None,
            message: String::new(),
            help: None,
            severity: Severity::Error,
            span_len: 1,
        }
    }
}

/// Output formats of `validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Readable text with the offending line and a caret.
    #[default]
    Human,
    /// A JSON array of diagnostics (stable shape, documented in docs/commands.md).
    Json,
    /// GitHub Actions workflow commands (`::error file=...::`), one per problem.
    Github,
}

/// Whether to colour human output: only on a terminal, never with `NO_COLOR`.
pub fn use_colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

pub use crate::redact::is_secret_name;
use crate::redact::{REDACTED, secret_lines};

/// At most this many problems are printed for people; the rest are
/// counted (`--format json` prints them all).
pub const HUMAN_LIMIT: usize = 100;

/// Control characters (escape sequences above all) are shown as U+FFFD, so
/// a values file cannot drive the terminal; one character for one keeps
/// the caret aligned.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// A source file as the human printer shows it: its lines and which of
/// them hold a secret, worked out once per file.
struct Shown {
    lines: Vec<String>,
    secret: Vec<Option<usize>>,
}

impl Shown {
    fn new(text: &str) -> Shown {
        Shown {
            lines: text.lines().map(str::to_string).collect(),
            secret: secret_lines(text),
        }
    }

    /// The source line to show under a diagnostic, with any secret value
    /// replaced by `<redacted>` and control characters made visible, and
    /// the caret's column and length on that shown line.
    fn excerpt(
        &self,
        line: usize,
        column: usize,
        span_len: usize,
    ) -> Option<(String, usize, usize)> {
        let index = line.checked_sub(1)?;
        let source_line = self.lines.get(index)?;
        let Some(keep) = self.secret.get(index).copied().flatten() else {
            return Some((printable(source_line), column, span_len));
        };
        let prefix: String = source_line.chars().take(keep).collect();
        let separator = if prefix.ends_with(':') { " " } else { "" };
        let shown = format!("{}{separator}{REDACTED}", printable(&prefix));
        if column > keep {
            let at = shown.chars().count() - REDACTED.len() + 1;
            Some((shown, at, REDACTED.len()))
        } else {
            let len = span_len.min(keep + 1 - column).max(1);
            Some((shown, column, len))
        }
    }
}

/// Formats diagnostics for people. `sources` gives the text of each file
/// (by the name used in `Diagnostic::file`) to show the offending line.
pub fn format_human(
    diagnostics: &[Diagnostic],
    source_of: &dyn Fn(&str) -> Option<String>,
    colour: bool,
) -> String {
    let (red, yellow, blue, bold, reset) = if colour {
        (
            "\x1b[31;1m",
            "\x1b[33;1m",
            "\x1b[34;1m",
            "\x1b[1m",
            "\x1b[0m",
        )
    } else {
        ("", "", "", "", "")
    };
    let mut out = String::new();
    // Each file is read and scanned once, however many problems it has.
    let mut shown: std::collections::HashMap<&str, Option<Shown>> =
        std::collections::HashMap::new();
    for d in diagnostics.iter().take(HUMAN_LIMIT) {
        let (label, red) = match d.severity {
            Severity::Error => ("error", red),
            Severity::Warning => ("warning", yellow),
        };
        let _ = writeln!(
            out,
            "{red}{label}[{}]{reset}{bold}: {}{reset}",
            printable(d.code()),
            printable(&d.message)
        );
        let key = if d.key.is_empty() {
            String::new()
        } else {
            format!(" (key `{}`)", printable(&d.key))
        };
        let _ = writeln!(out, "  {blue}-->{reset} {}{key}", printable(&d.location()));
        // The source is looked up only for a diagnostic with a position:
        // one without may name a file that cannot be read (a FIFO).
        if let (Some(line), Some(column)) = (d.line, d.column)
            && let Some(source) = shown
                .entry(d.file.as_str())
                .or_insert_with(|| source_of(&d.file).map(|text| Shown::new(&text)))
            && let Some((source_line, column, span_len)) = source.excerpt(line, column, d.span_len)
        {
            let number = line.to_string();
            let pad = " ".repeat(number.len());
            let caret = "^".repeat(span_len.max(1));
            let _ = writeln!(out, "  {pad} {blue}|{reset}");
            let _ = writeln!(out, "  {blue}{number} |{reset} {source_line}");
            let _ = writeln!(
                out,
                "  {pad} {blue}|{reset} {}{red}{caret}{reset}",
                " ".repeat(column.saturating_sub(1))
            );
        }
        if let Some(help) = &d.help {
            let _ = writeln!(out, "  {blue}={reset} help: {help}");
        }
        out.push('\n');
    }
    if diagnostics.len() > HUMAN_LIMIT {
        let _ = writeln!(
            out,
            "... and {} more problems (use -o json for all)\n",
            diagnostics.len() - HUMAN_LIMIT
        );
    }
    let count = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - count;
    if count > 0 {
        let _ = writeln!(
            out,
            "{red}{count} problem{}{reset} found",
            if count == 1 { "" } else { "s" }
        );
    }
    if warnings > 0 {
        let _ = writeln!(
            out,
            "{yellow}{warnings} warning{}{reset}",
            if warnings == 1 { "" } else { "s" }
        );
    }
    out
}

/// Escapes workflow-command data (GitHub's toolkit rules: `%`, CR and LF,
/// and in properties `:` and `,`); any other control character is shown
/// as U+FFFD, so a values file cannot drive the terminal of a log reader.
fn github_escape(text: &str, property: bool) -> String {
    let visible: String = text
        .chars()
        .map(|c| {
            if c.is_control() && c != '\r' && c != '\n' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    let mut out = visible
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

/// Formats diagnostics as GitHub Actions annotations.
pub fn format_github(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let mut properties = vec![format!("file={}", github_escape(&d.file, true))];
        if let (Some(line), Some(column)) = (d.line, d.column) {
            properties.push(format!("line={line}"));
            properties.push(format!("col={column}"));
        }
        properties.push(format!("title={}", github_escape(d.code(), true)));
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str(&format!(" (help: {help})"));
        }
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let _ = writeln!(
            out,
            "::{command} {}::{}",
            properties.join(","),
            github_escape(&message, false)
        );
    }
    out
}

/// Formats diagnostics as a pretty JSON array.
pub fn format_json(diagnostics: &[Diagnostic]) -> String {
    serde_json::to_string_pretty(diagnostics).expect("diagnostics serialize") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(d: &Diagnostic, text: &str) -> String {
        let text = text.to_string();
        format_human(std::slice::from_ref(d), &move |_| Some(text.clone()), false)
    }

    #[test]
    fn excerpts_never_show_a_secret_value() {
        let d = Diagnostic {
            file: "v.yaml".into(),
            line: Some(1),
            column: Some(20),
            message: "bad".into(),
            span_len: 14,
            ..Default::default()
        };
        let out = human(&d, "azureClientSecret: [s3cr3t-value]\n");
        assert!(!out.contains("s3cr3t"), "{out}");
        assert!(out.contains("1 | azureClientSecret: <redacted>\n"), "{out}");
        // The caret moves onto the placeholder.
        assert!(
            out.contains(&format!("| {}^^^^^^^^^^\n", " ".repeat(19))),
            "{out}"
        );
        // On a later line of the secret's value, the whole line is hidden.
        let d = Diagnostic {
            line: Some(3),
            column: Some(3),
            ..d
        };
        let out = human(&d, "azureClientSecret:\n  # c\n  - s3cr3t-value\n");
        assert!(!out.contains("s3cr3t"), "{out}");
        assert!(out.contains("3 |   <redacted>\n"), "{out}");
        // Other lines are shown as written.
        let out = human(&d, "podLabels:\n  # c\n  a: b\n");
        assert!(out.contains("3 |   a: b\n"), "{out}");
    }

    #[test]
    fn control_characters_cannot_reach_the_terminal() {
        let d = Diagnostic {
            file: "v.yaml".into(),
            line: Some(1),
            column: Some(1),
            key: "a\u{1b}[2J".into(),
            message: "unknown key `a\u{1b}[2J`".into(),
            ..Default::default()
        };
        let out = human(&d, "\"a\u{1b}[2J\": 1\n");
        assert!(!out.contains('\u{1b}'), "{out:?}");
        assert!(out.contains("a\u{fffd}[2J"), "{out:?}");
    }

    #[test]
    fn github_annotations_carry_no_control_characters() {
        let d = Diagnostic {
            file: "v\u{1b}.yaml".into(),
            line: Some(1),
            column: Some(1),
            message: "bad \u{1b}[2J 50%\r\nnext \u{85}\u{7f}".into(),
            ..Default::default()
        };
        let out = format_github(std::slice::from_ref(&d));
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        assert_eq!(out.matches('\n').count(), 1, "{out:?}");
        assert!(
            out.contains("bad \u{fffd}[2J 50%25%0D%0Anext \u{fffd}\u{fffd}"),
            "{out:?}"
        );
    }

    #[test]
    fn human_output_stops_after_the_limit_and_counts_the_rest() {
        let d = Diagnostic {
            file: "v.yaml".into(),
            line: Some(1),
            column: Some(1),
            message: "bad".into(),
            ..Default::default()
        };
        let all = vec![d; HUMAN_LIMIT + 7];
        let out = format_human(&all, &|_| Some("a: b\n".into()), false);
        assert_eq!(out.matches("error[").count(), HUMAN_LIMIT);
        assert!(
            out.contains("... and 7 more problems (use -o json for all)"),
            "{out}"
        );
        assert!(
            out.ends_with(&format!("{} problems found\n", HUMAN_LIMIT + 7)),
            "{out}"
        );
    }
}
