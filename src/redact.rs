//! What never reaches a person's screen: secret values. Which keys hold a
//! secret, and which lines of a values file lie inside a secret's value,
//! found in one pass over the text (it also works for a file that does not
//! parse, where there is no document to ask).
//!
//! The rule: a key whose name looks secret (it holds `secret`, `password`,
//! `passwd`, `certificate` or `token`, one of them one typo away, or ends
//! in the start of one: `azureClientCert`) and every `extraEnv` entry's
//! `value` (ASO reads credentials from its environment) hold a secret. On
//! a shown line, everything after such a key's `:` is `<redacted>`; every
//! later line that belongs to the value (more indented, inside an open
//! quote, or a continuation that starts no new key) is `<redacted>` after
//! its indentation.
//!
//! Command-line values have no lines to hide: a message quotes a `--set`
//! family expression only when [`may_hold_secret`] says it cannot hold one,
//! and never quotes a value that a `--set-file` read (a file's content is
//! treated as a secret, whatever its key: certificates come that way).

/// Shown instead of a secret value.
pub const REDACTED: &str = "<redacted>";

/// Words that mark a key as holding a secret (its value is never printed).
const SECRET_WORDS: [&str; 5] = ["secret", "password", "passwd", "certificate", "token"];

/// Key names, lower cased, that contain one of those words but hold no
/// secret: three values keys (`image.pullSecrets` names Secrets,
/// `createAzureOperatorSecret` is a switch, `split.webhooks.refreshToken`
/// a restart marker) and the Kubernetes field that
/// names a Secret's key (`secretKeyRef`).
pub fn not_secret() -> &'static [String] {
    static WORDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        [
            crate::keys::IMAGE_PULL_SECRETS.leaf(),
            crate::keys::CREATE_AZURE_OPERATOR_SECRET.leaf(),
            // A restart marker written into a pod annotation, not a credential.
            crate::keys::SPLIT_WEBHOOKS_REFRESH_TOKEN.leaf(),
            "secretKeyRef",
        ]
        .iter()
        .map(|name| name.to_lowercase())
        .collect()
    })
}

/// The shortest start of a secret word that marks a name ending in it
/// (`azureClientCert`, `dbPass`).
const SHORTEST_STEM: usize = 4;

/// The shortest secret word whose misspellings (one edit away) count too.
const SHORTEST_MISSPELT: usize = 6;

/// The key holding the controller's extra environment, whose entries'
/// `value`s are secrets, lower cased.
pub fn extra_env_word() -> &'static str {
    static WORD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    WORD.get_or_init(|| crate::keys::EXTRA_ENV.path().to_lowercase())
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The regular expression (RE2 and Rust's `regex` alike, so the chart's
/// guard prints it and asogen compiles it) that a lower-case word of a
/// key name matches when it marks a secret: it holds one of
/// [`SECRET_WORDS`], or a misspelling one edit away (a letter left out,
/// added, changed, or two swapped) of one of six letters or more; or it
/// ends in the first four or more letters of one.
pub fn secret_word_pattern() -> String {
    let mut spellings: Vec<String> = Vec::new();
    let mut stems: Vec<String> = Vec::new();
    for word in SECRET_WORDS {
        // Plain letters: nothing to escape.
        debug_assert!(word.chars().all(|c| c.is_ascii_lowercase()));
        let letters: Vec<char> = word.chars().collect();
        let text = |chars: &[char]| chars.iter().collect::<String>();
        spellings.push(word.to_string());
        if word.len() >= SHORTEST_MISSPELT {
            for at in 0..=letters.len() {
                // Added at `at`.
                spellings.push(format!("{}.{}", text(&letters[..at]), text(&letters[at..])));
                if at < letters.len() {
                    // Left out, changed.
                    spellings.push(format!(
                        "{}{}",
                        text(&letters[..at]),
                        text(&letters[at + 1..])
                    ));
                    spellings.push(format!(
                        "{}.{}",
                        text(&letters[..at]),
                        text(&letters[at + 1..])
                    ));
                }
                if at + 1 < letters.len() {
                    let mut swapped = letters.clone();
                    swapped.swap(at, at + 1);
                    spellings.push(text(&swapped));
                }
            }
        }
        stems.extend((SHORTEST_STEM..word.len()).map(|len| word[..len].to_string()));
    }
    let mut seen = std::collections::HashSet::new();
    spellings.retain(|spelling| seen.insert(spelling.clone()));
    let mut seen = std::collections::HashSet::new();
    stems.retain(|stem| seen.insert(stem.clone()));
    format!("{}|(?:{})$", spellings.join("|"), stems.join("|"))
}

/// [`secret_word_pattern`], compiled once.
fn secret_word() -> &'static regex::Regex {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PATTERN.get_or_init(|| {
        regex::Regex::new(&secret_word_pattern()).expect("the secret word pattern compiles")
    })
}

