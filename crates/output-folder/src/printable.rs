//! Text read from input, made safe to print.

/// `text` with every control, format and line-separator character escaped
/// (`\n`, `\u{1b}`, `\u{202e}`): what was read from input (a live
/// object's manager names, a path in a folder) must not forge a line of a
/// report (a false "ok" or "REFUSED") or restyle the terminal.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let invisible = c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}');
        if invisible {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
