//! What can be asked in a form: [`ElicitForm`], [`FormField`], and [`ElicitParam`] for
//! declared `#[input(elicit = ...)]` parameters.

use super::{Elicited, Input};
use crate::Error;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A Rust type an elicitation form can be made from: a flat object whose fields are text,
/// numbers, booleans or string enums (the spec allows nothing nested). Derive it:
/// `#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]`; the derive
/// checks every field at compile time.
///
/// ```
/// use mcp_runtime::{Error, Form, Input, tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Login {
///     /// Your login
///     login: String,
///     remember: Option<bool>,
/// }
///
/// /// Greets the user by login.
/// #[tool]
/// async fn greet(input: Input) -> Result<String, Error> {
///     let user: Login = input.elicit("login", "Who are you?").await?.accepted()?;
///     Ok(format!("hello {} (remembered: {:?})", user.login, user.remember))
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an elicitation form",
    label = "not a form",
    note = "add `#[derive(mcp_runtime::Form)]` to a struct whose fields are text, numbers, booleans or string enums"
)]
pub trait ElicitForm: DeserializeOwned + JsonSchema + Send {}

/// A type a form field can have: text, numbers, booleans, string enums
/// (`#[derive(Form)]` on a unit-only enum), and `Option` of these.
///
/// ```
/// use mcp_runtime::Form;
/// use mcp_runtime::mrtr::FormField;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// #[serde(rename_all = "lowercase")]
/// enum Size {
///     Small,
///     Large,
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Order {
///     size: Size,
///     quantity: u32,
///     note: Option<String>,
/// }
///
/// fn field<T: FormField>() {}
/// field::<Size>();
/// field::<Option<u32>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a primitive",
    note = "forms are flat: a field is text, a number, a boolean, a string enum (`#[derive(Form)]` on a unit-only enum) or an `Option` of these"
)]
pub trait FormField {}

macro_rules! form_fields {
    ($($t:ty),*) => {$(impl FormField for $t {})*};
}
form_fields!(String, bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
impl<T: FormField> FormField for Option<T> {}

/// A parameter filled by a declared elicitation (`#[input(elicit = "...")]`): `T` (a
/// decline or cancel becomes an execution error) or [`Elicited<T>`] (the handler decides).
///
/// ```
/// use mcp_runtime::{Elicited, Form};
/// use mcp_runtime::mrtr::ElicitParam;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Approval {
///     approved: bool,
/// }
///
/// fn elicitable<T: ElicitParam>() {}
/// elicitable::<Approval>(); // a decline becomes an error result
/// elicitable::<Elicited<Approval>>(); // the handler sees decline and cancel
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive an elicitation",
    label = "not a form",
    note = "an elicited parameter is a form type `T: Form` (decline becomes an error result) or `Elicited<T>` (you handle decline and cancel)"
)]
pub trait ElicitParam: Sized + Send {
    /// Asks (or takes the answer) under `key`.
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> BoxFuture<'a, Result<Self, Error>>;
}

#[diagnostic::do_not_recommend]
impl<T: ElicitForm + 'static> ElicitParam for T {
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> BoxFuture<'a, Result<Self, Error>> {
        Box::pin(async move { input.elicit::<T>(key, message).await?.accepted() })
    }
}

impl<T: ElicitForm + 'static> ElicitParam for Elicited<T> {
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> BoxFuture<'a, Result<Self, Error>> {
        Box::pin(input.elicit::<T>(key, message))
    }
}

/// `sampling/createMessage` params for a one-question prompt.
///
/// ```
/// let p = mcp_runtime::mrtr::sampling_request("Name a colour.", 16);
/// assert_eq!(p["maxTokens"], 16);
/// assert_eq!(p["messages"][0]["content"]["text"], "Name a colour.");
/// ```
pub fn sampling_request(text: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
        "maxTokens": max_tokens,
    })
}

