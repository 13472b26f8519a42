use crate::MAX_URI_LEN;
use crate::testing::{m, one, t};

#[test]
fn simple_is_one_safe_segment() {
    let tpl = "test://template/{id}/data";
    assert_eq!(m(tpl, "test://template/123/data"), one("id", "123"));
    assert_eq!(
        m(tpl, "test://template/abc%20def/data"),
        one("id", "abc def")
    );
    assert_eq!(m(tpl, "test://template/a+b~c/data"), None); // `+` is reserved
    assert_eq!(m(tpl, "test://template/a%2Bb/data"), one("id", "a+b")); // not a space
    assert_eq!(m(tpl, "test://template/%2541/data"), one("id", "%41")); // decoded exactly once
    for bad in [
        "a%2Fb", "%2e%2e", "%2E", "..", ".", "a/b", "a%5Cb", "%00", "a%zz", "a%2", "%ff", "a b",
        "é",
    ] {
        let uri = format!("test://template/{bad}/data");
        assert_eq!(m(tpl, &uri), None, "{uri}");
    }
    // Nothing between the literals: `id` is undefined (RFC 6570 expands it to nothing).
    assert_eq!(m(tpl, "test://template//data"), Some(vec![]));
    assert_eq!(m("b://{id}", "b://"), Some(vec![]));
    assert_eq!(m(tpl, "test://template/1/data/"), None); // anchored at the end
    assert_eq!(m(tpl, "Test://template/1/data"), None); // literals compare exactly
    assert_eq!(m("x://{a,b}", "x://1024,768").unwrap().len(), 2);
    assert_eq!(m("x://{a,b}", "x://1024"), None); // every variable is required
}

#[test]
fn reserved_may_contain_slashes() {
    let tpl = "file:///{+path}";
    assert_eq!(m(tpl, "file:///a/b/c.txt"), one("path", "a/b/c.txt"));
    assert_eq!(m(tpl, "file:///%2e%2e/x"), one("path", "../x")); // checked elsewhere
    assert_eq!(m(tpl, "file:///a%00b"), None);
    assert_eq!(m(tpl, "file:///"), Some(vec![])); // `path` undefined
    assert_eq!(m(tpl, "file:///a b"), None);
    assert_eq!(m("x://{+a}/meta", "x://p/q/meta"), one("a", "p/q"));
    // Followed by a query: the reserved value stops at the first `?`.
    let got = m("file:///{+path}{?rev}", "file:///a/b?rev=3").unwrap();
    assert_eq!(
        got,
        [("path".into(), "a/b".into()), ("rev".into(), "3".into())]
    );
    assert_eq!(
        m("file:///{+path}{?rev}", "file:///a/b"),
        one("path", "a/b")
    );
    assert_eq!(m("x://{#f}", "x://#a/b?c"), one("f", "a/b?c"));
}

#[test]
fn query_pairs() {
    let tpl = "search://q{?q,limit}";
    assert_eq!(m(tpl, "search://q"), Some(vec![]));
    assert_eq!(m(tpl, "search://q?q=rust"), one("q", "rust"));
    let got = m(tpl, "search://q?limit=5&q=a%26b").unwrap();
    assert_eq!(
        got,
        [("limit".into(), "5".into()), ("q".into(), "a&b".into())]
    );
    assert_eq!(m(tpl, "search://q?q=1&q=2"), None);
    assert_eq!(m(tpl, "search://q?other=1"), Some(vec![]));
    assert_eq!(m(tpl, "search://q?other=1&other=2&q=x"), one("q", "x"));
    assert_eq!(m(tpl, "search://q?q="), one("q", ""));
    assert_eq!(m(tpl, "search://q?q"), one("q", ""));
    assert_eq!(m(tpl, "search://q?q=a+b/c"), one("q", "a+b/c"));
    assert_eq!(m(tpl, "search://q?q=%00"), None);
    assert_eq!(m(tpl, "search://q?q=%zz"), None);
    assert_eq!(m(tpl, "search://q?q=a#frag"), None);
    assert_eq!(m(tpl, "search://qq=1"), None);
    // `?` and `&` expressions share one query, in any order.
    let got = m("s://q{?a}{&b}", "s://q?b=2&a=1").unwrap();
    assert_eq!(got, [("a".into(), "1".into()), ("b".into(), "2".into())]);
    assert_eq!(m("s://q?fixed=1{&x}", "s://q?fixed=1&x=2"), one("x", "2"));
    assert_eq!(m("s://q?fixed=1{&x}", "s://q?fixed=1"), Some(vec![]));
    assert_eq!(m("s://{id}{?q}{#f}", "s://1?q=2#3").unwrap().len(), 3);
}

