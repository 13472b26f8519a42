//! Line framing: one JSON-RPC message per line, at most `max` bytes (newline excluded).
//! One framer, fed by an async reader (`serve_io`) or a blocking one (`serve_stdio`).

use std::io;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

pub(crate) enum Line {
    Message(Vec<u8>),
    /// A line over the limit, skipped: what is kept of it (which the proxy reads).
    TooLong(#[cfg_attr(not(feature = "proxy"), allow(dead_code))] Overlong),
    Eof,
}

/// What is kept of a line over the limit: its length (newline excluded), and its first
/// and last few bytes, enough to tell what it was (the proxy reads an answer's id there).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Overlong {
    pub(crate) len: u64,
    pub(crate) head: Vec<u8>,
    pub(crate) tail: Vec<u8>,
}

impl Overlong {
    /// Bytes kept of the start of the line.
    const HEAD: usize = 1024;
    /// Bytes kept of its end.
    const TAIL: usize = 64;

    /// Counts `bytes`, the next ones of the line, and keeps what it keeps of them.
    fn add(&mut self, bytes: &[u8]) {
        self.len = self.len.saturating_add(bytes.len() as u64);
        let room = Self::HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.tail
            .extend_from_slice(&bytes[bytes.len().saturating_sub(Self::TAIL)..]);
        let over = self.tail.len().saturating_sub(Self::TAIL);
        self.tail.drain(..over);
    }
}

/// What is kept between chunks: the part of a line read so far. On overflow, the rest of
/// the line is skipped to its newline without being buffered (only its length and a few
/// bytes of either end are kept).
struct Framer {
    max: usize,
    buf: Vec<u8>,
    overflow: Option<Overlong>,
}

impl Framer {
    fn new(max: usize) -> Self {
        Framer {
            max,
            buf: Vec::new(),
            overflow: None,
        }
    }

    /// Takes bytes from the start of `chunk` (not empty): how many it used, and the line
    /// they completed, if any.
    fn feed(&mut self, chunk: &[u8]) -> (usize, Option<Line>) {
        let (take, done) = match chunk.iter().position(|&c| c == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        match &mut self.overflow {
            Some(long) => long.add(&chunk[..take]),
            // One byte more is held: the CR of a CRLF line, which does not count.
            None if self.buf.len() + take > self.max + 1 => {
                let mut long = Overlong::default();
                long.add(&std::mem::take(&mut self.buf));
                long.add(&chunk[..take]);
                self.overflow = Some(long);
            }
            None => self.buf.extend_from_slice(&chunk[..take]),
        }
        if !done {
            return (take, None);
        }
        let line = match self.overflow.take() {
            Some(long) => Line::TooLong(long),
            None => self.held(),
        };
        (take + 1, Some(line))
    }

    /// The line held, which may be one byte over the limit only for a final CR.
    fn held(&mut self) -> Line {
        let buf = std::mem::take(&mut self.buf);
        if buf.len() > self.max && !buf.ends_with(b"\r") {
            let mut long = Overlong::default();
            long.add(&buf);
            return Line::TooLong(long);
        }
        Line::Message(buf)
    }

    /// The end of input: a partial last line is still a message.
    fn end(&mut self) -> Line {
        if let Some(long) = self.overflow.take() {
            Line::TooLong(long)
        } else if self.buf.is_empty() {
            Line::Eof
        } else {
            self.held()
        }
    }
}

/// Lines from an async buffered reader. Cancel-safe: a partial line stays here for the
/// next call, so it can wait in a `select!`.
pub(crate) struct Lines<R> {
    reader: R,
    framer: Framer,
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        Lines {
            reader,
            framer: Framer::new(max),
        }
    }

    pub(crate) async fn next(&mut self) -> io::Result<Line> {
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                return Ok(self.framer.end());
            }
            let (used, line) = self.framer.feed(chunk);
            self.reader.consume(used);
            if let Some(line) = line {
                return Ok(line);
            }
        }
    }
}

/// Lines from a blocking buffered reader.
pub(super) struct BlockingLines<R> {
    reader: R,
    framer: Framer,
}

impl<R: io::BufRead> BlockingLines<R> {
    pub(super) fn new(reader: R, max: usize) -> Self {
        BlockingLines {
            reader,
            framer: Framer::new(max),
        }
    }

    pub(super) fn next(&mut self) -> io::Result<Line> {
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                return Ok(self.framer.end());
            }
            let (used, line) = self.framer.feed(chunk);
            self.reader.consume(used);
            if let Some(line) = line {
                return Ok(line);
            }
        }
    }
}

