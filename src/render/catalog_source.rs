//! `src/catalog/tables.rs`, the compiled-in catalog as Rust constants,
//! generated from `values/catalog.json` (rust-analyzer's sourcegen, as
//! `keys_source` does): every process reads the catalog, and constants
//! cost nothing to read where parsing the JSON was a sixth of `template`.
//! The test below reads the file with every check an imported catalog gets
//! ([`Catalog::from_json`]) and checks the committed tables against the
//! ones it gives; `cargo xtask regen` has it write them (after `asogen
//! catalog import`, run that).

use std::fmt::Write;
use std::path::Path;

use crate::catalog::{CATALOG_FILE, CATALOG_JSON, Catalog, PolicyRule};

/// The file the tables are written to, from the repository root.
const FILE: &str = "src/catalog/tables.rs";

/// The text of `src/catalog/tables.rs` for a catalog: each string as a
/// Rust literal (`{:?}`), in the layout `Catalog::builtin` reads.
fn source(catalog: &Catalog, json: &str) -> String {
    let mut out = String::from(
        "// Generated from values/catalog.json by `cargo xtask regen`:\n\
         // do not edit. Import a catalog (`asogen catalog import`) and run it.\n\n\
         use super::{RuleRow, WebhookRow};\n\n",
    );
    let list = |items: &[String]| {
        let quoted: Vec<String> = items.iter().map(|item| format!("{item:?}")).collect();
        format!("&[{}]", quoted.join(", "))
    };
    let rule = |rule: &PolicyRule| {
        let PolicyRule {
            api_groups,
            resources,
            resource_names,
            verbs,
        } = rule;
        format!(
            "        [{}, {}, {}, {}],\n",
            list(api_groups),
            list(resources),
            list(resource_names),
            list(verbs)
        )
    };
    let Catalog {
        release,
        groups,
        cluster_roles,
        roles,
        controller,
    } = catalog;
    writeln!(
        out,
        "// checked by every build but the unit tests' (src/catalog.rs)\n\
         #[allow(dead_code)]\n\
         pub(super) const SOURCE_FNV: u64 = {:#018x};\n",
        crate::catalog::fnv1a(json.as_bytes())
    )
    .unwrap();
    writeln!(out, "pub(super) const RELEASE: &str = {release:?};\n").unwrap();
    out.push_str("pub(super) const GROUPS: &[(&str, &[WebhookRow])] = &[\n");
    for group in groups {
        writeln!(out, "    ({:?}, &[", group.group).unwrap();
        for hook in &group.webhooks {
            writeln!(
                out,
                "        [{:?}, {:?}, {:?}],",
                hook.version, hook.resource, hook.kind
            )
            .unwrap();
        }
        out.push_str("    ]),\n");
    }
    out.push_str("];\n");
    for (name, table) in [("CLUSTER_ROLES", cluster_roles), ("ROLES", roles)] {
        writeln!(out, "\npub(super) const {name}: &[(&str, &[RuleRow])] = &[").unwrap();
        for (role, rules) in table {
            writeln!(out, "    ({role:?}, &[").unwrap();
            for r in rules {
                out.push_str(&rule(r));
            }
            out.push_str("    ]),\n");
        }
        out.push_str("];\n");
    }
    writeln!(
        out,
        "\npub(super) const FLAGS: &[&str] = {};\n\npub(super) const ENV: &[&str] = {};",
        list(&controller.flags),
        list(&controller.env)
    )
    .unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::keys_source::ensure_file_contents;

    /// The committed tables are values/catalog.json's, and read back as
    /// it does (run again after it wrote them).
    #[test]
    fn catalog_source_is_the_catalog_file_s() {
        let catalog = Catalog::from_json(CATALOG_FILE, CATALOG_JSON)
            .unwrap_or_else(|err| panic!("{err}\nhelp: {}", crate::catalog::CatalogError::HELP));
        ensure_file_contents(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE),
            &source(&catalog, CATALOG_JSON),
        );
        assert_eq!(*Catalog::builtin(), catalog);
    }
}
