//! Which of our requests a stdio line over the limit answers, when that can be read from
//! the few bytes kept of either end of it (it was not buffered): an answer puts its
//! `result` or `error` object among its first members, with its `id` before it or as its
//! last member. Anything else (a request of the upstream, an `id` in the middle, escapes
//! in a key) is not read: the request it answered then ends at its time limit.

use super::link::id_in_string;

/// The `id` of the answer whose line starts with `head` and ends with `tail`, if it can be
/// read there: our number, or its decimal form as a string (as a whole answer's is read).
pub(super) fn answer_id(head: &[u8], tail: &[u8]) -> Option<u64> {
    let mut s = Scan { b: head, i: 0 };
    s.eat(b'{')?;
    let mut id = None;
    loop {
        let key = s.string()?;
        s.eat(b':')?;
        match s.peek()? {
            _ if key == b"method" => return None,
            b'{' | b'[' if key == b"result" || key == b"error" => break,
            b'{' | b'[' => return None,
            b'"' => {
                let value = s.string()?;
                if key == b"id" {
                    id = Some(id_in_string(std::str::from_utf8(value).ok()?)?);
                }
            }
            _ => {
                let value = s.scalar()?;
                if key == b"id" {
                    id = Some(std::str::from_utf8(value).ok()?.parse().ok()?);
                }
            }
        }
        // A whole object would have fit: only more members can follow here.
        s.eat(b',')?;
    }
    id.or_else(|| last_id(tail))
}

/// `N` when `tail` ends with the member `"id": N` and the object's close (after a `,`
/// or the `{` of the object: no nested value ends there).
fn last_id(tail: &[u8]) -> Option<u64> {
    let t = tail.trim_ascii_end().strip_suffix(b"}")?.trim_ascii_end();
    // Our id may come back as a string (`"7"`): the same matcher as a whole answer's.
    let (t, quoted) = match t.strip_suffix(b"\"") {
        Some(t) => (t, true),
        None => (t, false),
    };
    let digits = t.len() - t.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let (t, n) = t.split_at(digits);
    let n = id_in_string(std::str::from_utf8(n).ok()?)?;
    let t = if quoted { t.strip_suffix(b"\"")? } else { t };
    let t = t.trim_ascii_end().strip_suffix(b":")?.trim_ascii_end();
    let t = t.strip_suffix(br#""id""#)?.trim_ascii_end();
    matches!(t.last(), Some(b',' | b'{')).then_some(n)
}

/// A cursor over JSON bytes that may stop anywhere; every step is `None` at their end.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    /// The next byte that is not whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        while self.b.get(self.i)?.is_ascii_whitespace() {
            self.i += 1;
        }
        self.b.get(self.i).copied()
    }

    /// Takes `c`, the next byte that is not whitespace.
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// The raw bytes of the string that comes next (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => break,
                _ => self.i += 1,
            }
        }
        let s = self.b.get(start..self.i)?;
        self.i += 1;
        Some(s)
    }

    /// The number, `true`, `false` or `null` that comes next, ended by a `,` or `}`.
    fn scalar(&mut self) -> Option<&'a [u8]> {
        self.peek()?;
        let start = self.i;
        loop {
            let c = *self.b.get(self.i)?;
            if c == b',' || c == b'}' || c.is_ascii_whitespace() {
                break;
            }
            self.i += 1;
        }
        self.b.get(start..self.i)
    }
}

#[cfg(test)]
mod tests {
    use super::answer_id;

    fn id_of(line: &str) -> Option<u64> {
        let b = line.as_bytes();
        let head = &b[..b.len().min(40)];
        let tail = &b[b.len().saturating_sub(20)..];
        answer_id(head, tail)
    }

    #[test]
    fn an_answers_id_is_read_at_either_end() {
        let big = "x".repeat(100);
        // Python SDK, serde_json (sorted keys), TypeScript SDK (`result` first).
        let python = format!(r#"{{"jsonrpc":"2.0","id":12,"result":{{"t":"{big}"}}}}"#);
        let sorted = format!(r#"{{"error":{{"message":"{big}"}},"id":3,"jsonrpc":"2.0"}}"#);
        let typescript = format!(r#"{{"result":{{"t":"{big}"}},"jsonrpc":"2.0","id":7}}"#);
        let spaced = format!(r#"{{ "result" : {{"t":"{big}"}}, "id" : 8 }}"#);
        assert_eq!(id_of(&python), Some(12));
        assert_eq!(id_of(&sorted), None, "its id is in the middle");
        assert_eq!(id_of(&typescript), Some(7));
        assert_eq!(id_of(&spaced), Some(8));
        // Our id written as a string, at either end.
        let head = format!(r#"{{"jsonrpc":"2.0","id":"12","result":{{"t":"{big}"}}}}"#);
        let tail = format!(r#"{{"result":{{"t":"{big}"}},"jsonrpc":"2.0","id":"7"}}"#);
        assert_eq!(id_of(&head), Some(12));
        assert_eq!(id_of(&tail), Some(7));
    }

    #[test]
    fn what_is_not_an_answer_names_no_request() {
        let big = "x".repeat(100);
        for line in [
            format!(r#"{{"method":"sampling/createMessage","params":{{"t":"{big}"}},"id":7}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":7,"params":{{"t":"{big}"}}}}"#),
            format!(r#"{{"result":{{"t":"{big}","id":7}}}}"#),
            format!(r#"{{"result":{{"t":"{big}"}},"x":{{"id":7}}}}"#),
            format!(r#"{{"result":{{"t":"{big}"}},"id":"07"}}"#),
            format!(r#"{{"jsonrpc":"{big}","id":7,"result":{{}}}}"#),
            format!("[{big}]"),
            "{\"id\":-1,\"result\":{}}".to_owned(),
        ] {
            assert_eq!(id_of(&line), None, "{line}");
        }
    }
}
