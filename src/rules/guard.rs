//! The rules as the chart's `fail` guard (a `define` in `_helpers.tpl`),
//! generated from the rule entries: one Go template variable per rule key
//! (the chart default when the key is absent or null), one condition per
//! rule, every broken rule reported with its id and help, so installs that
//! skip the schema (`--skip-schema-validation`, older tools) are refused too.
//! Beside the rules it refuses what asogen's other checks refuse and no
//! schema can: templated values, `crdPattern` entries, labels and
//! annotations. The guard is described as [`Stmt`]s, printed by the same
//! printer and run by the same evaluator as every other template.

use serde_json::Value;

use super::{KeyType, RULES, RuleKey, Test, schema_message};
use crate::catalog::Catalog;
use crate::describe::stmt::{self, Stmt};
use crate::describe::{Expr, Func};

/// The guard's `define` block for the release's catalog.
pub fn chart_guard(chart: &str, catalog: &Catalog) -> String {
    format!(
        "{{{{/* The rules guard: every broken rule of the rule table, reported with\nits id and help through `fail`. */}}}}\n{{{{- define \"{chart}.validateValues\" -}}}}\n{}{{{{- end }}}}\n",
        stmt::print(&guard(chart, catalog))
    )
}

/// The guard's body: every check, then one `fail` naming every problem.
pub fn guard(chart: &str, catalog: &Catalog) -> Vec<Stmt> {
    let mut body = vec![Stmt::let_("root", Expr::AllValues)];
    body.extend(rules_guard());
    body.extend(deleted_keys_guard());
    body.extend(templated_values_guard());
    body.extend(crd_pattern_guard(
        &crate::catalog::crd_pattern::served_groups(catalog),
    ));
    body.extend(metadata_guard());
    body.push(Stmt::when(
        broken(),
        vec![Stmt::Fail(Expr::printf(
            &format!("values break %d rule(s) of {chart}:\n%s"),
            vec![
                call(Func::Len, vec![broken()]),
                call(Func::Join, vec![Expr::str("\n"), broken()]),
            ],
        ))],
    ));
    body
}

fn call(func: Func, args: Vec<Expr>) -> Expr {
    Expr::call(func, args)
}

fn var(name: &str) -> Expr {
    Expr::var(name)
}

/// `$broken`: the problems found so far.
fn broken() -> Expr {
    var("broken")
}

/// `$broken = append $broken PROBLEM`.
fn report(problem: Expr) -> Stmt {
    Stmt::set("broken", call(Func::Append, vec![broken(), problem]))
}

/// `list`: an empty list.
fn empty_list() -> Expr {
    call(Func::List, Vec::new())
}

/// `dict`: an empty map.
fn dict() -> Expr {
    call(Func::Dict, Vec::new())
}

/// The map at `segments` under `$root`, an empty map when any is absent
/// or null.
fn map_at<'s>(segments: impl IntoIterator<Item = &'s str>) -> Expr {
    segments.into_iter().fold(var("root"), |map, segment| {
        map.get(segment).or_default(dict())
    })
}

/// `kindIs KIND VALUE`.
fn kind_is(kind: &str, value: Expr) -> Expr {
    call(Func::KindIs, vec![Expr::str(kind), value])
}

/// The variable holding a key's value: `strategy_type`.
fn key_var(key: RuleKey) -> String {
    key.path().replace('.', "_")
}

/// The variable holding the map at a dotted prefix, `root` for none.
fn map_var(prefix: &[&str]) -> String {
    if prefix.is_empty() {
        "root".into()
    } else {
        format!("{}_map", prefix.join("_"))
    }
}

fn condition(key: RuleKey, test: Test) -> Expr {
    let v = var(&key_var(key));
    let text = |v: Expr| call(Func::ToString, vec![v]);
    match test {
        Test::AtLeast(n) => call(Func::Ge, vec![v.int64(), Expr::int(n)]),
        Test::AtMost(n) => call(Func::Le, vec![v.int64(), Expr::int(n)]),
        Test::Is(expected) => text(v).eq(Expr::str(expected)),
        Test::Set => {
            assert_eq!(key.kind(), KeyType::Any, "Set tests keys of type Any");
            v
        }
        Test::IsNot(expected) => call(Func::Ne, vec![text(v), Expr::str(expected)]),
        Test::True => text(v).eq(Expr::str("true")),
        Test::NotTrue => call(Func::Ne, vec![text(v), Expr::str("true")]),
        Test::Zero => call(
            Func::RegexMatch,
            vec![Expr::str(super::ZERO_PATTERN), text(v)],
        ),
        Test::NotZero => !call(
            Func::RegexMatch,
            vec![Expr::str(super::ZERO_PATTERN), text(v)],
        ),
        // Tests on arguments are tests on fields, never on values.
        Test::FlagOn(_) | Test::FlagNot(..) | Test::EnvNot(..) | Test::EnvOther(..) => {
            unreachable!("no values key holds arguments or an environment")
        }
    }
}

