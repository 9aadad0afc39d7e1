//! The rules as the chart's `fail` guard (a `define` in `_helpers.tpl`),
//! generated from the rule entries: one Go template variable per rule key
//! (the chart default when the key is absent or null), one condition per
//! rule, every broken rule reported with its id and help, so installs that
//! skip the schema (`--skip-schema-validation`, older tools) are refused too.

use super::{KeyType, RULES, RuleKey, Test, schema_message};

/// The Go variable holding a key's value: `$strategy_type`.
fn var(key: RuleKey) -> String {
    format!("${}", key.path().replace('.', "_"))
}

/// The Go variable holding the map at a dotted prefix, `$root` for none.
fn map_var(prefix: &[&str]) -> String {
    if prefix.is_empty() {
        "$root".into()
    } else {
        format!("${}_map", prefix.join("_"))
    }
}

fn go_literal(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "nil".into(),
        other => other.to_string(),
    }
}

fn condition(key: RuleKey, test: Test) -> String {
    let v = var(key);
    match test {
        Test::AtLeast(n) => format!("(ge (int64 {v}) {n})"),
        Test::AtMost(n) => format!("(le (int64 {v}) {n})"),
        Test::Is(text) => format!("(eq (toString {v}) {text:?})"),
        Test::Set => {
            assert_eq!(key.kind(), KeyType::Any, "Set tests keys of type Any");
            v
        }
        Test::NotTrue => format!("(ne (toString {v}) \"true\")"),
        Test::Zero => format!("(has (toString {v}) (list \"0\" \"0%\"))"),
    }
}

/// The guard's `define` block; `served_groups` are the API groups the
/// release serves (what `crdPattern` entries must name).
pub fn chart_guard(chart: &str, served_groups: &[&str]) -> String {
    let mut out = format!(
        "{{{{/* The rules guard: every broken rule of the rule table, reported with\nits id and help through `fail`. */}}}}\n{{{{- define \"{chart}.validateValues\" -}}}}\n{{{{- $root := .Values }}}}\n"
    );
    // The maps on the way to each key, each `dict` when absent or null.
    let mut maps: Vec<Vec<&str>> = Vec::new();
    for key in RuleKey::ALL {
        let parts: Vec<&str> = key.path().split('.').collect();
        for depth in 1..parts.len() {
            let prefix = parts[..depth].to_vec();
            if !maps.contains(&prefix) {
                out.push_str(&format!(
                    "{{{{- {} := (get {} {:?}) | default dict }}}}\n",
                    map_var(&prefix),
                    map_var(&prefix[..depth - 1]),
                    prefix[depth - 1]
                ));
                maps.push(prefix);
            }
        }
    }
    for key in RuleKey::ALL {
        let parts: Vec<&str> = key.path().split('.').collect();
        let (leaf, prefix) = parts.split_last().expect("paths are not empty");
        let parent = map_var(prefix);
        let v = var(key);
        let value = format!("(get {parent} {leaf:?})");
        // A key of type Any holds whether it is set (Go templates cannot
        // assign nil).
        let (initial, written) = match key.kind() {
            KeyType::Any => ("false".to_string(), "true".to_string()),
            KeyType::Int => (go_literal(&key.default()), format!("int64 {value}")),
            _ => (go_literal(&key.default()), value.clone()),
        };
        out.push_str(&format!("{{{{- {v} := {initial} }}}}\n"));
        out.push_str(&format!(
            "{{{{- if and (hasKey {parent} {leaf:?}) (ne (kindOf {value}) \"invalid\") }}}}{{{{- {v} = {written} }}}}{{{{- end }}}}\n"
        ));
    }
    out.push_str("{{- $broken := list }}\n");
    for rule in RULES {
        let conditions: Vec<String> = rule
            .breach
            .iter()
            .map(|c| condition(c.key, c.test))
            .collect();
        let test = if conditions.len() == 1 {
            conditions[0].clone()
        } else {
            format!("and {}", conditions.join(" "))
        };
        out.push_str(&format!(
            "{{{{- if {test} }}}}\n{{{{- $broken = append $broken {} }}}}\n{{{{- end }}}}\n",
            serde_json::Value::from(schema_message(rule))
        ));
    }
    out.push_str(&templated_values_guard());
    out.push_str(&crd_pattern_guard(served_groups));
    out.push_str(&metadata_guard());
    out.push_str(&format!(
        "{{{{- if $broken }}}}\n{{{{- fail (printf \"values break %d rule(s) of {chart}:\\n%s\" (len $broken) (join \"\\n\" $broken)) }}}}\n{{{{- end }}}}\n{{{{- end }}}}\n"
    ));
    out
}