/// Whether a key name (or any segment of a key path or JSON pointer) looks
/// like it holds a secret: `azureClientSecret`, `azureClientCertificatePassword`,
/// a misspelt `azureClientSecert` or a cut `azureClientCert`, or the value
/// of an `extraEnv` entry.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !is_name_char(c)).collect();
    if words.contains(&extra_env_word()) && words.last() == Some(&"value") {
        return true;
    }
    words
        .iter()
        .any(|word| !not_secret().iter().any(|n| n == word) && secret_word().is_match(word))
}

/// Whether a command-line expression (`--set` family text, well formed or
/// not) may hold a secret, so that no part of it after its first key may be
/// quoted: any secret-looking word in it (keys of a JSON object included,
/// before or after a syntax error), any mention of `extraEnv` (whose
/// entries' values are secrets), or a JSON `\u` escape, which may spell
/// either. Escapes of Helm's syntax (`azureClient\Secret`) do not hide a
/// word. When in doubt this says yes: a false alarm only shortens a message.
pub fn may_hold_secret(text: &str) -> bool {
    let unescaped: String = text.chars().filter(|c| *c != '\\').collect();
    text.contains("\\u")
        || unescaped.to_lowercase().contains(extra_env_word())
        || is_secret_name(&unescaped)
}

/// `text` with every double-quoted string in it (Rust's and serde's
/// `{:?}` quoting, `\"` escaped) shown as `"<redacted>"`: for a library's
/// message that may quote a value it was given.
pub fn without_quoted_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' {
            continue;
        }
        out.push_str(REDACTED);
        while let Some(inner) = chars.next() {
            match inner {
                '\\' => {
                    chars.next();
                }
                '"' => break,
                _ => {}
            }
        }
        out.push('"');
    }
    out
}

/// Leading spaces and tabs, in characters.
fn indentation(line: &str) -> usize {
    line.chars().take_while(|c| *c == ' ' || *c == '\t').count()
}

/// The keys written on a line (`name:` followed by a blank or the end of
/// the line), each with its column and the character offset just after its
/// colon (both 0-based, in characters).
fn keys(line: &str) -> Vec<(&str, usize, usize)> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_name_char(chars[i].1) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (is_name_char(chars[i].1) || chars[i].1 == '.') {
            i += 1;
        }
        let followed_by_blank = chars
            .get(i + 1)
            .is_none_or(|(_, c)| *c == ' ' || *c == '\t');
        if chars.get(i).is_some_and(|(_, c)| *c == ':') && followed_by_blank {
            let end = chars.get(i).map_or(line.len(), |(at, _)| *at);
            out.push((&line[chars[start].0..end], start, i + 1));
        }
    }
    out
}

/// Whether a quote opened at the start of `value` is still open at its end.
fn opens_quote(value: &str) -> Option<char> {
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &value[1..];
    (!closes_quote(rest, quote)).then_some(quote)
}

/// Whether `text` holds the closing `quote` (`\"` and `''` do not close).
fn closes_quote(text: &str, quote: char) -> bool {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && chars.peek() == Some(&'\'') {
                chars.next();
            } else {
                return true;
            }
        }
    }
    false
}