/// One variable per rule key, then one `if` per rule.
fn rules_guard() -> Vec<Stmt> {
    let mut body = Vec::new();
    // The maps on the way to each key, each empty when absent or null.
    let mut maps: Vec<Vec<&str>> = Vec::new();
    for &key in RuleKey::ALL {
        let parts: Vec<&str> = key.path().split('.').collect();
        for depth in 1..parts.len() {
            let prefix = parts[..depth].to_vec();
            if !maps.contains(&prefix) {
                let parent = var(&map_var(&prefix[..depth - 1]));
                body.push(Stmt::let_(
                    &map_var(&prefix),
                    parent.get(prefix[depth - 1]).or_default(dict()),
                ));
                maps.push(prefix);
            }
        }
    }
    for &key in RuleKey::ALL {
        let parts: Vec<&str> = key.path().split('.').collect();
        let (leaf, prefix) = parts.split_last().expect("paths are not empty");
        let parent = var(&map_var(prefix));
        let value = parent.clone().get(leaf);
        // A key of type Any holds whether it is set (Go templates cannot
        // assign nil).
        let (initial, written) = match key.kind() {
            KeyType::Any => (Expr::Lit(Value::Bool(false)), Expr::Lit(Value::Bool(true))),
            KeyType::Int => (Expr::Lit(key.default()), value.clone().int64()),
            _ => (Expr::Lit(key.default()), value.clone()),
        };
        let name = key_var(key);
        body.push(Stmt::let_(&name, initial));
        let set = Expr::all(vec![
            call(Func::HasKey, vec![parent, Expr::str(*leaf)]),
            call(
                Func::Ne,
                vec![call(Func::KindOf, vec![value]), Expr::str("invalid")],
            ),
        ]);
        body.push(Stmt::when(set, vec![Stmt::set(&name, written)]));
    }
    body.push(Stmt::let_("broken", empty_list()));
    for rule in RULES {
        let one_of = |mut exprs: Vec<Expr>, join: fn(Vec<Expr>) -> Expr| {
            if exprs.len() == 1 {
                exprs.remove(0)
            } else {
                join(exprs)
            }
        };
        let alternatives: Vec<Expr> = rule
            .values_breach()
            .into_iter()
            .map(|alternative| {
                let conditions = alternative
                    .into_iter()
                    .map(|(key, test)| condition(key, test))
                    .collect();
                one_of(conditions, Expr::all)
            })
            .collect();
        // A rule values cannot break has nothing to check here.
        if alternatives.is_empty() {
            continue;
        }
        let test = one_of(alternatives, Expr::any);
        body.push(Stmt::when(
            test,
            vec![report(Expr::str(schema_message(rule)))],
        ));
    }
    body
}

/// The keys the chart needs that a `null` deleted (Helm's merge with the
/// defaults removes a key set to null, before the schema sees the
/// values): each whose enclosing maps are there, as asogen reports them
/// ([`crate::values::deleted_needed_keys`]).
fn deleted_keys_guard() -> Vec<Stmt> {
    crate::values::needed_keys()
        .map(|key| {
            let segments: Vec<&str> = key.segments().collect();
            let mut present: Vec<Expr> = (0..segments.len())
                .map(|depth| {
                    call(
                        Func::HasKey,
                        vec![
                            map_at(segments[..depth].iter().copied()),
                            Expr::str(segments[depth]),
                        ],
                    )
                })
                .collect();
            let deleted = !present.pop().expect("paths are not empty");
            present.push(deleted);
            let test = if present.len() == 1 {
                present.remove(0)
            } else {
                Expr::all(present)
            };
            Stmt::when(
                test,
                vec![report(Expr::str(crate::values::deleted_key_line(key)))],
            )
        })
        .collect()
}

