//! Documentation generated from the code stays current: the README's rule
//! table is the rule table's own Markdown. Run with ASOGEN_UPDATE_DOCS=1 to
//! rewrite it.

const BEGIN: &str = "<!-- rules:begin -->\n";
const END: &str = "<!-- rules:end -->";

#[test]
fn the_readme_rule_table_is_generated_from_the_rules() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme
        .find(BEGIN)
        .expect("README has the rules:begin marker")
        + BEGIN.len();
    let end = readme.find(END).expect("README has the rules:end marker");
    let table = asogen::rules::markdown_table();
    if readme[start..end] != table {
        if std::env::var_os("ASOGEN_UPDATE_DOCS").is_some() {
            let updated = format!("{}{table}{}", &readme[..start], &readme[end..]);
            std::fs::write(path, updated).unwrap();
        } else {
            panic!(
                "README.md's rule table is stale; run `ASOGEN_UPDATE_DOCS=1 cargo test --test docs`. Expected:\n{table}"
            );
        }
    }
}
