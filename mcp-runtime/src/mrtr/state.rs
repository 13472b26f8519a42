//! The sealed `requestState`: what a multi-round request carries from one round to the
//! next, encrypted and authenticated (XChaCha20-Poly1305) with a rotating key ring, and
//! bound to the request it belongs to.

use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest `requestState` accepted (and produced): 64 KiB.
pub const MAX_STATE_LEN: usize = 64 * 1024;

/// Default lifetime of a `requestState`.
pub const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);

/// The environment variable [`KeyRing::from_env`] reads: `kid=base64url,kid2=base64url`,
/// the first key active, the others still accepted (for rotation).
pub const KEYS_ENV: &str = "MCP_REQUEST_STATE_KEYS";

/// Keys that seal and open `requestState`. One key is active (new states use it); the
/// others are still accepted, so keys rotate without breaking flows in flight:
/// `{k1}` → `{k1 active, k2}` → `{k2 active, k1}` → `{k2}`.
///
/// ```
/// use mcp_runtime::Server;
/// use mcp_runtime::config::RequestState;
/// use mcp_runtime::mrtr::KeyRing;
///
/// // At least 32 bytes of secret material per key (from a secret store in production).
/// let ring = KeyRing::new([("k2", [7u8; 32]), ("k1", [9u8; 32])]).unwrap(); // k2 active, k1 accepted
/// assert!(KeyRing::new([("short", [0u8; 8])]).is_err());
/// let server = Server::builder("x", "1.0").request_state(RequestState::keys(ring)).build().unwrap();
/// # drop(server);
/// ```
#[derive(Clone)]
pub struct KeyRing {
    keys: Vec<(String, [u8; 32])>,
    ephemeral: bool,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<&str> = self.keys.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("KeyRing")
            .field("kids", &kids)
            .field("ephemeral", &self.ephemeral)
            .finish()
    }
}

/// Checks a key: its id a short token, its material at least 32 bytes.
fn check_key(kid: &str, material: &[u8]) -> Result<(), String> {
    if kid.is_empty()
        || !kid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(format!(
            "key id `{kid}` must be made of letters, digits, `_` and `-`"
        ));
    }
    if material.len() < 32 {
        return Err(format!(
            "key `{kid}` has {} bytes; use at least 32",
            material.len()
        ));
    }
    Ok(())
}

/// Keys as given: each id with its secret material.
pub(crate) type KeyMaterial = Vec<(String, Vec<u8>)>;

/// The keys [`KEYS_ENV`] gives, read and checked (each key's id and length, at least one
/// key) but not yet derived ([`KeyRing::derive`]); `Ok(None)` when it is not set.
pub(crate) fn env_material() -> Result<Option<KeyMaterial>, String> {
    let Ok(spec) = std::env::var(KEYS_ENV) else {
        return Ok(None);
    };
    let mut keys = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (kid, b64) = item
            .split_once('=')
            .ok_or_else(|| format!("{KEYS_ENV}: expected kid=base64url, got `{item}`"))?;
        let material = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(b64.trim_end_matches('='))
            .map_err(|_| format!("{KEYS_ENV}: key `{kid}` is not base64url"))?;
        keys.push((kid.to_owned(), material));
    }
    // Checked once all are read: a variable with several faults names its first
    // unreadable key before any key that reads but is refused.
    for (kid, material) in &keys {
        check_key(kid, material).map_err(|e| format!("{KEYS_ENV}: {e}"))?;
    }
    if keys.is_empty() {
        return Err(format!("{KEYS_ENV}: a key ring needs at least one key"));
    }
    Ok(Some(keys))
}

/// Why a state could not be sealed.
#[derive(Debug)]
pub(crate) enum SealError {
    /// The sealed state would be this many bytes, past [`MAX_STATE_LEN`]: what the
    /// request carries (the client's answers, the handler's steps) is too much.
    TooLarge(usize),
    /// The sealing itself failed (the OS's random source, serialization).
    Failed(String),
}

impl KeyRing {
    /// A ring whose first key is active. Each key is at least 32 bytes of secret material;
    /// key ids are short tokens (`[A-Za-z0-9_-]`).
    pub fn new<I, K, M>(keys: I) -> Result<KeyRing, String>
    where
        I: IntoIterator<Item = (K, M)>,
        K: Into<String>,
        M: AsRef<[u8]>,
    {
        let mut checked = Vec::new();
        for (kid, material) in keys {
            let kid = kid.into();
            check_key(&kid, material.as_ref())?;
            checked.push((kid, material));
        }
        if checked.is_empty() {
            return Err("a key ring needs at least one key".into());
        }
        Ok(KeyRing::derive(&checked))
    }