/// The values the chart evaluates with `tpl`: one whose text holds an
/// action other than `{{ .Values.KEY }}` is refused, as asogen refuses it
/// (its `tpl` evaluates only those), and so is a `{{ .Values.KEY }}` that
/// asogen's `tpl` refuses ([`Refusal`]): a key named like a method of
/// Helm's values, a key path naming a secret, a map or a list. Every list
/// and pattern is printed from the one Rust definition.
///
/// [`Refusal`]: crate::describe::expr::Refusal
fn templated_values_guard() -> Vec<Stmt> {
    use crate::describe::expr::{Refusal, TEMPLATE_ACTION, TPL_HELP, VALUES_METHODS};
    use crate::redact::{extra_env_word, not_secret, secret_word_pattern};
    // Each templated value as (path, value), the value "" when absent.
    let templated = crate::keys::templated()
        .map(|key| {
            let mut parts: Vec<&str> = key.segments().collect();
            let leaf = parts.pop().expect("paths are not empty");
            call(
                Func::List,
                vec![Expr::str(key.path()), map_at(parts).get(leaf)],
            )
        })
        .collect();
    let reason = |refusal: Refusal| format!("%s: {}; help: {TPL_HELP}", refusal.text());
    let append_reason = |refusal: Refusal| {
        report(Expr::printf(
            &reason(refusal),
            vec![var("path"), var("action")],
        ))
    };
    let action = || Expr::str(TEMPLATE_ACTION);
    let set_true = |name: &str| Stmt::set(name, Expr::Lit(Value::Bool(true)));
    let one_action = vec![
        Stmt::let_(
            "keys",
            call(
                Func::Rest,
                vec![call(
                    Func::RegexFindAll,
                    vec![
                        Expr::str("[A-Za-z_][A-Za-z0-9_]*"),
                        var("action"),
                        Expr::int(-1),
                    ],
                )],
            ),
        ),
        Stmt::let_("words", empty_list()),
        Stmt::let_("method", Expr::Lit(Value::Bool(false))),
        Stmt::let_("secret", Expr::Lit(Value::Bool(false))),
        Stmt::each(
            "key",
            var("keys"),
            vec![
                Stmt::let_("word", call(Func::Lower, vec![var("key")])),
                Stmt::set("words", call(Func::Append, vec![var("words"), var("word")])),
                Stmt::when(
                    call(Func::Has, vec![var("key"), var("valuesMethods")]),
                    vec![set_true("method")],
                ),
                Stmt::when(
                    Expr::all(vec![
                        !call(Func::Has, vec![var("word"), var("notSecret")]),
                        call(Func::RegexMatch, vec![var("secretWord"), var("word")]),
                    ]),
                    vec![set_true("secret")],
                ),
            ],
        ),
        Stmt::when(
            Expr::all(vec![
                call(Func::Has, vec![Expr::str(extra_env_word()), var("words")]),
                call(Func::Last, vec![var("words")]).eq(Expr::str("value")),
            ]),
            vec![set_true("secret")],
        ),
        // What the action names, "" once the path leaves the maps.
        Stmt::let_("node", var("root")),
        Stmt::each(
            "key",
            var("keys"),
            vec![Stmt::If(
                kind_is("map", var("node")),
                vec![Stmt::set(
                    "node",
                    call(Func::Get, vec![var("node"), var("key")]),
                )],
                vec![Stmt::set("node", Expr::str(""))],
            )],
        ),
        Stmt::If(
            var("method"),
            vec![append_reason(Refusal::Method)],
            vec![Stmt::If(
                var("secret"),
                vec![append_reason(Refusal::Secret)],
                vec![Stmt::when(
                    Expr::any(vec![
                        kind_is("map", var("node")),
                        kind_is("slice", var("node")),
                    ]),
                    vec![append_reason(Refusal::Collection)],
                )],
            )],
        ),
    ];
    let one_value = vec![
        Stmt::let_(
            "path",
            call(Func::Index, vec![var("templated"), Expr::int(0)]),
        ),
        Stmt::let_(
            "text",
            call(Func::Index, vec![var("templated"), Expr::int(1)]),
        ),
        Stmt::when(
            kind_is("string", var("text")),
            vec![
                Stmt::when(
                    call(
                        Func::Contains,
                        vec![
                            Expr::str("{{"),
                            call(
                                Func::RegexReplaceAllLiteral,
                                vec![action(), var("text"), Expr::str(" ")],
                            ),
                        ],
                    ),
                    vec![report(Expr::printf(
                        &format!(
                            "%s: only {{{{ .Values.KEY }}}} substitutions are evaluated in it; help: {TPL_HELP}"
                        ),
                        vec![var("path")],
                    ))],
                ),
                Stmt::each(
                    "action",
                    call(
                        Func::RegexFindAll,
                        vec![action(), var("text"), Expr::int(-1)],
                    ),
                    one_action,
                ),
            ],
        ),
    ];
    vec![
        Stmt::let_("valuesMethods", Expr::strings(VALUES_METHODS)),
        Stmt::let_("notSecret", Expr::strings(not_secret())),
        Stmt::let_("secretWord", Expr::str(secret_word_pattern())),
        Stmt::each("templated", call(Func::List, templated), one_value),
    ]
}

