//! Documentation generated from data stays current: the README's rule
//! table is the rule table's own Markdown, and the table of intended
//! differences from the release in docs/artifacts.md is
//! values/upstream-differences.yaml. Run with ASOGEN_UPDATE_DOCS=1 to
//! rewrite them.

/// Checks (or rewrites) the block of `doc` (relative to the repository)
/// between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
fn doc_block(doc: &str, name: &str, table: String) {
    let path = format!("{}/{doc}", env!("CARGO_MANIFEST_DIR"));
    let contents = std::fs::read_to_string(&path).unwrap();
    let begin = format!("<!-- {name}:begin -->\n");
    let start = contents
        .find(&begin)
        .unwrap_or_else(|| panic!("{doc} has no {begin}"))
        + begin.len();
    let end = contents
        .find(&format!("<!-- {name}:end -->"))
        .unwrap_or_else(|| panic!("{doc} has no end marker for {name}"));
    if contents[start..end] == table {
        return;
    }
    if std::env::var_os("ASOGEN_UPDATE_DOCS").is_some() {
        let updated = format!("{}{table}{}", &contents[..start], &contents[end..]);
        std::fs::write(&path, updated).unwrap();
    } else {
        panic!(
            "{doc}'s {name} table is stale; run `ASOGEN_UPDATE_DOCS=1 cargo test --test docs`. Expected:\n{table}"
        );
    }
}

#[test]
fn the_readme_rule_table_is_generated_from_the_rules() {
    doc_block("README.md", "rules", asogen::rules::markdown_table());
}

#[test]
fn the_docs_list_every_intended_difference_from_the_release() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/values/upstream-differences.yaml"
    );
    let entries: Vec<serde_json::Value> =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(!entries.is_empty());
    let mut table = String::from("| object | path | reason |\n| --- | --- | --- |\n");
    for entry in entries {
        let cell = |key: &str| entry[key].as_str().unwrap_or("(whole object)").to_string();
        table.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            cell("object"),
            cell("path"),
            cell("reason")
        ));
    }
    doc_block("docs/artifacts.md", "differences", table);
}
