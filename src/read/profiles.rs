//! The values profiles built into the binary, so that `render`, `release`
//! and `--profile NAME` work outside the repository: every file of
//! `values/profiles/` (a test fails when one is missing here). The read
//! stage holds them: `--profile` is a source of values like a `-f` file.

/// Each built-in profile: its name and its text.
pub const BUILTIN_PROFILES: &[(&str, &str)] = &[
    ("ha", include_str!("../../values/profiles/ha.yaml")),
    (
        "single-replica-rolling",
        include_str!("../../values/profiles/single-replica-rolling.yaml"),
    ),
    ("split", include_str!("../../values/profiles/split.yaml")),
];

/// The text of the built-in profile `name`.
pub fn builtin_profile(name: &str) -> Option<&'static str> {
    BUILTIN_PROFILES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, text)| *text)
}