/// `crdPattern` as asogen checks it against the catalog
/// ([`crate::check::crds`]): each entry is `group/kind`, names a kind, and
/// its group matches an API group the release serves as ASO matches it
/// (`*` any run, `?` any one character, case folded).
fn crd_pattern_guard(served_groups: &[&str]) -> Vec<Stmt> {
    use crate::catalog::crd_pattern::{
        CASE_FOLDED, ENTRY_SEPARATOR, KIND_SEPARATOR, ONE_CHARACTER, Problem, WILDCARD, quote,
    };
    let split = |text: Expr| call(Func::SplitList, vec![Expr::str(ENTRY_SEPARATOR), text]);
    let problem =
        |problem: Problem| report(Expr::printf(&problem.guard_text(), vec![var("entry")]));
    // The group as ASO matches it (crd_pattern::group_regex): quoted, the
    // quoted wildcards as any run and any one character, case folded.
    let group = call(Func::Index, vec![var("parts"), Expr::int(0)]);
    let any_run = call(
        Func::Replace,
        vec![
            Expr::str(quote(WILDCARD)),
            Expr::str(".*"),
            call(Func::RegexQuoteMeta, vec![group]),
        ],
    );
    let any_one = call(
        Func::Replace,
        vec![Expr::str(quote(ONE_CHARACTER)), Expr::str("."), any_run],
    );
    let glob = Expr::printf(&format!("{CASE_FOLDED}^%s$"), vec![any_one]);
    let served_entry = vec![
        Stmt::let_("glob", glob),
        Stmt::let_("served", Expr::Lit(Value::Bool(false))),
        Stmt::each(
            "group",
            var("servedGroups"),
            vec![Stmt::when(
                call(Func::RegexMatch, vec![var("glob"), var("group")]),
                vec![Stmt::set("served", Expr::Lit(Value::Bool(true)))],
            )],
        ),
        Stmt::when(!var("served"), vec![problem(Problem::NotServed)]),
    ];
    let kind = call(
        Func::Join,
        vec![
            Expr::str(KIND_SEPARATOR),
            call(Func::Rest, vec![var("parts")]),
        ],
    );
    let one_entry = vec![
        Stmt::let_("entry", call(Func::Trim, vec![var("crdEntry")])),
        Stmt::If(
            Expr::all(vec![
                var("entry"),
                !call(
                    Func::Contains,
                    vec![Expr::str(KIND_SEPARATOR), var("entry")],
                ),
            ]),
            vec![problem(Problem::NotGroupKind)],
            vec![Stmt::when(
                var("entry"),
                vec![
                    Stmt::let_(
                        "parts",
                        call(
                            Func::SplitList,
                            vec![Expr::str(KIND_SEPARATOR), var("entry")],
                        ),
                    ),
                    Stmt::If(!kind, vec![problem(Problem::NoKind)], served_entry),
                ],
            )],
        ),
    ];
    let pattern = var("crdPattern");
    vec![
        Stmt::let_(
            "crdPattern",
            var("root").get(crate::keys::CRD_PATTERN.path()),
        ),
        Stmt::let_("crdEntries", empty_list()),
        Stmt::If(
            kind_is("string", pattern.clone()),
            vec![Stmt::set("crdEntries", split(pattern.clone()))],
            vec![Stmt::when(
                kind_is("slice", pattern.clone()),
                vec![Stmt::each(
                    "item",
                    pattern,
                    vec![Stmt::when(
                        kind_is("string", var("item")),
                        vec![Stmt::set(
                            "crdEntries",
                            call(Func::Concat, vec![var("crdEntries"), split(var("item"))]),
                        )],
                    )],
                )],
            )],
        ),
        Stmt::let_("servedGroups", Expr::strings(served_groups)),
        Stmt::each("crdEntry", var("crdEntries"), one_entry),
    ]
}