/// The values the chart evaluates with `tpl`: one whose text holds an
/// action other than `{{ .Values.KEY }}` is refused, as asogen refuses it
/// (its `tpl` evaluates only those), and so is a `{{ .Values.KEY }}` that
/// asogen's `tpl` refuses ([`Refusal`]): a key named like a method of
/// Helm's values, a key path naming a secret, a map or a list. Every list
/// and pattern is printed from the one Rust definition.
fn templated_values_guard() -> String {
    use crate::describe::expr::{Refusal, TEMPLATE_ACTION, TPL_HELP, VALUES_METHODS};
    use crate::redact::{extra_env_word, not_secret, secret_word_pattern};
    let json = |text: &str| serde_json::Value::from(text).to_string();
    let go_list = |items: &[&str]| {
        let items: Vec<String> = items.iter().map(|item| json(item)).collect();
        format!("(list {})", items.join(" "))
    };
    // Each templated value as (path, value), the value "" when absent.
    let mut templated = Vec::new();
    for key in crate::keys::templated() {
        let path = key.path();
        let mut parts: Vec<&str> = key.segments().collect();
        let leaf = parts.pop().expect("paths are not empty");
        let mut map = "$root".to_string();
        for parent in parts {
            map = format!("((get {map} {parent:?}) | default dict)");
        }
        templated.push(format!("(list {} (get {map} {leaf:?}))", json(path)));
    }
    let reason = |refusal: Refusal| json(&format!("%s: {}; help: {TPL_HELP}", refusal.text()));
    format!(
        r#"{{{{- $valuesMethods := {methods} }}}}
{{{{- $notSecret := {not_secret} }}}}
{{{{- $secretWord := {secret_word} }}}}
{{{{- range (list {templated}) }}}}
{{{{- $path := index . 0 }}}}
{{{{- $text := index . 1 }}}}
{{{{- if kindIs "string" $text }}}}
{{{{- if contains "{{{{" (regexReplaceAllLiteral {action} $text " ") }}}}
{{{{- $broken = append $broken (printf {only} $path) }}}}
{{{{- end }}}}
{{{{- range regexFindAll {action} $text -1 }}}}
{{{{- $action := . }}}}
{{{{- $keys := rest (regexFindAll "[A-Za-z_][A-Za-z0-9_]*" $action -1) }}}}
{{{{- $words := list }}}}
{{{{- $method := false }}}}
{{{{- $secret := false }}}}
{{{{- range $keys }}}}
{{{{- $word := lower . }}}}
{{{{- $words = append $words $word }}}}
{{{{- if has . $valuesMethods }}}}{{{{- $method = true }}}}{{{{- end }}}}
{{{{- if and (not (has $word $notSecret)) (regexMatch $secretWord $word) }}}}{{{{- $secret = true }}}}{{{{- end }}}}
{{{{- end }}}}
{{{{- if and (has {extra_env} $words) (eq (last $words) "value") }}}}{{{{- $secret = true }}}}{{{{- end }}}}
{{{{- $node := $root }}}}
{{{{- range $keys }}}}{{{{- if kindIs "map" $node }}}}{{{{- $node = get $node . }}}}{{{{- else }}}}{{{{- $node = "" }}}}{{{{- end }}}}{{{{- end }}}}
{{{{- if $method }}}}
{{{{- $broken = append $broken (printf {method} $path $action) }}}}
{{{{- else if $secret }}}}
{{{{- $broken = append $broken (printf {secret} $path $action) }}}}
{{{{- else if or (kindIs "map" $node) (kindIs "slice" $node) }}}}
{{{{- $broken = append $broken (printf {collection} $path $action) }}}}
{{{{- end }}}}
{{{{- end }}}}
{{{{- end }}}}
{{{{- end }}}}
"#,
        methods = go_list(&VALUES_METHODS),
        not_secret = go_list(&not_secret().iter().map(String::as_str).collect::<Vec<_>>()),
        secret_word = json(&secret_word_pattern()),
        templated = templated.join(" "),
        action = json(TEMPLATE_ACTION),
        only = json(&format!(
            "%s: only {{{{ .Values.KEY }}}} substitutions are evaluated in it; help: {TPL_HELP}"
        )),
        extra_env = json(extra_env_word()),
        method = reason(Refusal::Method),
        secret = reason(Refusal::Secret),
        collection = reason(Refusal::Collection),
    )
}