/// The nesting of flow collections after `text`, starting at `depth`
/// (brackets inside quotes do not count).
fn flow_depth(text: &str, mut depth: usize) -> usize {
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if depth == 0 => break,
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// A line that starts something new at its indentation: a key, a list
/// item, a comment or a document marker.
fn starts_node(body: &str) -> bool {
    body.starts_with('#')
        || body.starts_with("- ")
        || body == "-"
        || body.starts_with("---")
        || body.starts_with("...")
        || keys(body)
            .first()
            .is_some_and(|(_, column, _)| *column == 0)
}

/// For each line of a values text, how many of its characters may be
/// shown, or `None` when nothing on it is secret. One pass, so showing
/// many problems of one file costs the file once.
pub fn secret_lines(text: &str) -> Vec<Option<usize>> {
    struct Inside {
        indent: usize,
        quote: Option<char>,
        // Open `[` and `{` of a flow collection that spans lines.
        depth: usize,
    }
    let mut inside: Option<Inside> = None;
    // The indentation of an `extraEnv:` key whose entries follow.
    let mut extra_env: Option<usize> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let indent = indentation(line);
        let body = line.trim_start_matches([' ', '\t']);
        if let Some(secret) = &mut inside {
            if let Some(quote) = secret.quote {
                if closes_quote(line, quote) {
                    secret.quote = None;
                }
                out.push(Some(indent));
                continue;
            }
            if secret.depth > 0 {
                secret.depth = flow_depth(line, secret.depth);
                out.push(Some(indent));
                continue;
            }
            if body.is_empty() {
                out.push(None);
                continue;
            }
            if indent > secret.indent || !starts_node(body) {
                out.push(Some(indent));
                continue;
            }
            inside = None;
        }
        if let Some(env) = extra_env
            && !body.is_empty()
            && !body.starts_with('#')
            && (indent < env || (indent == env && !body.starts_with('-')))
        {
            extra_env = None;
        }
        let mut keep = None;
        for (key, column, after_colon) in keys(line) {
            if key == crate::keys::EXTRA_ENV.path() {
                extra_env = Some(indent);
            }
            if is_secret_name(key) || (extra_env.is_some() && key == "value") {
                let value = line
                    .chars()
                    .skip(after_colon)
                    .collect::<String>()
                    .trim()
                    .to_string();
                inside = Some(Inside {
                    indent: column,
                    quote: opens_quote(&value),
                    depth: flow_depth(&value, 0),
                });
                keep = Some(after_colon);
                break;
            }
        }
        if keep.is_none() {
            // A secret-looking word that is not a key (`name: AZURE_CLIENT_SECRET`
            // in a flow list): hide from it on.
            let mut offset = 0;
            for word in line.split_inclusive(|c: char| !is_name_char(c)) {
                let name = word.trim_end_matches(|c: char| !is_name_char(c));
                let lower = name.to_lowercase();
                let secret = SECRET_WORDS.iter().any(|w| lower.contains(w))
                    && !not_secret().iter().any(|n| lower.contains(n.as_str()));
                if secret && !ENV_NAMES.contains(&name) {
                    keep = Some(line[..offset].chars().count());
                    break;
                }
                offset += word.len();
            }
        }
        out.push(keep);
    }
    out
}