/// The `requestedSchema` of an elicitation form, from the JSON Schema of a form type
/// (`T: Form`, inlined): an object of `properties` and `required` whose every property is
/// one of the flat shapes both eras define (string, number or integer, boolean, string
/// enum), with one `type` each.
///
/// A Rust type's schema says more than a form may: `Option<T>` is `"type": [T, "null"]`
/// (or `anyOf` of `T` and `null`), an integer carries its `format` (`uint32`), an enum
/// with doc comments is a `oneOf` of `const`s. Clients check the form's schema against
/// the spec's shapes and refuse the whole request over one such property (the TypeScript
/// SDK 1.x does), so each property is written in the spec's terms here: an optional field
/// is one left out of `required` (serde reads a missing one as `None`), and the answer is
/// still checked against the type's own schema.
pub(crate) fn requested_schema(schema: &Value) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("type".into(), json!("object"));
    let properties: serde_json::Map<String, Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| (name.clone(), form_property(p)))
                .collect()
        })
        .unwrap_or_default();
    out.insert("properties".into(), Value::Object(properties));
    if let Some(required) = schema.get("required").filter(|r| r.is_array()) {
        out.insert("required".into(), required.clone());
    }
    Value::Object(out)
}

/// One property of a form in the spec's terms (see [`requested_schema`]).
fn form_property(p: &Value) -> Value {
    let Some(o) = p.as_object() else {
        return p.clone();
    };
    // `anyOf`/`oneOf` of one schema and `{"type": "null"}` (an `Option` of an enum): the
    // schema, under the outer one's title and description.
    for union in ["anyOf", "oneOf"] {
        if let Some(branches) = o.get(union).and_then(Value::as_array) {
            let not_null: Vec<&Value> = branches.iter().filter(|b| !is_null_type(b)).collect();
            if let [only] = not_null[..]
                && branches.len() == 2
            {
                let mut inner = form_property(only);
                if let Some(io) = inner.as_object_mut() {
                    for k in ["title", "description", "default"] {
                        if let Some(v) = o.get(k).filter(|v| !v.is_null()) {
                            io.insert(k.into(), v.clone());
                        }
                    }
                }
                return inner;
            }
        }
    }
    // `"type": ["integer", "null"]`: the one type that is not null.
    let ty = match o.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    };
    // An enum with documented variants: `oneOf` of `{"const": ..., "description": ...}`
    // (and, when only some are documented, one `{"enum": [...]}` of the others), which
    // the spec writes as a titled choice (`oneOf` of `{const, title}`; an undocumented
    // variant is its own title).
    let titled: Option<Vec<Value>> = o.get("oneOf").and_then(Value::as_array).and_then(|bs| {
        let mut choices: Vec<(&str, &str)> = Vec::new();
        for b in bs {
            if let Some(c) = b.get("const").and_then(Value::as_str) {
                let title = b
                    .get("title")
                    .or_else(|| b.get("description"))
                    .and_then(Value::as_str)
                    .unwrap_or(c);
                choices.push((c, title));
            } else {
                for v in b.get("enum").and_then(Value::as_array)? {
                    let c = v.as_str()?;
                    choices.push((c, c));
                }
            }
        }
        // A value listed twice (a hand-written schema) is one choice: `oneOf` refuses a
        // value two branches match. The first title wins.
        let mut seen = std::collections::BTreeSet::new();
        choices.retain(|(c, _)| seen.insert(*c));
        Some(
            choices
                .into_iter()
                .map(|(c, title)| json!({ "const": c, "title": title }))
                .collect(),
        )
    });
    let ty = ty.or(titled.as_ref().map(|_| "string"));
    let keep: &[&str] = match ty {
        Some("string") => &[
            "title",
            "description",
            "minLength",
            "maxLength",
            "format",
            "default",
            "enum",
        ],
        Some("number" | "integer") => &["title", "description", "minimum", "maximum", "default"],
        Some("boolean") => &["title", "description", "default"],
        _ => return p.clone(),
    };
    let mut out = serde_json::Map::new();
    out.insert("type".into(), json!(ty));
    for &k in keep {
        let Some(v) = o.get(k).filter(|v| !v.is_null()) else {
            continue;
        };
        let v = match k {
            // A string's `format` is one of the four the spec names, or none.
            "format" if !matches!(v.as_str(), Some("email" | "uri" | "date" | "date-time")) => {
                continue;
            }
            // An `Option` of an enum may list `null` among the choices.
            "enum" => Value::Array(
                v.as_array()
                    .map(|vs| vs.iter().filter(|x| x.is_string()).cloned().collect())
                    .unwrap_or_default(),
            ),
            _ => v.clone(),
        };
        out.insert(k.into(), v);
    }
    if let Some(titled) = titled {
        out.remove("enum");
        out.insert("oneOf".into(), Value::Array(titled));
    }
    Value::Object(out)
}