/// The labels and annotations maps as the API server checks them (and as
/// asogen and the schema do): keys (annotation keys lower cased, with Go's
/// own `lower`), label values, the pod labels kept off the selector labels,
/// and the annotations' total size in bytes (Go's `len`), which no schema
/// can express.
fn metadata_guard() -> Vec<Stmt> {
    use crate::metadata::{METADATA_VALUES, MetadataKind};
    use crate::names::metadata_codes::{
        ANNOTATION_KEY, ANNOTATIONS_SIZE, LABEL_KEY, LABEL_VALUE, SELECTOR_LABEL,
    };
    use crate::names::{ANNOTATIONS_MAX_BYTES, KEY_NAME_MAX, LABEL_VALUE_MAX};
    let [syntax, prefix_length] = crate::names::key_patterns(false);
    let value_pattern = crate::names::label_value_pattern();
    let matches =
        |pattern: &str, text: Expr| call(Func::RegexMatch, vec![Expr::str(pattern), text]);
    let size = || var("size");
    let mut body = Vec::new();
    for (index, map) in METADATA_VALUES.iter().enumerate() {
        let name = format!("metadata{index}");
        let path = map.key.path();
        let annotations = map.kind == MetadataKind::Annotations;
        let (code, key) = match map.kind {
            MetadataKind::Labels => (LABEL_KEY, var("key")),
            MetadataKind::Annotations => (ANNOTATION_KEY, call(Func::Lower, vec![var("key")])),
        };
        let help = format!(
            "help: write an optional DNS subdomain prefix and '/', then at most {KEY_NAME_MAX} letters, digits, '-', '_' or '.' starting and ending with a letter or digit"
        );
        let mut entry = vec![Stmt::when(
            !Expr::all(vec![
                matches(&syntax, key.clone()),
                matches(&prefix_length, key),
            ]),
            vec![report(Expr::printf(
                &format!(
                    "{code}: {path} key %q is not a valid key in {}; {help}",
                    map.lands_on()
                ),
                vec![var("key")],
            ))],
        )];
        let value_text = call(Func::ToString, vec![var("value")]);
        entry.push(match map.kind {
            MetadataKind::Labels => Stmt::when(
                !matches(&value_pattern, value_text),
                vec![report(Expr::printf(
                    &format!(
                        "{LABEL_VALUE}: the value of {path}.%s is not a valid label value in {}; help: write an empty string or at most {LABEL_VALUE_MAX} letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
                        map.lands_on()
                    ),
                    vec![var("key")],
                ))],
            ),
            MetadataKind::Annotations => Stmt::set(
                "size",
                call(
                    Func::Add,
                    vec![
                        size(),
                        call(Func::Len, vec![var("key")]),
                        call(Func::Len, vec![value_text]),
                    ],
                ),
            ),
        });
        let mut checks = Vec::new();
        if annotations {
            checks.push(Stmt::let_("size", Expr::int(0)));
        }
        checks.push(Stmt::each_entry("key", "value", var(&name), entry));
        for &(key, value) in map.selector {
            checks.push(Stmt::when(
                call(Func::HasKey, vec![var(&name), Expr::str(key)]),
                vec![report(Expr::str(format!(
                    "{SELECTOR_LABEL}: {path}.{key} is a selector label of the Deployment, which the chart sets ({key}: {value}): another value leaves the Deployment selecting none of its pods; help: remove {key} from {path}"
                )))],
            ));
        }
        if annotations {
            // The chart's own entries count unless the values replace them.
            for &(key, value) in map.written {
                checks.push(Stmt::when(
                    !call(Func::HasKey, vec![var(&name), Expr::str(key)]),
                    vec![Stmt::set(
                        "size",
                        call(
                            Func::Add,
                            vec![size(), Expr::int((key.len() + value.len()) as i64)],
                        ),
                    )],
                ));
            }
            checks.push(Stmt::when(
                call(Func::Gt, vec![size(), Expr::int(ANNOTATIONS_MAX_BYTES as i64)]),
                vec![report(Expr::printf(
                    &format!(
                        "{ANNOTATIONS_SIZE}: {path} make {} %d bytes, more than the {ANNOTATIONS_MAX_BYTES} the API server takes; help: keep large data out of annotations",
                        map.lands_on()
                    ),
                    vec![size()],
                ))],
            ));
        }
        body.push(Stmt::let_(&name, map_at(map.key.segments())));
        body.push(Stmt::when(kind_is("map", var(&name)), checks));
    }
    body
}

