//! Documentation generated from data stays current: the README's rule
//! table is the rule table's own Markdown, and its table of intended
//! differences from the release is values/upstream-differences.yaml. Run
//! with ASOGEN_UPDATE_DOCS=1 to rewrite them.

/// Checks (or rewrites) the README block between `<!-- NAME:begin -->`
/// and `<!-- NAME:end -->`.
fn readme_block(name: &str, table: String) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let begin = format!("<!-- {name}:begin -->\n");
    let start = readme.find(&begin).expect("README has the begin marker") + begin.len();
    let end = readme
        .find(&format!("<!-- {name}:end -->"))
        .expect("README has the end marker");
    if readme[start..end] == table {
        return;
    }
    if std::env::var_os("ASOGEN_UPDATE_DOCS").is_some() {
        let updated = format!("{}{table}{}", &readme[..start], &readme[end..]);
        std::fs::write(path, updated).unwrap();
    } else {
        panic!(
            "README.md's {name} table is stale; run `ASOGEN_UPDATE_DOCS=1 cargo test --test docs`. Expected:\n{table}"
        );
    }
}

#[test]
fn the_readme_rule_table_is_generated_from_the_rules() {
    readme_block("rules", asogen::rules::markdown_table());
}

#[test]
fn the_readme_lists_every_intended_difference_from_the_release() {
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
    readme_block("differences", table);
}
