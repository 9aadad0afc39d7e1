//! Problems found in values files, with file, line, column and key path,
//! printed for people (with the source line and a caret) or as JSON.

use std::fmt::Write as _;
use std::io::IsTerminal;

use serde::Serialize;

/// How bad a diagnostic is. Every problem asogen reports today refuses the
/// values, so everything is an error; the field exists so the JSON shape
/// stays stable when warnings arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The values are refused.
    Error,
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
    /// Always `error` for now.
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
    /// A JSON array of diagnostics (stable shape, documented in the README).
    Json,
    /// GitHub Actions workflow commands (`::error file=...::`), one per problem.
    Github,
}

/// Whether to colour human output: only on a terminal, never with `NO_COLOR`.
pub fn use_colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

/// Formats diagnostics for people. `sources` gives the text of each file
/// (by the name used in `Diagnostic::file`) to show the offending line.
pub fn format_human(
    diagnostics: &[Diagnostic],
    source_of: &dyn Fn(&str) -> Option<String>,
    colour: bool,
) -> String {
    let (red, blue, bold, reset) = if colour {
        ("\x1b[31;1m", "\x1b[34;1m", "\x1b[1m", "\x1b[0m")
    } else {
        ("", "", "", "")
    };
    let mut out = String::new();
    for d in diagnostics {
        let _ = writeln!(
            out,
            "{red}error[{}]{reset}{bold}: {}{reset}",
            d.code(),
            d.message
        );
        let key = if d.key.is_empty() {
            String::new()
        } else {
            format!(" (key `{}`)", d.key)
        };
        let _ = writeln!(out, "  {blue}-->{reset} {}{key}", d.location());
        if let (Some(line), Some(column), Some(text)) = (d.line, d.column, source_of(&d.file))
            && let Some(source_line) = text.lines().nth(line - 1)
        {
            let number = line.to_string();
            let pad = " ".repeat(number.len());
            let caret = "^".repeat(d.span_len.max(1));
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
    let count = diagnostics.len();
    let _ = writeln!(
        out,
        "{red}{count} problem{}{reset} found",
        if count == 1 { "" } else { "s" }
    );
    out
}

/// Escapes workflow-command data (GitHub's toolkit rules).
fn github_escape(text: &str, property: bool) -> String {
    let mut out = text
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
        let _ = writeln!(
            out,
            "::error {}::{}",
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