#[cfg(test)]
mod tests {
    //! The guard, run by the evaluator over many values sets, refuses
    //! exactly what asogen's checks refuse: the rules, `crdPattern` entries
    //! and templated values. (The real Helm engine runs the printed guard
    //! in `tests/real_tools.rs`, `tests/without_cluster/chart_injection.rs` and
    //! `tests/without_cluster/tpl_meaning.rs`.)

    use super::*;
    use crate::catalog::crd_pattern as crds;
    use crate::describe::{Capabilities, Scope};
    use serde_json::json;

    const CHART: &str = "chart";

    /// The values as Helm holds them after reading a values file: the
    /// chart's defaults with the file merged over them, every number a
    /// float64.
    fn as_helm_reads(case: &Value, floats: bool) -> Value {
        let mut values = crate::read::default_values();
        crate::read::merge(&mut values, case);
        if floats {
            helm_values::merge::as_float64(&mut values);
        }
        values
    }

    /// The problems the guard reports, one a line; none when it passes.
    fn guard_refusals(guard: &[Stmt], values: &Value) -> Vec<String> {
        let capabilities = Capabilities::default();
        let scope = Scope {
            values,
            namespace: "ns",
            release_name: "r",
            release_service: "Helm",
            chart_name: crate::names::CHART_NAME,
            chart_version: "1.0.0",
            app_version: "v1.0.0",
            capabilities: &capabilities,
            is_secret: crate::describe::IS_SECRET,
        };
        match stmt::run(guard, &scope) {
            Ok(None) => Vec::new(),
            Ok(Some(message)) => {
                let mut lines = message.lines();
                let head = lines.next().unwrap();
                let found: Vec<String> = lines.map(String::from).collect();
                assert_eq!(
                    head,
                    format!("values break {} rule(s) of {CHART}:", found.len())
                );
                found
            }
            Err(err) => panic!("the guard did not run on {values}: {err}"),
        }
    }

    /// What asogen refuses in the same values, as the guard words it.
    fn asogen_refusals(values: &Value, served: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = super::super::check_json(values)
            .expect("the cases have well-typed rule keys")
            .iter()
            .map(|violation| schema_message(&violation.rule))
            .collect();
        out.extend(
            crate::values::deleted_needed_keys(values)
                .into_iter()
                .map(crate::values::deleted_key_line),
        );
        let pattern = values
            .get(crate::keys::CRD_PATTERN.path())
            .unwrap_or(&Value::Null);
        for (_, entry) in crds::entries(pattern) {
            if let Some(problem) = crds::classify(entry, served) {
                let quoted = crate::describe::funcs::go_quote(entry);
                out.push(problem.guard_text().replacen("%q", &quoted, 1));
            }
        }
        out
    }

    fn assert_agree(guard: &[Stmt], case: &Value, served: &[&str]) {
        let expected = asogen_refusals(&as_helm_reads(case, false), served);
        // Read from a file (float64) or set with --set (int64): one verdict.
        for floats in [false, true] {
            let found = guard_refusals(guard, &as_helm_reads(case, floats));
            assert_eq!(found, expected, "{case} (numbers as floats: {floats})");
        }
    }

    fn catalog() -> std::sync::Arc<Catalog> {
        Catalog::builtin()
    }

