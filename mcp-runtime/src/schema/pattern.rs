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
    match regex_lite::RegexBuilder::new(text).nest_limit(64).build() {
        Ok(regex) => Ok(Box::new(regex)),
        Err(e) => Err(e.to_string()),
    }
}