    /// The ring of keys already checked ([`check_key`], at least one): each key is
    /// derived from its material.
    pub(crate) fn derive<M: AsRef<[u8]>>(keys: &[(String, M)]) -> KeyRing {
        let derive = |material: &[u8]| {
            let mut h = Sha256::new();
            h.update(b"mcp-runtime requestState v1\0");
            h.update(material);
            h.finalize().into()
        };
        KeyRing {
            keys: keys
                .iter()
                .map(|(kid, material)| (kid.clone(), derive(material.as_ref())))
                .collect(),
            ephemeral: false,
        }
    }

    /// A random key for this process only: states do not survive a restart or reach
    /// another instance.
    pub fn ephemeral() -> KeyRing {
        // 32 random bytes are a key as they are: only given material is hashed into one.
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source works");
        KeyRing {
            keys: vec![("ephemeral".to_owned(), key)],
            ephemeral: true,
        }
    }

    /// Reads [`KEYS_ENV`]; `Ok(None)` when it is not set.
    pub fn from_env() -> Result<Option<KeyRing>, String> {
        Ok(env_material()?.map(|keys| KeyRing::derive(&keys)))
    }

    /// Whether this is a per-process random key.
    pub fn is_ephemeral(&self) -> bool {
        self.ephemeral
    }

    pub(crate) fn seal(&self, payload: &Sealed) -> Result<String, SealError> {
        let (kid, key) = &self.keys[0];
        let aad = format!("v1.{kid}");
        let mut nonce = [0u8; 24];
        getrandom::fill(&mut nonce).map_err(|e| SealError::Failed(e.to_string()))?;
        let plain = serde_json::to_vec(payload).map_err(|e| SealError::Failed(e.to_string()))?;
        let cipher = XChaCha20Poly1305::new(key.into());
        let ct = cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &plain,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| SealError::Failed("sealing failed".to_owned()))?;
        let mut blob = nonce.to_vec();
        blob.extend_from_slice(&ct);
        let state = format!(
            "{aad}.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(blob)
        );
        if state.len() > MAX_STATE_LEN {
            return Err(SealError::TooLarge(state.len()));
        }
        Ok(state)
    }

    /// Opens a state. Callers answer every failure with one generic error that says
    /// nothing an attacker could use; the reason is for the operator's log.
    pub(crate) fn open(&self, state: &str) -> Result<Sealed, OpenError> {
        if state.len() > MAX_STATE_LEN {
            return Err(OpenError::Malformed);
        }
        let mut parts = state.splitn(3, '.');
        let (Some(version), Some(kid), Some(body)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(OpenError::Malformed);
        };
        if version != "v1" {
            return Err(OpenError::Malformed);
        }
        let Some((_, key)) = self.keys.iter().find(|(k, _)| k == kid) else {
            return Err(OpenError::UnknownKey(kid.chars().take(64).collect()));
        };
        let blob = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| OpenError::Malformed)?;
        if blob.len() < 24 {
            return Err(OpenError::Malformed);
        }
        let (nonce, ct) = blob.split_at(24);
        let aad = format!("v1.{kid}");
        let plain = XChaCha20Poly1305::new(key.into())
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ct,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| OpenError::Unsealed(kid.to_owned()))?;
        serde_json::from_slice(&plain).map_err(|_| OpenError::Malformed)
    }

    /// The key ids, the active one first.
    pub(crate) fn kids(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|(k, _)| k.as_str())
    }
}

/// Why a `requestState` did not open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// Not a state of ours (shape, encoding, version).
    Malformed,
    /// Sealed with a key id this ring does not hold: another instance has other keys, or
    /// a retired key.
    UnknownKey(String),
    /// The key id is known but the seal does not open: tampered, or another instance holds
    /// different material under the same id.
    Unsealed(String),
}