    #[test]
    fn the_guard_breaks_the_rules_asogen_breaks() {
        let catalog = catalog();
        let guard = guard(CHART, &catalog);
        let served = crds::served_groups(&catalog);
        let absent = Value::Null;
        let replicas = [
            absent.clone(),
            json!(null),
            json!(0),
            json!(1),
            json!(2),
            json!(3),
            json!(-1),
        ];
        let types = [
            absent.clone(),
            json!(null),
            json!("Recreate"),
            json!("RollingUpdate"),
        ];
        let rolling = [
            absent.clone(),
            json!(null),
            json!({}),
            json!({"maxSurge": 0, "maxUnavailable": 0}),
            json!({"maxSurge": "0%", "maxUnavailable": "0%"}),
            json!({"maxSurge": 1, "maxUnavailable": 0}),
            json!({"maxUnavailable": "0%"}),
            json!({"maxSurge": 0}),
        ];
        let gates = [absent.clone(), json!(null), json!(true), json!(false)];
        // `absent` leaves the key out; a JSON null sets it to null.
        let with =
            |map: &mut serde_json::Map<String, Value>, key: &str, value: &Value, present: bool| {
                if present {
                    map.insert(key.into(), value.clone());
                }
            };
        let mut cases = 0;
        let mut refused = 0;
        for (r, replica) in replicas.iter().enumerate() {
            for (t, kind) in types.iter().enumerate() {
                for (u, update) in rolling.iter().enumerate() {
                    for (g, gate) in gates.iter().enumerate() {
                        let mut strategy = serde_json::Map::new();
                        with(&mut strategy, "type", kind, t > 0);
                        with(&mut strategy, "rollingUpdate", update, u > 0);
                        let mut gates = serde_json::Map::new();
                        with(&mut gates, "singleReplicaRollingUpdate", gate, g > 0);
                        let mut case = serde_json::Map::new();
                        with(&mut case, "replicaCount", replica, r > 0);
                        case.insert("strategy".into(), Value::Object(strategy));
                        case.insert("featureGates".into(), Value::Object(gates));
                        let case = Value::Object(case);
                        assert_agree(&guard, &case, &served);
                        cases += 1;
                        refused += usize::from(
                            !asogen_refusals(&as_helm_reads(&case, false), &served).is_empty(),
                        );
                    }
                }
            }
        }
        for case in [
            json!({"strategy": null}),
            json!({"featureGates": null, "strategy": {"type": "RollingUpdate"}}),
        ] {
            assert_agree(&guard, &case, &served);
        }
        // Both verdicts occur, often.
        assert!(
            refused > cases / 4 && refused < cases,
            "{refused} of {cases} refused"
        );
    }

