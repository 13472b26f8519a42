//! Overlap detection: whether two templates could match one URI.

use crate::UriTemplate;
use crate::expr::Part;

impl UriTemplate {
    /// Whether some URI could match both templates (used to refuse ambiguous registrations).
    /// Conservative: may say true for a pair that can't actually collide, never false for a
    /// pair that can.
    pub fn overlaps(&self, other: &UriTemplate) -> bool {
        match (self.is_static(), other.is_static()) {
            (true, true) => return self.text == other.text,
            (true, false) => return other.matches(&self.text).is_some(),
            (false, true) => return self.matches(&other.text).is_some(),
            (false, false) => {}
        }
        // Every match starts with the literal prefix and ends with the literal suffix.
        let (p1, p2) = (self.prefix(), other.prefix());
        let (s1, s2) = (self.suffix(), other.suffix());
        if !(p1.starts_with(p2) || p2.starts_with(p1)) || !(s1.ends_with(s2) || s2.ends_with(s1)) {
            return false;
        }
        // Between the common prefix and suffix, each template's remaining
        // literal bytes must appear; the other template must be able to
        // produce them there (e.g. `{id}` never yields the `/` of `{id}/data`).
        let (k, m) = (p1.len().min(p2.len()), s1.len().min(s2.len()));
        self.fits_in(other, k, m) && other.fits_in(self, k, m)
    }

    /// The literal before the first expression.
    fn prefix(&self) -> &str {
        match self.parts.first() {
            Some(Part::Literal(l)) => l,
            _ => "",
        }
    }

    /// The literal after the last expression.
    fn suffix(&self) -> &str {
        match self.parts.last() {
            Some(Part::Literal(l)) if !self.is_static() => l,
            _ => "",
        }
    }

    /// Whether every byte `self` must place between byte `k` and `m` bytes
    /// before the end (literals, leading characters) could be produced there
    /// by `other`.
    fn fits_in(&self, other: &UriTemplate, k: usize, m: usize) -> bool {
        let mut alphabet = [false; 256];
        other.middle_literals(k, m, |b| alphabet[b as usize] = true);
        for e in other.exprs() {
            (0..=255u8)
                .filter(|&b| e.op.can_emit(b))
                .for_each(|b| alphabet[b as usize] = true);
        }
        let mut fits = true;
        self.middle_literals(k, m, |b| fits &= alphabet[b as usize]);
        // Expressions (and their leading characters) may be left out: only literals
        // are certain to appear.
        fits
    }

    /// Calls `f` on every literal byte except the first `k` and last `m`
    /// (only for templates with expressions, so prefix and suffix are distinct).
    fn middle_literals(&self, k: usize, m: usize, mut f: impl FnMut(u8)) {
        let last = self.parts.len() - 1;
        for (i, part) in self.parts.iter().enumerate() {
            if let Part::Literal(l) = part {
                let start = if i == 0 { k } else { 0 };
                let end = if i == last { l.len() - m } else { l.len() };
                l.as_bytes()[start..end].iter().for_each(|&b| f(b));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::t;

    #[test]
    fn overlaps() {
        let o = |a: &str, b: &str| {
            let (a, b) = (t(a), t(b));
            assert_eq!(a.overlaps(&b), b.overlaps(&a), "symmetric");
            a.overlaps(&b)
        };
        assert!(o("a://x", "a://x"));
        assert!(!o("a://x", "a://y"));
        assert!(o("a://x/1", "a://x/{id}"));
        assert!(!o("a://x/1/2", "a://x/{id}"));
        assert!(!o("a://x/{id}", "a://y/{id}"));
        assert!(o("a://x/{id}", "a://x/{+path}"));
        assert!(o("a://x/{id}", "a://x/{name}"));
        assert!(!o("a://x/{id}/data", "a://x/{id}/meta"));
        assert!(!o("a://x/{id}", "a://x/{id}/data"));
        assert!(o("a://x/{+p}", "a://x/{id}/data"));
        assert!(o("a://{host}/x", "a://y{+rest}"));
        assert!(!o("a://{host}/x", "a://y{rest}")); // `{rest}` never yields `/`
        assert!(!o("a://x/{id}.json", "a://x/{id}.xml"));
        assert!(o("file:///{+path}", "file:///{name}.txt"));
        assert!(o("s://q{?q}", "s://q{?limit}"));
        // `{/c}` may be left out: `s://1` matches both.
        assert!(o("s://{a}", "s://{b}{/c}"));
        assert!(o("a://x", "a://x{/p*}"));
        assert!(o("a://x{?q}", "a://x{/p*}"));
        assert!(!o("a://x/{id}.json", "a://x/{id}{/rev}.xml"));
        // Exploded query and path-parameter lists.
        assert!(o("s://i{?tag*}", "s://i{?q}"));
        assert!(o("s://i{?tag*}", "s://i?tag=a&tag=b"));
        assert!(o("s://i{?tag*}", "s://i"));
        assert!(!o("s://i{?tag*}", "s://j{?tag*}"));
        assert!(o("p://x{;m*}", "p://x;m=1;m=2"));
        assert!(o("p://x{;m*}", "p://x{/y}"));
        assert!(o("p://x{;m*}.json", "p://x{;n}.json"));
        assert!(!o("p://x{;m*}.json", "p://x{/y}.xml"));
        assert!(!o("p://x{;m*}", "p://x;n=1"));
    }
}
