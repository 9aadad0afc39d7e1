//! Go's `path/filepath.Match` on Unix (separator `/`), as Helm matches
//! `helm template --show-only` patterns: `*` is any run of characters but
//! `/`, `?` one character but `/`, `[...]` a class (`^` negates it; `a-z`
//! ranges; `\` escapes), `\` escapes the next character, and everything
//! else matches itself. A malformed pattern matches nothing (Helm ignores
//! `filepath.ErrBadPattern`).

/// One element of a pattern.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// `*`
    AnyRun,
    /// `?`
    AnyOne,
    /// `[...]`: its ranges (inclusive), and whether it is negated.
    Class(Vec<(char, char)>, bool),
    /// A character standing for itself.
    Literal(char),
}

/// Whether `name` matches `pattern` as Go's `filepath.Match` says; false
/// for a malformed pattern.
pub fn matches(pattern: &str, name: &str) -> bool {
    let Some(tokens) = parse(pattern) else {
        return false;
    };
    let name: Vec<char> = name.chars().collect();
    match_from(&tokens, &name)
}

fn match_from(tokens: &[Token], name: &[char]) -> bool {
    match tokens.split_first() {
        None => name.is_empty(),
        Some((Token::AnyRun, rest)) => (0..=name.len())
            .take_while(|&i| i == 0 || name[i - 1] != '/')
            .any(|i| match_from(rest, &name[i..])),
        Some((token, rest)) => name.split_first().is_some_and(|(&c, tail)| {
            let fits = match token {
                Token::AnyOne => c != '/',
                Token::Class(ranges, negated) => {
                    c != '/' && ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
                }
                Token::Literal(l) => *l == c,
                Token::AnyRun => unreachable!(),
            };
            fits && match_from(rest, tail)
        }),
    }
}

/// The pattern's tokens, or None when Go would return ErrBadPattern.
fn parse(pattern: &str) -> Option<Vec<Token>> {
    let mut chars = pattern.chars().peekable();
    let mut tokens = Vec::new();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '*' => Token::AnyRun,
            '?' => Token::AnyOne,
            '\\' => Token::Literal(chars.next()?),
            '[' => {
                let negated = chars.next_if_eq(&'^').is_some();
                let mut ranges = Vec::new();
                loop {
                    let lo = match chars.next()? {
                        ']' if !ranges.is_empty() => break,
                        ']' | '-' => return None,
                        '\\' => chars.next()?,
                        c => c,
                    };
                    let hi = if chars.next_if_eq(&'-').is_some() {
                        match chars.next()? {
                            ']' | '-' => return None,
                            '\\' => chars.next()?,
                            c => c,
                        }
                    } else {
                        lo
                    };
                    if lo > hi {
                        return None;
                    }
                    ranges.push((lo, hi));
                }
                Token::Class(ranges, negated)
            }
            c => Token::Literal(c),
        });
    }
    Some(tokens)
}

#[cfg(test)]
mod tests {
    use super::matches;

    /// Cases of Go's own `filepath.Match` tests (path/filepath match_test.go),
    /// with what Go answers (a bad pattern answers false here).
    #[test]
    fn patterns_match_as_go_filepath_match_does() {
        for (pattern, name, want) in [
            ("abc", "abc", true),
            ("*", "abc", true),
            ("*c", "abc", true),
            ("a*", "a", true),
            ("a*", "abc", true),
            ("a*", "ab/c", false),
            ("a*/b", "abc/b", true),
            ("a*/b", "a/c/b", false),
            ("a*b*c*d*e*/f", "axbxcxdxe/f", true),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/f", true),
            ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", false),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", false),
            ("a*b?c*x", "abxbbxdbxebxczzx", true),
            ("a*b?c*x", "abxbbxdbxebxczzy", false),
            ("ab[c]", "abc", true),
            ("ab[b-d]", "abc", true),
            ("ab[e-g]", "abc", false),
            ("ab[^c]", "abc", false),
            ("ab[^b-d]", "abc", false),
            ("ab[^e-g]", "abc", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "ab", false),
            ("a?b", "a☺b", true),
            ("a[^a]b", "a☺b", true),
            ("a???b", "a☺b", false),
            ("a[^a][^a][^a]b", "a☺b", false),
            ("[a-ζ]*", "α", true),
            ("*[a-ζ]", "A", false),
            ("a?b", "a/b", false),
            ("a*b", "a/b", false),
            ("[\\]a]", "]", true),
            ("[\\-]", "-", true),
            ("[x\\-]", "x", true),
            ("[x\\-]", "-", true),
            ("[x\\-]", "z", false),
            ("[\\-x]", "x", true),
            ("[\\-x]", "-", true),
            ("[\\-x]", "a", false),
            ("[]a]", "]", false),
            ("[-]", "-", false),
            ("[x-]", "x", false),
            ("[-x]", "x", false),
            ("\\", "a", false),
            ("[a-b-c]", "a", false),
            ("[", "a", false),
            ("[^", "a", false),
            ("[^bc", "a", false),
            ("a[", "ab", false),
            ("*x", "xxx", true),
        ] {
            assert_eq!(matches(pattern, name), want, "{pattern:?} on {name:?}");
        }
    }
}