/// `crdPattern` as asogen checks it against the catalog: each `;`-separated
/// entry is `group/kind`, names a kind, and its group (`*` for any run of
/// characters) matches an API group the release serves; so the chart and
/// asogen refuse the same entries.
fn crd_pattern_guard(served_groups: &[&str]) -> String {
    let served: Vec<String> = served_groups
        .iter()
        .map(|group| serde_json::Value::from(*group).to_string())
        .collect();
    let help = "help: write entries as group/kind, e.g. resources.azure.com/*";
    format!(
        r#"{{{{- $crdPattern := get $root {crd_pattern:?} }}}}
{{{{- $crdEntries := list }}}}
{{{{- if kindIs "string" $crdPattern }}}}{{{{- $crdEntries = splitList ";" $crdPattern }}}}
{{{{- else if kindIs "slice" $crdPattern }}}}{{{{- range $crdPattern }}}}{{{{- if kindIs "string" . }}}}{{{{- $crdEntries = concat $crdEntries (splitList ";" .) }}}}{{{{- end }}}}{{{{- end }}}}
{{{{- end }}}}
{{{{- $servedGroups := list {served} }}}}
{{{{- range $crdEntries }}}}
{{{{- $entry := trim . }}}}
{{{{- if and $entry (not (contains "/" $entry)) }}}}
{{{{- $broken = append $broken (printf "crdPattern entry %q is not group/kind; {help}" $entry) }}}}
{{{{- else if $entry }}}}
{{{{- $parts := splitn "/" 2 $entry }}}}
{{{{- if not $parts._1 }}}}
{{{{- $broken = append $broken (printf "crdPattern entry %q names no kind; {help}" $entry) }}}}
{{{{- else }}}}
{{{{- $glob := printf "^%s$" (replace "\\*" ".*" (regexQuoteMeta $parts._0)) }}}}
{{{{- $served := false }}}}
{{{{- range $servedGroups }}}}{{{{- if regexMatch $glob . }}}}{{{{- $served = true }}}}{{{{- end }}}}{{{{- end }}}}
{{{{- if not $served }}}}
{{{{- $broken = append $broken (printf "crdPattern entry %q names no API group the release serves; {help}" $entry) }}}}
{{{{- end }}}}
{{{{- end }}}}
{{{{- end }}}}
{{{{- end }}}}
"#,
        served = served.join(" "),
        crd_pattern = crate::keys::CRD_PATTERN.path(),
    )
}

