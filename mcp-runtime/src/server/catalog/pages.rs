//! List results, paged: precomputed once per catalog, served as text.

use crate::protocol::CacheHints;
use crate::protocol::envelope::{Envelope, ResultMeta, ResultType};
use crate::protocol::legacy::{LegacyVersion, Shape};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// One list entry: sort key, item JSON (shared with the catalog entry it lists), the
/// item's hints, the scopes a caller needs to see it (empty: everyone).
pub(crate) type ListEntry = (String, Arc<RawValue>, Option<CacheHints>, Vec<String>);

/// The body of one page of a list result: `{"<key>": [...], "nextCursor": ...}`.
pub(crate) struct ListBody<'a, T> {
    pub(crate) key: &'static str,
    pub(crate) items: &'a [T],
    pub(crate) next_cursor: Option<String>,
}

impl<T: Serialize> Serialize for ListBody<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(self.key, self.items)?;
        if let Some(c) = &self.next_cursor {
            m.serialize_entry("nextCursor", c)?;
        }
        m.end()
    }
}

/// The whole result object of one list page.
pub(crate) fn list_result<T: Serialize>(
    key: &'static str,
    items: &[T],
    next_cursor: Option<String>,
    hints: CacheHints,
    server_info: Option<&RawValue>,
) -> Box<RawValue> {
    let envelope = Envelope {
        result_type: ResultType::Complete,
        body: ListBody {
            key,
            items,
            next_cursor,
        },
        cache: Some(hints),
        meta: ResultMeta {
            own: None,
            server_info,
        },
    };
    serde_json::value::to_raw_value(&envelope).expect("list results serialize")
}

/// The pages of one list method, precomputed.
pub(crate) struct ListPages {
    /// The key each item is sorted and paged by (name or URI).
    names: Vec<String>,
    /// Each item as JSON text (the catalog entry's own copy, shared).
    items: Vec<Arc<RawValue>>,
    key: &'static str,
    page_size: usize,
    pub(crate) hints: CacheHints,
    /// The result of each page, by index of its first item.
    pages: BTreeMap<usize, Box<RawValue>>,
    /// The same pages in each legacy revision's shape, made on first use.
    legacy: [OnceLock<BTreeMap<usize, Box<RawValue>>>; 3],
    /// The scopes a caller needs to see each item (authorization).
    scopes: Vec<Vec<String>>,
    /// The list as callers who see only some items see it, by which items they see.
    partial: Mutex<HashMap<Vec<bool>, Arc<ListPages>>>,
}

/// The most partial views of one list kept (then the cache starts over).
const MAX_PARTIAL_VIEWS: usize = 256;

impl ListPages {
    /// Pages `entries` (already in list order): `(sort key, item JSON, item hints)`. The
    /// list's hints are the most restrictive of `default` and every item's.
    pub(crate) fn build(
        key: &'static str,
        entries: Vec<ListEntry>,
        page_size: usize,
        default: CacheHints,
        server_info: Option<&RawValue>,
    ) -> ListPages {
        let mut hints = entries
            .iter()
            .filter_map(|e| e.2)
            .fold(default, CacheHints::combine);
        if entries.iter().any(|e| !e.3.is_empty()) {
            // What a caller sees depends on who it is: no shared cache may keep it.
            hints = hints.combine(CacheHints::new(
                u64::MAX,
                crate::protocol::CacheScope::Private,
            ));
        }
        let mut names = Vec::with_capacity(entries.len());
        let mut items = Vec::with_capacity(entries.len());
        let mut scopes = Vec::with_capacity(entries.len());
        for (n, i, _, s) in entries {
            names.push(n);
            items.push(i);
            scopes.push(s);
        }
        let mut list = ListPages {
            names,
            items,
            key,
            page_size,
            hints,
            pages: BTreeMap::new(),
            legacy: Default::default(),
            scopes,
            partial: Mutex::new(HashMap::new()),
        };
        let mut start = 0;
        loop {
            let page = list.render(start, server_info);
            list.pages.insert(start, page);
            start += page_size;
            if start >= list.items.len() {
                break;
            }
        }
        list
    }

    /// The list as a caller sees it who may see the items whose scopes `visible` accepts:
    /// `None` when that is every item (serve `self`), else the list of those only, made
    /// once per set of visible items.
    pub(crate) fn for_caller(
        &self,
        visible: impl Fn(&[String]) -> bool,
        server_info: Option<&RawValue>,
    ) -> Option<Arc<ListPages>> {
        let mask: Vec<bool> = self
            .scopes
            .iter()
            .map(|s| s.is_empty() || visible(s))
            .collect();
        if mask.iter().all(|&v| v) {
            return None;
        }
        let mut views = self.partial.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = views.get(&mask) {
            return Some(Arc::clone(v));
        }
        let entries = mask
            .iter()
            .enumerate()
            .filter(|(_, v)| **v)
            .map(|(i, _)| {
                (
                    self.names[i].clone(),
                    Arc::clone(&self.items[i]),
                    None,
                    Vec::new(),
                )
            })
            .collect();
        let view = Arc::new(ListPages::build(
            self.key,
            entries,
            self.page_size,
            self.hints,
            server_info,
        ));
        if views.len() >= MAX_PARTIAL_VIEWS {
            views.clear();
        }
        views.insert(mask, Arc::clone(&view));
        Some(view)
    }

    /// The items of `start..end`, to serialize.
    fn slice(&self, start: usize, end: usize) -> Vec<&RawValue> {
        self.items[start.min(end)..end]
            .iter()
            .map(|i| &**i)
            .collect()
    }

