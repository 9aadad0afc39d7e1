//! Go's flag package, as ASO's manager reads its arguments: the one reading
//! of a flag that the rules, `diff` and the catalog import share. A flag is
//! `-name` or `--name`, with its value after `=` (a boolean flag alone is
//! true); parsing stops at the first argument that is not a flag, at `-`,
//! and after `--`.

/// The values Go's `strconv.ParseBool` reads as true, which a boolean flag
/// takes after `=`.
pub const GO_TRUE: [&str; 6] = ["1", "t", "T", "TRUE", "true", "True"];

/// The flag an argument passes (`--v=2` passes `v`), if it is a flag.
pub fn name(arg: &str) -> Option<&str> {
    let name = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    let name = name.split('=').next().unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// Whether `arg` sets `flag` (to any value).
pub fn sets(flag: &str, arg: &str) -> bool {
    let name = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'));
    name.is_some_and(|name| name == flag || name.starts_with(&format!("{flag}=")))
}

/// Whether `arg` turns the boolean `flag` on.
pub fn turns_on(flag: &str, arg: &str) -> bool {
    let name = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'));
    name.is_some_and(|name| {
        name == flag
            || name
                .strip_prefix(flag)
                .and_then(|rest| rest.strip_prefix('='))
                .is_some_and(|value| GO_TRUE.contains(&value))
    })
}

/// The arguments Go's flag package parses: those before the first one
/// that is not a flag (or is `-`), and before `--`.
pub fn parsed<'a>(args: impl IntoIterator<Item = &'a str>) -> impl Iterator<Item = &'a str> {
    args.into_iter()
        .take_while(|arg| arg.starts_with('-') && *arg != "-" && *arg != "--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_as_go_reads_them() {
        assert_eq!(name("--v=2"), Some("v"));
        assert_eq!(
            name("-enable-leader-election"),
            Some("enable-leader-election")
        );
        assert_eq!(name("value"), None);
        assert!(turns_on(
            "enable-leader-election",
            "-enable-leader-election"
        ));
        assert!(turns_on(
            "enable-leader-election",
            "--enable-leader-election=T"
        ));
        assert!(!turns_on(
            "enable-leader-election",
            "--enable-leader-election=false"
        ));
        assert!(!turns_on(
            "enable-leader-election",
            "--enable-leader-elections"
        ));
        assert!(sets("crd-management", "-crd-management=none"));
        assert!(!sets("crd-management", "--crd-management-mode=none"));
        let args = ["--a", "-b=1", "value", "--c"];
        assert_eq!(parsed(args).collect::<Vec<_>>(), ["--a", "-b=1"]);
        assert_eq!(parsed(["--a", "--", "--c"]).count(), 1);
    }
}
