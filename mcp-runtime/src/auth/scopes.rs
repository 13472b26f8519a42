//! Whether granted scopes cover the scopes an item requires.

use std::sync::Arc;

/// How a granted scope covers a required one. The default: the same scope, or a broader
/// one that the required scope extends after a `:` or a `.` (`files` covers `files:read`
/// and `files.read`; `files:read` does not cover `files`). Replace it for another
/// hierarchy with [`ScopeImplies::custom`].
#[derive(Clone)]
pub struct ScopeImplies(Arc<Rule>);

/// `rule(granted, required)`: whether `granted` covers `required`.
type Rule = dyn Fn(&str, &str) -> bool + Send + Sync;

impl Default for ScopeImplies {
    fn default() -> Self {
        ScopeImplies(Arc::new(|granted: &str, required: &str| {
            granted == required
                || required
                    .strip_prefix(granted)
                    .is_some_and(|rest| rest.starts_with([':', '.']))
        }))
    }
}

impl ScopeImplies {
    /// Only equal scopes match.
    pub fn exact() -> Self {
        ScopeImplies(Arc::new(|g: &str, r: &str| g == r))
    }
    /// `f(granted, required)` says whether `granted` covers `required`.
    pub fn custom(f: impl Fn(&str, &str) -> bool + Send + Sync + 'static) -> Self {
        ScopeImplies(Arc::new(f))
    }
    /// The scopes of `required` that no scope of `granted` covers.
    pub(crate) fn missing<'a, 'g>(
        &self,
        granted: impl Iterator<Item = &'g str> + Clone,
        required: &'a [String],
    ) -> Vec<&'a str> {
        required
            .iter()
            .filter(|r| !granted.clone().any(|g| (self.0)(g, r)))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broader_scopes_cover_narrower_ones() {
        let i = ScopeImplies::default();
        let req = vec!["files:read".to_owned(), "mail".to_owned()];
        assert_eq!(i.missing(["files"].into_iter(), &req), vec!["mail"]);
        assert!(
            i.missing(["files:read", "mail"].into_iter(), &req)
                .is_empty()
        );
        assert_eq!(
            i.missing(["filesx", "mail:send"].into_iter(), &req),
            vec!["files:read", "mail"]
        );
        let exact = ScopeImplies::exact();
        assert_eq!(exact.missing(["files"].into_iter(), &req).len(), 2);
    }
}
