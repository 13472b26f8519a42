use crate::Operator;
use crate::testing::{err, t};

#[test]
fn accessors() {
    let tpl = t("a://x/{id}{?q,limit}");
    assert_eq!(tpl.as_str(), "a://x/{id}{?q,limit}");
    assert_eq!(tpl.to_string(), "a://x/{id}{?q,limit}");
    let vars = [
        ("id", Operator::Simple),
        ("q", Operator::Query),
        ("limit", Operator::Query),
    ];
    assert_eq!(tpl.variables(), vars);
    assert!(!tpl.is_static());
    assert!(t("a://x/y").is_static());
    assert!(t("a://x/y").variables().is_empty());
}

#[test]
fn parse_errors() {
    assert_eq!(err("a://{id"), "unclosed `{` at byte 4");
    assert_eq!(err("test://tmpl/{id"), "unclosed `{` at byte 12");
    assert_eq!(err("a://{a{b}}"), "nested `{` at byte 6");
    assert_eq!(err("a://}"), "unmatched `}` at byte 4");
    assert_eq!(err("a://{}"), "empty expression at byte 4");
    assert_eq!(err(""), "empty template");
    assert_eq!(err("a://{a,}"), "empty variable name at byte 4");
    assert_eq!(
        err("a://{a}{b}").split(':').next(),
        Some("ambiguous expression at byte 7")
    );
    assert!(err("a://{a:3}").starts_with("level-4 modifier `:` at byte 4 is not supported"));
    assert!(err("a://{?}").contains("empty variable name"));
    assert!(err("a://{,a}").contains("operator `,`"));
    assert!(err("a://{=a}").contains("reserved by RFC 6570"));
    for bad in ["{a-b}", "{.a.}", "{a..b}", "{.a}", "{a b}", "{%zz}"] {
        let tpl = format!("a://x/{bad}");
        if bad == "{.a}" {
            t(&tpl); // `.` here is the label operator: fine
            continue;
        }
        assert!(err(&tpl).contains("invalid variable name"), "{tpl}");
    }
    t("a://{a.b_c%20}");
    assert!(err("a://{a}/{a}").contains("duplicate variable `a`"));
    assert!(err("a://{a,a}").contains("duplicate"));
    assert!(err("a://{a:3}").contains("level-4"));
    assert!(err("a://{a,b*}").contains("one variable"));
    // Named explodes take one list variable each.
    assert!(err("a://x{?a*,b}").contains("one variable"));
    for ok in [
        "a://x{?a*}",
        "a://x?y=1{&a*}",
        "a://x{;a*}",
        "a://x{?q}{&a*}",
    ] {
        assert!(t(ok).is_exploded("a"), "{ok}");
    }
    assert_eq!(err("a://x y"), "space in literal at byte 5");
    assert!(err("a://x\ty").contains("control character"));
    assert!(err("a://x%zz").contains("percent-encoding"));
}

#[test]
fn adjacent_expressions() {
    for bad in [
        "{a}{b}", "{a}{+b}", "{+a}{b}", "{/a}{b}", "{a}{.b}", "{/a}{/b}", "{+a}{/b}", "{?a}{?b}",
        "{&a}{?b}", "{#a}{?b}", "{;a}{;b}", "{?a}{/b}",
    ] {
        assert!(err(&format!("x://{bad}")).contains("ambiguous"), "{bad}");
    }
    for ok in [
        "{a}{/b}",
        "{+a}{?q}",
        "{+a}{#f}",
        "{?a}{&b}{&c}",
        "{/a}{?q}",
        "{a}{;p}",
        "{?q}{#f}",
    ] {
        t(&format!("x://{ok}"));
    }
}
