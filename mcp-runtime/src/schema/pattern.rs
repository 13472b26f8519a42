//! The engine a schema's `pattern`s compile with, passed to the compiler by whoever made
//! the schema, so that a server none of whose schemas can hold a pattern does not link it
//! (see [`PatternEngine`]).

/// A compiled `pattern`: whether a string matches it.
pub(crate) trait Matcher: Send + Sync {
    fn is_match(&self, text: &str) -> bool;
}

impl Matcher for regex_lite::Regex {
    fn is_match(&self, text: &str) -> bool {
        regex_lite::Regex::is_match(self, text)
    }
}

/// What compiles a schema's `pattern`s. The schema's maker passes it in: a tool whose
/// arguments are all plain types (see `Signature::add_argument`) passes `None`, as no
/// `pattern` can occur in its schema, so a server of such tools never names
/// [`regex`] and does not link the regular expression engine. `Err`: why the text is no
/// pattern.
pub(crate) type PatternEngine = fn(&str) -> Result<Box<dyn Matcher>, String>;

/// The pattern engine: `regex-lite` (no backtracking, so a hostile argument cannot make a
/// pattern slow), nesting limited.
pub(crate) fn regex(text: &str) -> Result<Box<dyn Matcher>, String> {
    match regex_lite::RegexBuilder::new(&ecma(text))
        .nest_limit(64)
        .build()
    {
        Ok(regex) => Ok(Box::new(regex)),
        Err(e) => Err(e.to_string()),
    }
}

/// ECMA-262's white space and line terminators: what its `\s` matches.
const SPACE: &str = "\\t\\n\\x0B\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";

/// `text`, an ECMA-262 pattern (as JSON Schema has them), in regex-lite's syntax where the
/// two differ in meaning: `.` matches no line terminator (`\r`, U+2028, U+2029 besides
/// `\n`), and `\s`/`\S` take Unicode's spaces (U+00A0, U+FEFF, U+3000, ...), not ASCII's
/// alone (but for a `\S` inside a class, which is regex-lite's). `\d`, `\w` and `\b` are
/// ASCII in both.
fn ecma(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('s') if in_class => out.push_str(SPACE),
                Some('s') => {
                    out.push('[');
                    out.push_str(SPACE);
                    out.push(']');
                }
                // regex-lite nests no classes: in one, its own `\S` (everything but ASCII's
                // spaces), which with `\s` still makes the `[\s\S]` of "any character".
                Some('S') if in_class => out.push_str("\\S"),
                Some('S') => {
                    out.push_str("[^");
                    out.push_str(SPACE);
                    out.push(']');
                }
                Some(escaped) => {
                    out.push('\\');
                    out.push(escaped);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push('[');
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '.' if !in_class => out.push_str("[^\\n\\r\\x{2028}\\x{2029}]"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::regex;

    #[test]
    fn dot_and_spaces_are_ecma_s() {
        let line = regex("^.{1,50}$").unwrap();
        assert!(line.is_match("a b"));
        for broken in ["a\rb", "a\u{2028}b", "a\nb"] {
            assert!(!line.is_match(broken), "{broken:?}");
        }
        let word = regex("^\\S+$").unwrap();
        assert!(word.is_match("abc"));
        assert!(!word.is_match("a\u{a0}b"));
        let blank = regex("^\\s*$").unwrap();
        assert!(blank.is_match("\u{a0}\u{3000}\u{feff} \t"));
        assert!(!blank.is_match("x"));
        // In a class: `\s` adds the spaces, `\S` everything else; `.` is itself there.
        let any = regex("^[\\s\\S]+$").unwrap();
        assert!(any.is_match("a\u{2028}\r\n b"));
        let dot = regex("^[.]$").unwrap();
        assert!(dot.is_match("."));
        assert!(!dot.is_match("x"));
        // Escapes pass through: `\.` is a dot, `\]` does not end a class.
        assert!(regex("^a\\.b$").unwrap().is_match("a.b"));
        assert!(!regex("^a\\.b$").unwrap().is_match("axb"));
        assert!(regex("^[\\]a]+$").unwrap().is_match("]a]"));
        assert!(regex("^\\d{3}$").unwrap().is_match("123"));
    }
}