/// Environment variable names that say a secret follows but are not one:
/// shown, so `name: AZURE_CLIENT_SECRET` stays readable (its `value` is
/// hidden anyway).
const ENV_NAMES: [&str; 3] = [
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_include_misspellings_cuts_and_env_values_but_not_references() {
        assert!(is_secret_name("azureClientSecret"));
        assert!(is_secret_name("/azureClientCertificatePassword"));
        assert!(is_secret_name("azureClientSecert"));
        assert!(is_secret_name("azureClientCert"));
        assert!(is_secret_name("/extraEnv/0/value"));
        assert!(is_secret_name("extraEnv[3].value"));
        assert!(!is_secret_name("extraEnv[3].name"));
        assert!(!is_secret_name("/image/pullSecrets/0/name"));
        assert!(!is_secret_name("extraEnv[0].valueFrom.secretKeyRef.name"));
        assert!(!is_secret_name("createAzureOperatorSecret"));
        assert!(!is_secret_name("webhook.certDir"));
        assert!(!is_secret_name("replicaCount"));
    }

    #[test]
    fn expressions_that_may_hold_a_secret() {
        for text in [
            "azureClientSecret=p4ss,w0rd",
            r#"{"azureClientSecret": "x", oops}"#,
            r#"{"a": {"b": {"dbPassword": "x"}}}"#,
            r#"{"extraEnv":[{"name":"X","value":"x"}"#,
            "extraEnv[0].value=a,b",
            r"azureClient\Secret=x",
            r#"{"azureClient\u0053ecret": "x"}"#,
            "EXTRAENV=1",
        ] {
            assert!(may_hold_secret(text), "{text}");
        }
        for text in [
            "replicaCount=1,oops",
            r#"{"podLabels": {"team": "a"}"#,
            "image.pullSecrets[0].name=acr",
        ] {
            assert!(!may_hold_secret(text), "{text}");
        }
    }

    #[test]
    fn quoted_text_is_redacted() {
        assert_eq!(
            without_quoted_text(r#"invalid type: string "p4\"ss", expected i32"#),
            r#"invalid type: string "<redacted>", expected i32"#
        );
        assert_eq!(without_quoted_text("no quotes"), "no quotes");
        assert_eq!(without_quoted_text(r#"open "abc"#), r#"open "<redacted>""#);
    }

    /// The definition the pattern stands for, letter by letter: a window
    /// of the word one edit (optimal string alignment) from a secret word
    /// of six letters or more, the word itself, or a stem at the end.
    fn marks_secret(name: &str, word: &str) -> bool {
        let chars: Vec<char> = name.chars().collect();
        let near = word.len() >= SHORTEST_MISSPELT
            && (word.len() - 1..=word.len() + 1).any(|len| {
                chars
                    .windows(len)
                    .any(|w| strsim::osa_distance(&w.iter().collect::<String>(), word) <= 1)
            });
        name.contains(word)
            || near
            || (SHORTEST_STEM..word.len()).any(|len| name.ends_with(&word[..len]))
    }

    #[test]
    fn the_secret_word_pattern_is_the_definition() {
        // Every word one or two edits (over the secret words' letters and
        // a few others) from each secret word, cut and padded.
        let alphabet: Vec<char> = "secrtpaswodifkn_x-9é".chars().collect();
        let edits = |word: &str| -> Vec<String> {
            let letters: Vec<char> = word.chars().collect();
            let mut out = vec![word.to_string()];
            for at in 0..=letters.len() {
                let (head, tail) = letters.split_at(at);
                let text = |chars: &[char]| chars.iter().collect::<String>();
                for c in &alphabet {
                    out.push(format!("{}{c}{}", text(head), text(tail)));
                    if !tail.is_empty() {
                        out.push(format!("{}{c}{}", text(head), text(&tail[1..])));
                    }
                }
                if !tail.is_empty() {
                    out.push(format!("{}{}", text(head), text(&tail[1..])));
                }
                if tail.len() >= 2 {
                    out.push(format!(
                        "{}{}{}{}",
                        text(head),
                        tail[1],
                        tail[0],
                        text(&tail[2..])
                    ));
                }
            }
            out
        };
        let mut checked = 0;
        for word in SECRET_WORDS {
            for once in edits(word) {
                for twice in edits(&once).into_iter().step_by(97) {
                    for name in [twice.clone(), format!("azure{twice}"), format!("{twice}x")] {
                        let expected = SECRET_WORDS.iter().any(|w| marks_secret(&name, w));
                        assert_eq!(secret_word().is_match(&name), expected, "{name}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 20_000, "only {checked} names");
    }

    fn hidden(text: &str) -> Vec<Option<usize>> {
        secret_lines(text)
    }

    #[test]
    fn lines_inside_a_secret_value_are_hidden() {
        // A PEM block with a tab-indented line.
        let pem = "azureClientCertificate: |\n  -----BEGIN-----\n\tMIIB\n  -----END-----\nreplicaCount: 2\n";
        assert_eq!(hidden(pem), vec![Some(23), Some(2), Some(1), Some(2), None]);
        // A plain scalar continued at column 0, then a new key.
        let plain = "azureClientSecret: first\ns3cr3t\nreplicaCount: 2\n";
        assert_eq!(hidden(plain), vec![Some(18), Some(0), None]);
        // An open quote hides everything up to its end.
        let quoted = "azureClientSecret: \"a\nreplicaCount: 2\nb\"\nreplicaCount: 2\n";
        assert_eq!(hidden(quoted), vec![Some(18), Some(0), Some(0), None]);
        // A flow collection across lines, its second line at column 0.
        let flow = "azureClientSecret: {a: b,\ns3cr3t: 1, a: 2}\nreplicaCount: 2\n";
        assert_eq!(hidden(flow), vec![Some(18), Some(0), None]);
        // extraEnv values, block and flow.
        let env = "extraEnv:\n- name: AZURE_CLIENT_SECRET\n  value: 7331\n- {name: X, value: y}\npodLabels: {a: b}\n";
        assert_eq!(hidden(env), vec![None, None, Some(8), Some(18), None]);
        // Other lines are left alone.
        assert_eq!(hidden("podLabels:\n  a: b\n"), vec![None, None]);
    }
}