#[test]
fn path_label_and_params() {
    let got = m("x://r{/a,b}", "x://r/x/y").unwrap();
    assert_eq!(got, [("a".into(), "x".into()), ("b".into(), "y".into())]);
    for bad in [
        "x://r/x",
        "x://r/x/y/z",
        "x://r/x/",
        "x://r//y",
        "x://r/x/%2e%2e",
        "x://r/",
    ] {
        assert_eq!(m("x://r{/a,b}", bad), None, "{bad}");
    }
    assert_eq!(m("x://{id}{/sub}", "x://1/2").unwrap().len(), 2);

    // Left out as a whole: both undefined.
    assert_eq!(m("x://r{/a,b}", "x://r"), Some(vec![]));
    let got = m("x://r{;x,y}", "x://r;x=1;y=2").unwrap();
    assert_eq!(got, [("x".into(), "1".into()), ("y".into(), "2".into())]);
    let got = m("x://r{;x,y}", "x://r;x;y=2").unwrap();
    assert_eq!(got, [("x".into(), "".into()), ("y".into(), "2".into())]);
    for bad in [
        "x://r;y=2;x=1",
        "x://r;x=1",
        "x://r;xx=1;y=2",
        "x://r;x=1;y=%2F",
    ] {
        assert_eq!(m("x://r{;x,y}", bad), None, "{bad}");
    }

    assert_eq!(m("file://doc{.ext}", "file://doc.txt"), one("ext", "txt"));
    assert_eq!(
        m("file://doc{.ext}", "file://doc.tar.gz"),
        one("ext", "tar.gz")
    );
    assert_eq!(m("file://doc{.ext}", "file://doc.."), None); // value `.`
    assert_eq!(m("file://doc{.ext}", "file://doc"), Some(vec![]));
    assert_eq!(m("x://r{;x,y}", "x://r"), Some(vec![]));
}

#[test]
fn literal_delimits_expressions() {
    // The final literal is anchored at the end; middle literals match leftmost.
    assert_eq!(
        m("file:///{name}.txt", "file:///a.b.txt"),
        one("name", "a.b")
    );
    let got = m("x://{a}-{b}", "x://1-2-3").unwrap();
    assert_eq!(got, [("a".into(), "1".into()), ("b".into(), "2-3".into())]);
    let got = m("x://{a}-{b}", "x://--x").unwrap();
    assert_eq!(got, [("a".into(), "-".into()), ("b".into(), "x".into())]);
    assert_eq!(m("x://é/{id}", "x://é/1"), one("id", "1"));
    assert_eq!(m("file:///{name}.txt", "file:///é.txt"), None);
    assert_eq!(m("x://{a}é{b}", "x://éé1"), None);
    assert_eq!(m("a://b", "a://b"), Some(vec![]));
    assert_eq!(m("a://b", "a://bc"), None);
}

#[test]
fn explode_binds_every_item() {
    assert_eq!(
        m("file://{/path*}", "file:///a/b/c.txt"),
        one("path", "a/b/c.txt")
    );
    assert!(
        m("file://{/path*}", "file:///a/../c").is_none(),
        "each item is a safe segment"
    );
    assert!(
        m("file://{/path*}", "file:///a//c").is_none(),
        "no empty item"
    );
    assert!(
        m("file://{/path*}", "file:///a/%2F/c").is_none(),
        "a path segment may not hold a `/`, even encoded"
    );
    assert_eq!(m("ids://{ids*}", "ids://1,2,3"), one("ids", "1,2,3"));
    assert_eq!(m("x://f{.ext*}", "x://f.tar.gz"), one("ext", "tar.gz"));
    assert_eq!(
        m("file://{/path*}/raw", "file:///a/b/raw").unwrap(),
        vec![("path".into(), "a/b".into())]
    );
    assert!(t("file://{/path*}").is_exploded("path"));
    assert!(!t("file://{/path}").is_exploded("path"));
    assert!(t("a://{/x*}").overlaps(&t("a://{/y}")));
}