/// The async line reader over `bytes` (a 64-byte limit, an 8-byte buffer), for the fuzz
/// target; the blocking one must frame the same bytes the same way.
#[cfg(feature = "fuzzing")]
pub(crate) async fn fuzz_lines(bytes: &[u8]) -> u64 {
    // The outcome: how many messages and over-long lines, in small classes.
    fn tally(messages: &mut u64, long: &mut u64, line: &Line) {
        match line {
            Line::Message(m) => {
                // The limit, and the CR of a CRLF line beyond it.
                assert!(
                    m.len() <= 64 || (m.len() == 65 && m.ends_with(b"\r")),
                    "a line past the limit"
                );
                *messages += 1;
            }
            Line::TooLong(_) => *long += 1,
            Line::Eof => {}
        }
    }
    let mut r = Lines::new(tokio::io::BufReader::with_capacity(8, bytes), 64);
    let mut b = BlockingLines::new(io::BufReader::with_capacity(8, bytes), 64);
    let (mut messages, mut long) = (0u64, 0u64);
    loop {
        let (line, same) = match (r.next().await, b.next()) {
            (Ok(a), Ok(b)) => {
                let same = match (&a, &b) {
                    (Line::Message(x), Line::Message(y)) => x == y,
                    (Line::TooLong(x), Line::TooLong(y)) => x == y,
                    (Line::Eof, Line::Eof) => true,
                    _ => false,
                };
                (a, same)
            }
            (Err(_), Err(_)) => return 1 << 8,
            _ => (Line::Eof, false),
        };
        assert!(same, "the two readers framed the bytes differently");
        if let Line::Eof = line {
            return (messages.min(8) << 4) | long.min(8);
        }
        tally(&mut messages, &mut long, &line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn a_line_read_cut_short_by_select_loses_nothing() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut r = Lines::new(BufReader::new(rx), 100);
        tx.write_all(b"abc").await.unwrap();
        let cut = tokio::time::timeout(Duration::from_millis(20), r.next()).await;
        assert!(cut.is_err(), "no whole line yet");
        tx.write_all(b"def\nnext\n").await.unwrap();
        let Line::Message(m) = r.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(m, b"abcdef");
        let Line::Message(m) = r.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(m, b"next");
    }

    #[test]
    fn the_cr_of_a_crlf_line_does_not_count_against_the_limit() {
        let at_limit = "x".repeat(10);
        let input = format!("{at_limit}\r\n{at_limit}y\n{at_limit}\r\r\n{at_limit}\r");
        let mut b = BlockingLines::new(io::BufReader::with_capacity(4, input.as_bytes()), 10);
        let Line::Message(m) = b.next().unwrap() else {
            panic!("a line of the limit with its CR is a message")
        };
        assert_eq!(m, format!("{at_limit}\r").as_bytes());
        assert!(matches!(b.next().unwrap(), Line::TooLong(l) if l.len == 11));
        assert!(
            matches!(b.next().unwrap(), Line::TooLong(_)),
            "two bytes over"
        );
        // A last line without its newline: the same rule.
        assert!(matches!(b.next().unwrap(), Line::Message(m) if m.len() == 11));
        assert!(matches!(b.next().unwrap(), Line::Eof));
    }

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_stream_resyncs() {
        let input = format!("{}\n{{\"a\":1}}\r\nlast", "x".repeat(100));
        let mut r = Lines::new(BufReader::with_capacity(8, input.as_bytes()), 50);
        let mut b = BlockingLines::new(io::BufReader::with_capacity(8, input.as_bytes()), 50);
        assert!(matches!(r.next().await.unwrap(), Line::TooLong(_)));
        assert!(matches!(b.next().unwrap(), Line::TooLong(_)));
        for want in [&b"{\"a\":1}\r"[..], b"last"] {
            let (Line::Message(m), Line::Message(n)) = (r.next().await.unwrap(), b.next().unwrap())
            else {
                panic!()
            };
            assert_eq!((&m[..], &n[..]), (want, want));
        }
        assert!(matches!(r.next().await.unwrap(), Line::Eof));
        assert!(matches!(b.next().unwrap(), Line::Eof));
    }

    #[test]
    fn of_a_long_line_its_length_and_its_ends_are_kept() {
        let line = format!("{{\"id\":7,{}}}", "x".repeat(5000));
        let input = format!("{line}\nnext\n");
        let mut b = BlockingLines::new(io::BufReader::with_capacity(8, input.as_bytes()), 50);
        let Line::TooLong(long) = b.next().unwrap() else {
            panic!()
        };
        assert_eq!(long.len, line.len() as u64);
        assert_eq!(long.head, line.as_bytes()[..Overlong::HEAD]);
        assert_eq!(long.tail, line.as_bytes()[line.len() - Overlong::TAIL..]);
        assert!(matches!(b.next().unwrap(), Line::Message(m) if m == b"next"));
    }

    #[test]
    fn a_line_at_the_limit_passes_and_one_byte_more_does_not() {
        let input = format!("{}\n{}\n", "y".repeat(50), "z".repeat(51));
        let mut b = BlockingLines::new(io::BufReader::with_capacity(8, input.as_bytes()), 50);
        assert!(matches!(b.next().unwrap(), Line::Message(m) if m.len() == 50));
        assert!(matches!(b.next().unwrap(), Line::TooLong(_)));
        assert!(matches!(b.next().unwrap(), Line::Eof));
    }
}