/// The labels and annotations maps as the API server checks them (and as
/// asogen and the schema do): keys (annotation keys lower cased, with Go's
/// own `lower`), label values, the pod labels kept off the selector labels,
/// and the annotations' total size in bytes (Go's `len`), which no schema
/// can express.
fn metadata_guard() -> String {
    use crate::names::metadata_codes::{
        ANNOTATION_KEY, ANNOTATIONS_SIZE, LABEL_KEY, LABEL_VALUE, SELECTOR_LABEL,
    };
    use crate::objects::{METADATA_VALUES, MetadataKind};
    let quote = |text: &str| serde_json::Value::from(text).to_string();
    let [syntax, prefix_length] = crate::names::key_patterns(false).map(|p| quote(&p));
    let value_pattern = quote(&crate::names::label_value_pattern());
    let mut out = String::new();
    for (index, map) in METADATA_VALUES.iter().enumerate() {
        let mut getter = "$root".to_string();
        for key in map.key.segments() {
            getter = format!("((get {getter} {key:?}) | default dict)");
        }
        let var = format!("$metadata{index}");
        out.push_str(&format!(
            "{{{{- {var} := {getter} }}}}\n{{{{- if kindIs \"map\" {var} }}}}\n"
        ));
        if map.kind == MetadataKind::Annotations {
            out.push_str("{{- $size := 0 }}\n");
        }
        out.push_str(&format!("{{{{- range $key, $value := {var} }}}}\n"));
        let (code, key) = match map.kind {
            MetadataKind::Labels => (LABEL_KEY, "$key"),
            MetadataKind::Annotations => (ANNOTATION_KEY, "(lower $key)"),
        };
        let help = format!(
            "help: write an optional DNS subdomain prefix and '/', then at most {} letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
            crate::names::KEY_NAME_MAX
        );
        out.push_str(&format!(
            "{{{{- if not (and (regexMatch {syntax} {key}) (regexMatch {prefix_length} {key})) }}}}\n{{{{- $broken = append $broken (printf {} $key) }}}}\n{{{{- end }}}}\n",
            quote(&format!(
                "{code}: {} key %q is not a valid key in {}; {help}",
                map.key.path(), map.lands_on
            ))
        ));
        match map.kind {
            MetadataKind::Labels => out.push_str(&format!(
                "{{{{- if not (regexMatch {value_pattern} (toString $value)) }}}}\n{{{{- $broken = append $broken (printf {} $key) }}}}\n{{{{- end }}}}\n",
                quote(&format!(
                    "{LABEL_VALUE}: the value of {}.%s is not a valid label value in {}; help: write an empty string or at most {} letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
                    map.key.path(),
                    map.lands_on,
                    crate::names::LABEL_VALUE_MAX
                ))
            )),
            MetadataKind::Annotations => out.push_str(
                "{{- $size = add $size (len $key) (len (toString $value)) }}\n",
            ),
        }
        out.push_str("{{- end }}\n");
        for (key, value) in (map.selector)() {
            out.push_str(&format!(
                "{{{{- if hasKey {var} {} }}}}\n{{{{- $broken = append $broken {} }}}}\n{{{{- end }}}}\n",
                quote(&key),
                quote(&format!(
                    "{SELECTOR_LABEL}: {}.{key} is a selector label of the Deployment, which the chart sets ({key}: {value}): another value leaves the Deployment selecting none of its pods; help: remove {key} from {}",
                    map.key.path(), map.key.path()
                ))
            ));
        }
        if map.kind == MetadataKind::Annotations {
            // The chart's own entries count unless the values replace them.
            for (key, value) in (map.written)() {
                out.push_str(&format!(
                    "{{{{- if not (hasKey {var} {}) }}}}{{{{- $size = add $size {} }}}}{{{{- end }}}}\n",
                    quote(&key),
                    key.len() + value.len()
                ));
            }
            out.push_str(&format!(
                "{{{{- if gt $size {max} }}}}\n{{{{- $broken = append $broken (printf {} $size) }}}}\n{{{{- end }}}}\n",
                quote(&format!(
                    "{ANNOTATIONS_SIZE}: {} make {} %d bytes, more than the {max} the API server takes; help: keep large data out of annotations",
                    map.key.path(),
                    map.lands_on,
                    max = crate::names::ANNOTATIONS_MAX_BYTES
                )),
                max = crate::names::ANNOTATIONS_MAX_BYTES
            ));
        }
        out.push_str("{{- end }}\n");
    }
    out
}