    #[test]
    fn the_guard_breaks_the_split_rules_asogen_breaks() {
        let catalog = catalog();
        let guard = guard(CHART, &catalog);
        let served = crds::served_groups(&catalog);
        // Each key: left out (None), null, or a value.
        let topologies = [
            None,
            Some(json!(null)),
            Some(json!("single")),
            Some(json!("split")),
            Some(json!("bridge")),
        ];
        let webhooks = [None, Some(json!(0)), Some(json!(3))];
        let surges = [
            None,
            Some(json!(0)),
            Some(json!("0%")),
            Some(json!("50%")),
            Some(json!(1)),
        ];
        let controllers = [None, Some(json!(0)), Some(json!(1))];
        let paused = [None, Some(json!(true)), Some(json!(false))];
        let tenants = [None, Some(json!(true))];
        let modes = [None, Some(json!("webhooks"))];
        let set = |map: &mut Value, path: &[&str], value: &Option<Value>| {
            let Some(value) = value else { return };
            let (leaf, parents) = path.split_last().unwrap();
            let mut node = map;
            for part in parents {
                node = node
                    .as_object_mut()
                    .unwrap()
                    .entry(*part)
                    .or_insert_with(|| json!({}));
            }
            node[*leaf] = value.clone();
        };
        let (mut cases, mut refused) = (0, 0);
        for topology in &topologies {
            for webhook in &webhooks {
                for surge in &surges {
                    for controller in &controllers {
                        for pause in &paused {
                            for tenant in &tenants {
                                for mode in &modes {
                                    let mut case = json!({});
                                    set(&mut case, &["topology"], topology);
                                    set(&mut case, &["split", "webhooks", "replicaCount"], webhook);
                                    set(&mut case, &["split", "webhooks", "maxSurge"], surge);
                                    set(
                                        &mut case,
                                        &["split", "controller", "replicaCount"],
                                        controller,
                                    );
                                    set(&mut case, &["split", "controller", "paused"], pause);
                                    set(&mut case, &["multitenant", "enable"], tenant);
                                    set(&mut case, &["azureOperatorMode"], mode);
                                    assert_agree(&guard, &case, &served);
                                    cases += 1;
                                    refused += usize::from(
                                        !asogen_refusals(&as_helm_reads(&case, false), &served)
                                            .is_empty(),
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        // Both verdicts occur, often (most cases are of topology single).
        assert!(
            refused > cases / 8 && refused < cases,
            "{refused} of {cases} refused"
        );
    }

    #[test]
    fn the_guard_refuses_the_crd_pattern_entries_asogen_refuses() {
        let catalog = catalog();
        let guard = guard(CHART, &catalog);
        let served = crds::served_groups(&catalog);
        let patterns = [
            json!("resources.azure.com/*"),
            json!("*.azure.com/*"),
            json!("network.frontdoor.azure.com/FrontDoor"),
            json!("resorces.azure.com/*"),
            json!("resources.azure.com"),
            json!("resources.azure.com/"),
            json!("resources.azure.com//"),
            json!("resources.azure.com/a/b"),
            json!(" ; ;"),
            json!(""),
            json!("*"),
            json!("*/*"),
            json!("/x"),
            json!(".*/*"),
            json!("res*.azure.com/*"),
            json!("*.frontdoor.*/x"),
            json!("*frontdoor*/x"),
            json!("Resources.azure.com/*"),
            json!("resources.azure.com./*"),
            json!("resources\\.azure.com/*"),
            json!("(resources).azure.com/*"),
            json!("[r]esources.azure.com/*"),
            json!("resources.azure.com$/*"),
            json!("é.azure.com/x"),
            json!("\t resources.azure.com/x \u{a0}"),
            json!("quote\"d/x;new\nline/y"),
            json!("network.frontdoor.azure.com/Foo;resources.azure.com;keyvault.azure.com/"),
            json!([
                "resources.azure.com/*",
                3,
                null,
                "x/y;  ; keyvault.azure.com/Vault",
                ""
            ]),
            json!([]),
            json!(5),
            json!(true),
            json!({"a": "b"}),
            json!(null),
        ];
        let mut refused = 0;
        for pattern in patterns {
            let case = json!({"crdPattern": pattern});
            assert_agree(&guard, &case, &served);
            refused +=
                usize::from(!asogen_refusals(&as_helm_reads(&case, false), &served).is_empty());
        }
        assert!(refused >= 15, "only {refused} refused");
    }

    #[test]
    fn the_guard_refuses_the_templated_values_asogen_refuses() {
        let catalog = catalog();
        let guard = guard(CHART, &catalog);
        // Texts Helm's tpl evaluates (no missing map on the way, which
        // Helm's own tpl refuses after the guard).
        let texts = [
            "{{ .Values.image.repositoryBase }}:{{ .Values.image.tag }}",
            "plain/image:v1",
            "x/{{ .Values.azureClientSecret }}",
            "{{ .Values.YAML }}",
            "{{ .Values.image.AsMap }}",
            "{{ .Values.image }}",
            "{{ .Values.nodeSelector }}",
            "{{ .Values.extraEnv }}",
            "{{ .Values.absent }}",
            "{{ include \"x\" . }}",
            "{{- .Values.metrics.port -}}",
            "{{.Values.image.tag}}{{ .Values.image.tag | quote }}",
            "{{ .Values.serviceAccount.annotations }}",
            "{{ .Values.azureTenantID }}",
            "{{ .Values.azureClientCertificatePassword }}",
            "a {{ b",
        ];
        let mut refused = 0;
        for text in texts {
            for key in crate::keys::templated() {
                let mut case = json!({});
                let mut node = &mut case;
                let mut parts: Vec<&str> = key.segments().collect();
                let leaf = parts.pop().unwrap();
                for part in parts {
                    node = node
                        .as_object_mut()
                        .unwrap()
                        .entry(part)
                        .or_insert_with(|| json!({}));
                }
                node[leaf] = json!(text);
                let values = as_helm_reads(&case, true);
                let asogen = crate::describe::expr::tpl(
                    text,
                    &as_helm_reads(&case, false),
                    crate::describe::IS_SECRET,
                )
                .is_err();
                let prefix = format!("{}: ", key.path());
                let found = guard_refusals(&guard, &values);
                let guard_refuses = found.iter().any(|line| line.starts_with(&prefix));
                assert_eq!(
                    guard_refuses,
                    asogen,
                    "{} = {text:?}: {found:?}",
                    key.path()
                );
                refused += usize::from(asogen);
            }
        }
        assert!(refused >= 10, "only {refused} refused");
    }

    #[test]
    fn the_guard_prints_as_one_define() {
        let text = chart_guard(CHART, &catalog());
        assert!(
            text.contains("{{- define \"chart.validateValues\" -}}\n{{- $root := $.Values }}\n")
        );
        assert!(text.ends_with("{{- end }}\n{{- end }}\n"));
        // Every action trims the line break before it: the define prints
        // nothing unless it fails.
        for line in text.lines().skip(3) {
            assert!(line.starts_with("{{- "), "{line}");
        }
    }
}