#[test]
fn exploded_items_split_at_the_separator() {
    let tpl = t("c://x{/segs*}{?q}");
    for (name, sep) in [("segs", '/'), ("q", ',')] {
        assert_eq!(tpl.list_separator(name), sep);
    }
    assert_eq!(t("x://f{.e*}").list_separator("e"), '.');
    assert_eq!(t("x://{ids*}").list_separator("ids"), ',');
    assert_eq!(t("x://{+p*}").list_separator("p"), ',');
    assert_eq!(t("x://{#f*}").list_separator("f"), ',');
    assert_eq!(t("x://{/p}").list_separator("p"), ','); // not exploded
    assert_eq!(tpl.list_separator("nope"), ',');
    // The binding is the items joined by the separator.
    let got = tpl.captures("c://x/a/b%20c").unwrap();
    assert_eq!(got["segs"].value(), "a/b c");
    assert_eq!(got["segs"].items(), ["a", "b c"]);
}

#[test]
fn left_out_expressions_are_undefined() {
    // An empty list is undefined: nothing to bind.
    assert_eq!(m("c://x{/segs*}", "c://x"), Some(vec![]));
    assert_eq!(m("c://x{/segs*}", "c://x/"), None); // one empty item: refused
    assert_eq!(m("x://f{.e*}", "x://f"), Some(vec![]));
    assert_eq!(m("x://n/{ids*}", "x://n/"), Some(vec![]));
    let tpl = "repo://{owner}/{repo}/files{/path*}{?q,limit}{#frag}";
    let got = |uri| {
        m(tpl, uri).map(|b| {
            b.into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    assert_eq!(got("repo://a/b/files").as_deref(), Some("owner=a repo=b"));
    assert_eq!(
        got("repo://a/b/files?limit=notnum").as_deref(),
        Some("limit=notnum owner=a repo=b")
    );
    // Each of the trailing expressions may be left out, whichever follow.
    assert_eq!(
        got("repo://a/b/files#top").as_deref(),
        Some("frag=top owner=a repo=b")
    );
    assert_eq!(
        got("repo://a/b/files/x/y#top").as_deref(),
        Some("frag=top owner=a path=x/y repo=b")
    );
    assert_eq!(
        got("repo://a/b/files/x?q=1#t").as_deref(),
        Some("frag=t owner=a path=x q=1 repo=b")
    );
    assert_eq!(got("repo://a//files").as_deref(), Some("owner=a"));
    assert_eq!(got("repo://a/b/files/x y").as_deref(), None);
    assert_eq!(got("repo://a/b/filesx"), None);
    // Left out before a literal: the literal follows at once.
    assert_eq!(m("x://{a}{/b}.json", "x://1.json"), one("a", "1"));
    let got = m("x://{a}{/b}.json", "x://1/2.json").unwrap();
    assert_eq!(got, [("a".into(), "1".into()), ("b".into(), "2".into())]);
    assert_eq!(
        m("x://{a}{/b}.json?v", "x://1.json?v"),
        one("a", "1"),
        "`?` cannot be in `a`: the literal comes next"
    );
    assert_eq!(m("x://{a}-{b}", "x://-x"), one("b", "x"));
    assert_eq!(m("x://{a}-{b}", "x://-"), Some(vec![]));
    // A reserved value stops at the query and the fragment.
    let got = m("f:///{+p}{?q}{#f}", "f:///a/b#c?d").unwrap();
    assert_eq!(
        got,
        [("f".into(), "c?d".into()), ("p".into(), "a/b".into())]
    );
}

#[test]
fn a_left_out_expression_before_a_literal_seen_again_later() {
    let m = t("x://r{/a}.{b}").matches("x://r.1.2").expect("matches");
    assert_eq!(m.get("a"), None);
    assert_eq!(m.get("b").map(String::as_str), Some("1.2"));
    let m = t("api://items{/id}.{format}")
        .matches("api://items.v1.json")
        .expect("matches");
    assert_eq!(m.get("id"), None);
    assert_eq!(m.get("format").map(String::as_str), Some("v1.json"));
    let m = t("api://items{/id}.{format}")
        .matches("api://items/7.json")
        .expect("matches");
    assert_eq!(m.get("id").map(String::as_str), Some("7"));
}

#[test]
fn length_cap_and_pathological_inputs() {
    let long = format!("file:///{}", "a".repeat(MAX_URI_LEN));
    assert_eq!(t("file:///{+path}").matches(&long), None);
    let fits = format!("file:///{}", "a".repeat(MAX_URI_LEN - 8));
    assert!(t("file:///{+path}").matches(&fits).is_some());

    // Many expressions against a long run of one character: must just return.
    let uri = format!("t://{}", "x".repeat(MAX_URI_LEN - 4));
    let many = |sep: &str, op: &str| {
        let body: Vec<String> = (0..60).map(|i| format!("{{{op}v{i}}}")).collect();
        format!("t://{}", body.join(sep))
    };
    for tpl in [
        many("x", ""),
        many("x", "+"),
        many("xx", ""),
        many("/", ""),
        many("-", ""),
    ] {
        let _ = t(&tpl).matches(&uri);
    }
    let _ = t("t://{a}x{+b}{?c}").matches(&uri);
    let _ = t("t://{a}{/b}{;c}{?d}{&e}{#f}").matches(&uri);
    // Every expression may be left out: still one scan each.
    let optional: Vec<String> = (0..60).map(|i| format!("{{/v{i}}}x")).collect();
    let _ = t(&format!("t://{}", optional.join(""))).matches(&uri);
    let slashes = format!("t://{}", "/".repeat(MAX_URI_LEN - 4));
    let _ = t("t://{a}{/b}{;d}{?e}{#f}").matches(&slashes);
    let _ = t(&many("/", "/")).matches(&slashes);
}

#[test]
fn list_values_hold_encoded_separators() {
    // A raw `,` separates the items of a list value (RFC 6570 joins them with it).
    assert_eq!(m("x://{ids}", "x://a,b"), one("ids", "a,b"));
    let got = m("x://{a,b}", "x://1,2,3").unwrap();
    assert_eq!(got, [("a".into(), "1".into()), ("b".into(), "2,3".into())]);
    // An exploded item may hold its separator, encoded.
    assert_eq!(m("x://{ids*}", "x://1%2C2,3"), one("ids", "1,2,3"));
    assert_eq!(m("x://f{.e*}", "x://f.a%2Eb.gz"), one("e", "a.b.gz"));
    // But a path segment still may not hold a `/`.
    assert_eq!(m("c://x{/segs*}", "c://x/a%2Fb/c"), None);

    // The items: the raw text split at the separator, then each item decoded.
    let items = |tpl: &str, uri: &str, name: &str| {
        let c = t(tpl).captures(uri)?;
        Some(c.get(name)?.items().to_vec())
    };
    let tpl = "x://{ids}{?tags}";
    assert_eq!(items(tpl, "x://a%2Cb,c", "ids").unwrap(), ["a,b", "c"]);
    assert_eq!(items(tpl, "x://a%2Cb", "ids").unwrap(), ["a,b"]);
    assert_eq!(
        items(tpl, "x://a?tags=x%2Cy,z", "tags").unwrap(),
        ["x,y", "z"]
    );
    assert_eq!(items(tpl, "x://a?tags=", "tags").unwrap(), [""]);
    assert_eq!(items(tpl, "x://a,,b", "ids").unwrap(), ["a", "", "b"]);
    assert_eq!(items("x://{a,b}", "x://1,2,3", "b").unwrap(), ["2", "3"]);
    assert_eq!(
        items("x://{+p}", "x://a/b,c%2Cd", "p").unwrap(),
        ["a/b", "c,d"]
    );
    assert_eq!(items("x://{#f}", "x://#a,b", "f").unwrap(), ["a", "b"]);
    assert_eq!(items("x://{/p}", "x:///a%2Cb", "p").unwrap(), ["a,b"]);
    assert_eq!(items("x://{;p}", "x://;p=a%2Cb", "p").unwrap(), ["a,b"]);
    assert_eq!(
        items("x://{ids*}", "x://1%2C2,3", "ids").unwrap(),
        ["1,2", "3"]
    );
    assert_eq!(
        items("x://f{.e*}", "x://f.a%2Eb.gz", "e").unwrap(),
        ["a.b", "gz"]
    );
    assert_eq!(items("x://{+p*}", "x://a/b,c", "p").unwrap(), ["a/b", "c"]);
    // The value is decoded whole, as `matches` gives it.
    let c = t(tpl).captures("x://a%2Cb,c").unwrap();
    assert_eq!(c["ids"].value(), "a,b,c");
    // Each item of a `{var}` is path-safe, as the value is.
    for bad in ["x://a,..", "x://..,a", "x://a,.", "x://a,%2E%2E"] {
        assert_eq!(t(tpl).captures(bad), None, "{bad}");
    }
    assert_eq!(m(tpl, "x://a%2C.."), one("ids", "a,..")); // one item: `a,..`
}

#[test]
fn an_empty_fragment_is_an_empty_value() {
    // RFC 6570 expands `{#f}` with f = "" to `#`, and with f undefined to nothing.
    assert_eq!(m("x://doc{#f}", "x://doc#"), one("f", ""));
    assert_eq!(m("x://doc{#f}", "x://doc"), Some(vec![]));
    assert_eq!(m("x://doc{#f}", "x://doc#a"), one("f", "a"));
    assert_eq!(m("x://{#f}", "x://#"), one("f", ""));
    let got = m("x://{+p}{#f}", "x://a/b#").unwrap();
    assert_eq!(got, [("f".into(), "".into()), ("p".into(), "a/b".into())]);
    let got = m("x://{#a,b}", "x://#,").unwrap();
    assert_eq!(got, [("a".into(), "".into()), ("b".into(), "".into())]);
    assert_eq!(m("x://{#a,b}", "x://#"), None); // `b` is missing
    let c = t("x://doc{#f}").captures("x://doc#").unwrap();
    assert_eq!(c["f"].items(), [""]);
    // A literal after the fragment: found right after the `#`.
    assert_eq!(m("x://d{#f}ab{/y}", "x://d#ab"), one("f", ""));
    // An exploded fragment's items are never empty: `#` alone is refused.
    assert_eq!(m("x://doc{#f*}", "x://doc#"), None);
}

#[test]
fn exploded_query_and_path_parameter_lists() {
    let items = |tpl: &str, uri: &str, name: &str| {
        let c = t(tpl).captures(uri)?;
        Some(c.get(name).map(|c| c.items().to_vec()))
    };
    let tpl = "s://items{?tag*}";
    assert_eq!(t(tpl).list_separator("tag"), ',');
    assert_eq!(
        items(tpl, "s://items?tag=a&tag=b", "tag"),
        Some(Some(vec!["a".into(), "b".into()]))
    );
    assert_eq!(m(tpl, "s://items?tag=a&tag=b"), one("tag", "a,b"));
    assert_eq!(m(tpl, "s://items?tag=a"), one("tag", "a"));
    assert_eq!(m(tpl, "s://items"), Some(vec![])); // undefined
    assert_eq!(m(tpl, "s://items?other=1"), Some(vec![]));
    assert_eq!(
        items(tpl, "s://items?tag=a%26b&tag=c%2Cd&tag=", "tag"),
        Some(Some(vec!["a&b".into(), "c,d".into(), "".into()]))
    );
    // One pair, one item: a raw `,` is part of it.
    assert_eq!(
        items(tpl, "s://items?tag=a,b", "tag"),
        Some(Some(vec!["a,b".into()]))
    );
    assert_eq!(m(tpl, "s://items?tag=%00"), None);
    assert_eq!(m(tpl, "s://items?tag=a&tag=b#f"), None);
    // Parameters in any order, other ones in between.
    let tpl = "s://items{?q}{&tag*}";
    let c = t(tpl).captures("s://items?tag=a&x=0&q=1&tag=b").unwrap();
    assert_eq!(c["tag"].items(), ["a", "b"]);
    assert_eq!(c["q"].value(), "1");
    assert_eq!(m(tpl, "s://items?tag=a&q=1&q=2"), None); // a scalar still may not repeat
    let tpl = "s://q?fixed=1{&x*}";
    assert_eq!(m(tpl, "s://q?fixed=1&x=a&x=b"), one("x", "a,b"));
    assert_eq!(m(tpl, "s://q?fixed=1"), Some(vec![]));

    // `;x=a;x=b`: a path parameter, once per item.
    let tpl = "p://x{;m*}{?q}";
    assert_eq!(t(tpl).list_separator("m"), ',');
    assert_eq!(
        items(tpl, "p://x;m=1;m=2", "m"),
        Some(Some(vec!["1".into(), "2".into()]))
    );
    assert_eq!(
        items(tpl, "p://x;m;m=", "m"),
        Some(Some(vec!["".into(), "".into()]))
    );
    assert_eq!(
        items(tpl, "p://x;m=a%3Bb", "m"),
        Some(Some(vec!["a;b".into()]))
    );
    let got = m(tpl, "p://x;m=1;m=2?q=3").unwrap();
    assert_eq!(got, [("m".into(), "1,2".into()), ("q".into(), "3".into())]);
    assert_eq!(m(tpl, "p://x"), Some(vec![]));
    for bad in [
        "p://x;m=1;n=2",
        "p://x;mm=1",
        "p://x;m=a%2Fb",
        "p://x;m=..",
        "p://x;",
        "p://x;m=1;",
    ] {
        assert_eq!(m(tpl, bad), None, "{bad}");
    }
    // Associative arrays are out of scope: other names are not bound.
    assert_eq!(m("s://i{?k*}", "s://i?a=1&b=2"), Some(vec![]));
}

#[test]
fn lists_in_path_label_and_parameter_expressions() {
    // RFC 6570 expands a list that is not exploded with raw commas, whatever the operator:
    // `{/list}` is `/red,green,blue`, `{.list}` `.red,green,blue`, `{;list}`
    // `;list=red,green,blue`, `{?list}` `?list=red,green,blue`; a `,` within an item comes
    // encoded.
    let items = |tpl: &str, uri: &str, name: &str| {
        let c = t(tpl).captures(uri)?;
        Some(c.get(name)?.items().to_vec())
    };
    for (tpl, uri) in [
        ("x://d{/ids}", "x://d/a,b%2Cc"),
        ("x://d{.ids}", "x://d.a,b%2Cc"),
        ("x://d{;ids}", "x://d;ids=a,b%2Cc"),
        ("x://d{?ids}", "x://d?ids=a,b%2Cc"),
        ("x://d{?q}{&ids}", "x://d?ids=a,b%2Cc&q=1"),
        ("x://d{+ids}", "x://da,b%2Cc"),
        ("x://d{#ids}", "x://d#a,b%2Cc"),
    ] {
        assert_eq!(
            items(tpl, uri, "ids").as_deref(),
            Some(&["a".into(), "b,c".into()][..]),
            "{tpl} {uri}"
        );
        assert_eq!(
            m(tpl, uri)
                .unwrap()
                .iter()
                .find(|(k, _)| k == "ids")
                .unwrap()
                .1,
            "a,b,c"
        );
    }
    // Several variables: a list's commas stay in it, the expression's separator between.
    let c = t("x://d{/a,b}").captures("x://d/1,2/3,4").unwrap();
    assert_eq!(
        (c["a"].items(), c["b"].items()),
        (&["1".into(), "2".into()][..], &["3".into(), "4".into()][..])
    );
    let c = t("x://d{;a,b}").captures("x://d;a=1,2;b").unwrap();
    assert_eq!((c["a"].value(), c["b"].value()), ("1,2", ""));
    assert_eq!(
        items("x://f{.e}", "x://f.tar.gz,zip", "e").unwrap(),
        ["tar.gz", "zip"]
    );
    // Followed by other expressions and literals.
    let got = m("x://d{/ids}{?q}{#f}", "x://d/a,b?q=1#c,d").unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(
        items("x://d{/ids}/meta", "x://d/a,b/meta", "ids").unwrap(),
        ["a", "b"]
    );
    assert_eq!(
        items("x://d{/ids}.json", "x://d/a,b.json", "ids").unwrap(),
        ["a", "b"]
    );
    // Empty items, as in a `{var}` list (an exploded list refuses them).
    assert_eq!(
        items("x://d{/ids}", "x://d/a,,b", "ids").unwrap(),
        ["a", "", "b"]
    );
    assert_eq!(items("x://d{.e}", "x://d.,", "e").unwrap(), ["", ""]);
    // Each item stays one safe path segment, as the value does.
    for (tpl, uri) in [
        ("x://d{/ids}", "x://d/a,.."),
        ("x://d{/ids}", "x://d/..,a"),
        ("x://d{/ids}", "x://d/a,%2E"),
        ("x://d{/ids}", "x://d/a,b%2Fc"),
        ("x://d{.e}", "x://d.a,."),
        ("x://d{;p}", "x://d;p=a,.."),
        ("x://d{;p}", "x://d;p=a,%5C"),
    ] {
        assert_eq!(t(tpl).captures(uri), None, "{tpl} {uri}");
    }
    assert_eq!(m("x://d{/ids}", "x://d/a%2C.."), one("ids", "a,..")); // one item: `a,..`
    // An exploded path's items still split at `/` only: a raw `,` is not one of them.
    assert_eq!(m("c://x{/segs*}", "c://x/a,b"), None);
    // A URI with such a list can match: the templates overlap.
    assert!(t("x://d{/ids}").overlaps(&t("x://d/a,b")));
    assert!(t("x://d{;p}").overlaps(&t("x://d;p=a,b")));
    assert!(t("x://d{/id}").overlaps(&t("x://d{/id},v"))); // `x://d/1,v` matches both
}
