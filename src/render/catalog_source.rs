//! `src/catalog/tables.rs`, the compiled-in catalog as Rust constants,
//! generated from `values/catalog.json` (rust-analyzer's sourcegen, as
//! `keys_source` does): every process reads the catalog, and constants
//! cost nothing to read where parsing the JSON was a sixth of `template`.
//! [`text`] reads the file with every check an imported catalog gets
//! ([`Catalog::from_json`]); [`super::sourcegen`] checks the committed
//! tables against it, and `cargo xtask regen` writes them (after `asogen
//! catalog import`, run that).

use std::fmt::Write;

use crate::catalog::{CATALOG_FILE, CATALOG_JSON, Catalog, PolicyRule};

/// The file the tables are written to, from the repository root.
pub(super) const FILE: &str = "src/catalog/tables.rs";

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

/// The text of `src/catalog/tables.rs` values/catalog.json gives, or
/// what is wrong with the catalog.
pub(super) fn text() -> Result<String, String> {
    let catalog = Catalog::from_json(CATALOG_FILE, CATALOG_JSON)
        .map_err(|err| format!("{err}\nhelp: {}", crate::catalog::CatalogError::HELP))?;
    Ok(source(&catalog, CATALOG_JSON))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled-in catalog is values/catalog.json's, read back as it
    /// reads (whether the tables are current is `sourcegen`'s check).
    #[test]
    fn the_builtin_catalog_is_the_catalog_file_s() {
        let catalog = Catalog::from_json(CATALOG_FILE, CATALOG_JSON)
            .unwrap_or_else(|err| panic!("{err}\nhelp: {}", crate::catalog::CatalogError::HELP));
        assert_eq!(*Catalog::builtin(), catalog);
    }
}