/// What a `requestState` holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sealed {
    /// The server that sealed it (its name): servers that share a key ring do not take
    /// each other's states.
    #[serde(default)]
    pub(crate) aud: String,
    /// Expiry, milliseconds since the Unix epoch.
    pub(crate) exp: u64,
    /// The method, target (tool/prompt name or URI), argument digest and principal it is
    /// bound to.
    pub(crate) m: String,
    pub(crate) t: String,
    pub(crate) a: String,
    pub(crate) s: String,
    /// How many rounds came before.
    pub(crate) r: u32,
    /// Answers received so far, by key.
    pub(crate) ans: BTreeMap<String, Value>,
    /// Results of steps already run, by key.
    pub(crate) st: BTreeMap<String, Value>,
    /// The keys asked in the last round (answers to other keys are ignored).
    pub(crate) p: Vec<String>,
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// SHA-256 of the canonical JSON (sorted keys, no whitespace, a whole number written as
/// an integer) of `v`, in hex: equal for a retry whose arguments only differ in key
/// order, spacing or how a number is written (`1.0`, `1e0` and `1` are one number; a
/// client in JavaScript writes them all `1`).
pub(crate) fn digest(v: &Value) -> String {
    fn canon(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                // Sorted here: a `Map` keeps insertion order where serde_json's
                // `preserve_order` is on (any crate of the build may turn it on).
                let mut sorted: Vec<(&String, &Value)> = m.iter().collect();
                sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
                out.push('{');
                for (i, (k, v)) in sorted.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    canon(v, out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canon(v, out);
                }
                out.push(']');
            }
            // A whole f64 below 10^21: in integer digits, as JCS writes it (so `1e16` and
            // `10000000000000000` are one value, whichever a client's JSON layer wrote).
            // Exact: such an f64 is an integer, and fits an i128.
            Value::Number(n)
                if n.as_f64()
                    .is_some_and(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21) =>
            {
                let whole = n.as_f64().unwrap_or_default() as i128;
                out.push_str(&whole.to_string());
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut s = String::new();
    canon(v, &mut s);
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload() -> Sealed {
        Sealed {
            exp: now() + 60_000,
            m: "tools/call".into(),
            t: "x".into(),
            a: digest(&json!({"b": 1, "a": [2]})),
            s: "local".into(),
            r: 1,
            ..Default::default()
        }
    }

    #[test]
    fn seal_and_open_round_trip_and_tampering_fails() {
        let ring = KeyRing::new([("k1", [7u8; 32])]).unwrap();
        let s = ring.seal(&payload()).unwrap();
        assert!(s.starts_with("v1.k1."));
        assert_eq!(ring.open(&s).unwrap(), payload_eq(&ring.open(&s).unwrap()));
        assert_eq!(
            KeyRing::new([("k1", [8u8; 32])]).unwrap().open(&s),
            Err(OpenError::Unsealed("k1".into()))
        );
        assert_eq!(
            KeyRing::new([("k9", [7u8; 32])]).unwrap().open(&s),
            Err(OpenError::UnknownKey("k1".into()))
        );
        let mut bad = s.clone();
        bad.push_str("-TAMPERED");
        assert!(ring.open(&bad).is_err());
        let flipped = format!("{}A{}", &s[..s.len() - 5], &s[s.len() - 4..]);
        assert!(ring.open(&flipped).is_err() || flipped == s);
        assert!(ring.open(&s.replace("v1.k1.", "v1.k2.")).is_err());
        assert!(ring.open("garbage").is_err());
        assert!(ring.open(&"x".repeat(MAX_STATE_LEN + 1)).is_err());
    }

    fn payload_eq(p: &Sealed) -> Sealed {
        p.clone()
    }

    #[test]
    fn rotation_keeps_old_states_valid() {
        let old = KeyRing::new([("k1", [1u8; 32])]).unwrap();
        let s = old.seal(&payload()).unwrap();
        let rotated = KeyRing::new([("k2", [2u8; 32]), ("k1", [1u8; 32])]).unwrap();
        assert!(rotated.open(&s).is_ok());
        assert!(rotated.seal(&payload()).unwrap().starts_with("v1.k2."));
        let retired = KeyRing::new([("k2", [2u8; 32])]).unwrap();
        assert!(retired.open(&s).is_err());
        assert!(KeyRing::new([("k", [0u8; 8])]).is_err());
    }

    #[test]
    fn digests_are_canonical() {
        assert_eq!(
            digest(&json!({"a": 1, "b": [1, {"y": 2, "x": 1}]})),
            digest(&json!({"b": [1, {"x": 1, "y": 2}], "a": 1}))
        );
        assert_ne!(digest(&json!({"a": 1})), digest(&json!({"a": 2})));
        // One number, however written.
        let parse = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        for same in ["1.0", "1e0", "0.1e1", "1"] {
            assert_eq!(digest(&parse(same)), digest(&json!(1)), "{same}");
        }
        assert_eq!(digest(&parse("-0.0")), digest(&json!(0)));
        assert_ne!(digest(&parse("1.5")), digest(&json!(1)));
        assert_ne!(digest(&parse("1e300")), digest(&json!(1)));
        // Whole numbers past 2^53 too: a float layer writes 10^16 as `1e+16`.
        for same in ["1e16", "1e+16", "10000000000000000.0"] {
            assert_eq!(
                digest(&parse(same)),
                digest(&json!(10_000_000_000_000_000u64)),
                "{same}"
            );
        }
        assert_eq!(
            digest(&parse("-1e20")),
            digest(&parse("-100000000000000000000"))
        );
    }
}