    fn render(&self, start: usize, server_info: Option<&RawValue>) -> Box<RawValue> {
        let end = (start + self.page_size).min(self.items.len());
        let next = (end < self.items.len()).then(|| encode_cursor(self.key, &self.names[end - 1]));
        list_result(
            self.key,
            &self.slice(start, end),
            next,
            self.hints,
            server_info,
        )
    }

    /// The page after `cursor` (or the first page). `None` for a cursor this server did
    /// not make. A cursor past an item that was removed since starts a page that was not
    /// precomputed: it is rendered now, with `server_info`.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        server_info: Option<&RawValue>,
    ) -> Option<Cow<'_, RawValue>> {
        let start = self.start(cursor)?;
        Some(match self.pages.get(&start) {
            Some(p) => Cow::Borrowed(&**p),
            None => Cow::Owned(self.render(start, server_info)),
        })
    }

    /// The page after `cursor` in the shape of a legacy revision (no `resultType`,
    /// caching hints or server `_meta`; fields newer than `version` left out).
    pub(crate) fn legacy_page(
        &self,
        cursor: Option<&str>,
        version: LegacyVersion,
    ) -> Option<Cow<'_, RawValue>> {
        let start = self.start(cursor)?;
        let pages = self.legacy[version as usize].get_or_init(|| {
            let mut pages = BTreeMap::new();
            let mut at = 0;
            loop {
                pages.insert(at, self.render_legacy(at, version));
                at += self.page_size;
                if at >= self.items.len() {
                    return pages;
                }
            }
        });
        Some(match pages.get(&start) {
            Some(p) => Cow::Borrowed(&**p),
            None => Cow::Owned(self.render_legacy(start, version)),
        })
    }

    /// Where the page after `cursor` starts; `None` for a cursor this server did not make.
    fn start(&self, cursor: Option<&str>) -> Option<usize> {
        Some(match cursor {
            None => 0,
            Some(c) => {
                let after = decode_cursor(self.key, c)?;
                self.names.partition_point(|n| n.as_str() <= after.as_str())
            }
        })
    }

    fn render_legacy(&self, start: usize, version: LegacyVersion) -> Box<RawValue> {
        let end = (start + self.page_size).min(self.items.len());
        let next_cursor =
            (end < self.items.len()).then(|| encode_cursor(self.key, &self.names[end - 1]));
        let envelope = Envelope {
            result_type: ResultType::Complete,
            body: ListBody {
                key: self.key,
                items: &self.slice(start, end),
                next_cursor,
            },
            cache: None,
            meta: ResultMeta::default(),
        };
        let shape = match self.key {
            "tools" => Shape::Tools,
            "prompts" => Shape::Prompts,
            "resources" => Shape::Resources,
            "resourceTemplates" => Shape::Templates,
            _ => Shape::Plain,
        };
        serde_json::value::to_raw_value(&envelope.legacy(version, shape))
            .expect("list results serialize")
    }
}

const CURSOR_PREFIX: &str = "after:";

/// Cursors name the list and the last item of the previous page, so they stay valid
/// across restarts, across instances and when items are added or removed, and a cursor
/// of one list (`tools`) is not taken by another (`prompts/list`).
pub(crate) fn encode_cursor(list: &str, last: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{list}:{last}"))
}

/// The item a cursor of `list` names; `None` for one this server did not make for it.
pub(crate) fn decode_cursor(list: &str, cursor: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let s = String::from_utf8(bytes).ok()?;
    let last = s
        .strip_prefix(CURSOR_PREFIX)?
        .strip_prefix(list)?
        .strip_prefix(':')?;
    Some(last.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::CacheScope;
    use serde_json::Value;

    #[test]
    fn cursors_round_trip_and_reject_foreign_values() {
        let c = encode_cursor("tools", "weather");
        assert_eq!(decode_cursor("tools", &c).as_deref(), Some("weather"));
        // Another list's cursor, a name with the separator in it, a prefix of the key.
        assert!(decode_cursor("prompts", &c).is_none());
        let c = encode_cursor("resources", "notes://a:b");
        assert_eq!(
            decode_cursor("resources", &c).as_deref(),
            Some("notes://a:b")
        );
        assert!(decode_cursor("resourceTemplates", &c).is_none());
        let c = encode_cursor("resourceTemplates", "x");
        assert!(decode_cursor("resources", &c).is_none());
        assert!(decode_cursor("tools", "garbage!").is_none());
        assert!(decode_cursor("tools", "Zm9v").is_none());
    }

    #[test]
    fn pages_carry_the_envelope_and_the_next_cursor() {
        let item = |n: &str| {
            (
                n.to_owned(),
                Arc::from(RawValue::from_string(format!("{{\"name\":\"{n}\"}}")).unwrap()),
                None,
                Vec::new(),
            )
        };
        let hints = CacheHints::new(1000, CacheScope::Public);
        let pages = ListPages::build(
            "tools",
            vec![item("a"), item("b"), item("c")],
            2,
            hints,
            None,
        );
        let first: Value = serde_json::from_str(pages.page(None, None).unwrap().get()).unwrap();
        assert_eq!(first["resultType"], "complete");
        assert_eq!(first["tools"].as_array().unwrap().len(), 2);
        assert_eq!(first["ttlMs"], 1000);
        let cursor = first["nextCursor"].as_str().unwrap();
        let second: Value =
            serde_json::from_str(pages.page(Some(cursor), None).unwrap().get()).unwrap();
        assert_eq!(second["tools"][0]["name"], "c");
        assert!(second.get("nextCursor").is_none());
        assert!(pages.page(Some("bogus"), None).is_none());
    }
}
