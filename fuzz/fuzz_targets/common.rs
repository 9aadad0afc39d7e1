#![allow(dead_code)] // each target uses part of it
//! Shared by the fuzz targets: one `Checker` per process and the checks run
//! on every diagnostic list.

use std::sync::OnceLock;

use asogen::diagnostics::{self, Diagnostic};
use asogen::check::Checker;
use asogen::read::{LoadError, Source};

/// Building the checker compiles the structural schema: do it once.
pub fn checker() -> &'static Checker {
    static CHECKER: OnceLock<Checker> = OnceLock::new();
    CHECKER.get_or_init(Checker::new)
}

pub fn load_error(err: LoadError) -> Vec<Diagnostic> {
    match err {
        LoadError::Io(d) | LoadError::Invalid(d) => d,
    }
}

/// Formats `diagnostics` every way the CLI can (human with and without
/// colour, JSON, GitHub annotations) and checks the outputs are well formed.
/// `source_of` gives the text shown for a file name, as the CLI does.
pub fn format_all(diagnostics: &[Diagnostic], source_of: &dyn Fn(&str) -> Option<String>) {
    assert!(!diagnostics.is_empty(), "an error with no diagnostic");
    for colour in [false, true] {
        let human = diagnostics::format_human(diagnostics, source_of, colour);
        assert!(human.ends_with("found\n"), "human output without its count: {human:?}");
    }
    let json = diagnostics::format_json(diagnostics);
    let parsed: serde_json::Value =
        serde_json::from_str(&json).expect("format_json writes valid JSON");
    assert_eq!(
        parsed.as_array().map(Vec::len),
        Some(diagnostics.len()),
        "format_json writes one entry per diagnostic"
    );
    let github = diagnostics::format_github(diagnostics);
    // One workflow command per diagnostic: newlines in data must be escaped.
    assert_eq!(
        github.lines().count(),
        diagnostics.len(),
        "format_github writes one line per diagnostic: {github:?}"
    );
    assert!(github.lines().all(|l| l.starts_with("::error ")));
}

/// The CLI's lookup: a parsed source's text, else the raw input (the CLI
/// reads the file again from disk for a file that did not parse).
pub fn source_lookup<'a>(
    sources: &'a [Source],
    raw: Option<(&'a str, &'a str)>,
) -> impl Fn(&str) -> Option<String> + 'a {
    move |name: &str| {
        sources
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.text.clone())
            .or_else(|| raw.filter(|(n, _)| *n == name).map(|(_, t)| t.to_string()))
    }
}