/// Whether `schema` is `{"type": "null"}` (what schemars writes for `Option`'s `None`).
fn is_null_type(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

#[cfg(test)]
mod tests {
    use super::requested_schema;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Size {
        Small,
        Large,
    }

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    enum Plan {
        /// The free plan
        Free,
        /// The paid plan
        Pro,
    }

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    enum Tier {
        /// The free tier
        Free,
        Pro,
        Team,
    }

    #[allow(dead_code)]
    #[derive(schemars::JsonSchema)]
    struct Order {
        /// Your login
        login: String,
        remember: Option<bool>,
        quantity: u32,
        limit: Option<u64>,
        ratio: Option<f64>,
        size: Size,
        maybe_size: Option<Size>,
        plan: Option<Plan>,
        tier: Tier,
        #[schemars(email)]
        mail: Option<String>,
    }

    /// A value listed both as a documented `const` and in an `enum` is one choice.
    #[test]
    fn a_choice_listed_twice_is_one() {
        let schema = json!({"type": "object", "properties": {"c": {"oneOf": [
            {"const": "a", "description": "The a"},
            {"type": "string", "enum": ["a", "b"]}
        ]}}});
        assert_eq!(
            requested_schema(&schema)["properties"]["c"],
            json!({"type": "string", "oneOf": [
                {"const": "a", "title": "The a"},
                {"const": "b", "title": "b"}
            ]})
        );
    }

    #[test]
    fn each_field_is_a_flat_shape_of_one_type() {
        let schema = crate::schema::inline_schema_for::<Order>();
        let r = requested_schema(&schema);
        let p = &r["properties"];
        assert_eq!(r["type"], "object");
        assert_eq!(
            p["login"],
            json!({"type": "string", "description": "Your login"})
        );
        assert_eq!(p["remember"], json!({"type": "boolean"}));
        assert_eq!(p["quantity"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(p["limit"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(p["ratio"], json!({"type": "number"}));
        assert_eq!(
            p["size"],
            json!({"type": "string", "enum": ["small", "large"]})
        );
        assert_eq!(
            p["maybe_size"],
            json!({"type": "string", "enum": ["small", "large"]})
        );
        assert_eq!(
            p["plan"],
            json!({"type": "string", "oneOf": [
                {"const": "Free", "title": "The free plan"},
                {"const": "Pro", "title": "The paid plan"}
            ]})
        );
        // Only some variants documented: the others are their own titles.
        let mut tiers: Vec<String> = p["tier"]["oneOf"]
            .as_array()
            .unwrap_or(&Vec::new())
            .iter()
            .map(|c| format!("{}={}", c["const"], c["title"]))
            .collect();
        tiers.sort();
        assert_eq!(p["tier"]["type"], "string", "{}", p["tier"]);
        assert_eq!(
            tiers,
            [
                r#""Free"="The free tier""#,
                r#""Pro"="Pro""#,
                r#""Team"="Team""#
            ],
            "{}",
            p["tier"]
        );
        assert_eq!(p["mail"], json!({"type": "string", "format": "email"}));
        let mut required: Vec<&str> = r["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        required.sort();
        assert_eq!(required, ["login", "quantity", "size", "tier"], "{r}");
        // Nothing but the spec's keys, and no `null` anywhere.
        assert!(!r.to_string().contains("null"), "{r}");
        assert!(!r.to_string().contains("format\":\"uint"), "{r}");
    }
}
