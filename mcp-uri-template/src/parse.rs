//! Parsing: template text into literals and expressions, refusing what cannot be
//! matched unambiguously.

use crate::chars::is_pct_at;
use crate::expr::{Expr, Operator, Part, exprs};
use crate::{TemplateError, UriTemplate};

impl UriTemplate {
    /// Parses a level 1–3 template; see the module docs for what is refused.
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        if template.is_empty() {
            return Err(TemplateError::new("empty template".into()));
        }
        let mut parts: Vec<Part> = Vec::new();
        let mut open: Option<usize> = None; // byte offset of the current `{`
        let mut lit_start = 0;
        for (i, c) in template.char_indices() {
            match (open, c) {
                (None, '{') => {
                    if lit_start < i {
                        parts.push(Part::Literal(template[lit_start..i].to_owned()));
                    }
                    open = Some(i);
                }
                (None, '}') => return Err(TemplateError::at("unmatched `}`", i)),
                (None, ' ') => return Err(TemplateError::at("space in literal", i)),
                (None, c) if c.is_control() => {
                    return Err(TemplateError::at("control character in literal", i));
                }
                (None, '%') if !is_pct_at(template.as_bytes(), i) => {
                    return Err(TemplateError::at("invalid percent-encoding in literal", i));
                }
                (Some(_), '{') => return Err(TemplateError::at("nested `{`", i)),
                (Some(start), '}') => {
                    let expr = parse_expr(&template[start + 1..i], start)?;
                    check_expr(&parts, &expr, start)?;
                    parts.push(Part::Expr(expr));
                    open = None;
                    lit_start = i + 1;
                }
                _ => {}
            }
        }
        if let Some(start) = open {
            return Err(TemplateError::at("unclosed `{`", start));
        }
        if lit_start < template.len() {
            parts.push(Part::Literal(template[lit_start..].to_owned()));
        }
        Ok(UriTemplate {
            text: template.to_owned(),
            parts,
        })
    }
}

/// Parses the inside of `{…}` found at byte `at`.
fn parse_expr(body: &str, at: usize) -> Result<Expr, TemplateError> {
    let first = body
        .chars()
        .next()
        .ok_or_else(|| TemplateError::at("empty expression", at))?;
    if matches!(first, '=' | ',' | '!' | '@' | '|') {
        let msg = format!("operator `{first}` at byte {at} is reserved by RFC 6570, not supported");
        return Err(TemplateError::new(msg));
    }
    let op = Operator::from_char(first).unwrap_or(Operator::Simple);
    let list = if op == Operator::Simple {
        body
    } else {
        &body[1..]
    };
    let mut vars = Vec::new();
    let mut explode = false;
    let names: Vec<&str> = list.split(',').collect();
    for name in &names {
        let name = match name.strip_suffix('*') {
            Some(n) if names.len() == 1 => {
                explode = true;
                n
            }
            Some(_) => {
                return Err(TemplateError::new(format!(
                    "explode `*` at byte {at} needs an expression of one variable, such as `{{/ids*}}`"
                )));
            }
            None => name,
        };
        if let Some(k) = name.find([':', '*']) {
            let m = &name[k..k + 1];
            let msg = format!(
                "level-4 modifier `{m}` at byte {at} is not supported \
                 (no prefix `:N`; explode `*` ends a lone variable)"
            );
            return Err(TemplateError::new(msg));
        }
        if name.is_empty() {
            return Err(TemplateError::at("empty variable name", at));
        }
        if !is_varname(name) {
            return Err(TemplateError::at(
                &format!("invalid variable name `{name}`"),
                at,
            ));
        }
        vars.push(name.to_owned());
    }
    Ok(Expr { op, vars, explode })
}

/// Refuses duplicate names and adjacent expressions that can't be delimited.
fn check_expr(parts: &[Part], expr: &Expr, at: usize) -> Result<(), TemplateError> {
    for (i, name) in expr.vars.iter().enumerate() {
        let mut earlier = exprs(parts).flat_map(|e| &e.vars).chain(&expr.vars[..i]);
        if earlier.any(|v| v == name) {
            return Err(TemplateError::at(
                &format!("duplicate variable `{name}`"),
                at,
            ));
        }
    }
    let Some(Part::Expr(prev)) = parts.last() else {
        return Ok(());
    };
    let ok = match expr.op.lead() {
        None => false, // `{a}{b}`: nothing tells where `a` ends
        Some(lead) => {
            !prev.op.can_emit(lead)
                || (prev.op == Operator::Reserved && matches!(lead, b'?' | b'#'))
                || (matches!(prev.op, Operator::Query | Operator::QueryContinuation)
                    && expr.op == Operator::QueryContinuation)
        }
    };
    if ok {
        return Ok(());
    }
    Err(TemplateError::new(format!(
        "ambiguous expression at byte {at}: it directly follows another expression; \
         put a literal between them"
    )))
}

/// RFC 6570 varname: varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded.
fn is_varname(name: &str) -> bool {
    let b = name.as_bytes();
    let (mut i, mut after_dot) = (0, true);
    while i < b.len() {
        match b[i] {
            b'.' if !after_dot => after_dot = true,
            b'%' if is_pct_at(b, i) => (after_dot, i) = (false, i + 2),
            c if c.is_ascii_alphanumeric() || c == b'_' => after_dot = false,
            _ => return false,
        }
        i += 1;
    }
    !after_dot
}

#[cfg(test)]
mod tests;
