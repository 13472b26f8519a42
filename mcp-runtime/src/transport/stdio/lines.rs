//! Line framing: one JSON-RPC message per line, at most `max` bytes (newline excluded).
//! One framer, fed by an async reader (`serve_io`) or a blocking one (`serve_stdio`).

use std::io;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

pub(super) enum Line {
    Message(Vec<u8>),
    TooLong,
    Eof,
}

/// What is kept between chunks: the part of a line read so far. On overflow, the rest of
/// the line is skipped to its newline without being buffered.
struct Framer {
    max: usize,
    buf: Vec<u8>,
    overflow: bool,
}

impl Framer {
    fn new(max: usize) -> Self {
        Framer {
            max,
            buf: Vec::new(),
            overflow: false,
        }
    }

    /// Takes bytes from the start of `chunk` (not empty): how many it used, and the line
    /// they completed, if any.
    fn feed(&mut self, chunk: &[u8]) -> (usize, Option<Line>) {
        let (take, done) = match chunk.iter().position(|&c| c == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !self.overflow {
            if self.buf.len() + take > self.max {
                self.overflow = true;
                self.buf = Vec::new();
            } else {
                self.buf.extend_from_slice(&chunk[..take]);
            }
        }
        if !done {
            return (take, None);
        }
        let line = if std::mem::take(&mut self.overflow) {
            Line::TooLong
        } else {
            Line::Message(std::mem::take(&mut self.buf))
        };
        (take + 1, Some(line))
    }

    /// The end of input: a partial last line is still a message.
    fn end(&mut self) -> Line {
        if std::mem::take(&mut self.overflow) {
            Line::TooLong
        } else if self.buf.is_empty() {
            Line::Eof
        } else {
            Line::Message(std::mem::take(&mut self.buf))
        }
    }
}

/// Lines from an async buffered reader. Cancel-safe: a partial line stays here for the
/// next call, so it can wait in a `select!`.
pub(super) struct Lines<R> {
    reader: R,
    framer: Framer,
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    pub(super) fn new(reader: R, max: usize) -> Self {
        Lines {
            reader,
            framer: Framer::new(max),
        }
    }

    pub(super) async fn next(&mut self) -> io::Result<Line> {
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
                assert!(m.len() <= 64, "a line past the limit");
                *messages += 1;
            }
            Line::TooLong => *long += 1,
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
                    (Line::TooLong, Line::TooLong) | (Line::Eof, Line::Eof) => true,
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

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_stream_resyncs() {
        let input = format!("{}\n{{\"a\":1}}\r\nlast", "x".repeat(100));
        let mut r = Lines::new(BufReader::with_capacity(8, input.as_bytes()), 50);
        let mut b = BlockingLines::new(io::BufReader::with_capacity(8, input.as_bytes()), 50);
        assert!(matches!(r.next().await.unwrap(), Line::TooLong));
        assert!(matches!(b.next().unwrap(), Line::TooLong));
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
    fn a_line_at_the_limit_passes_and_one_byte_more_does_not() {
        let input = format!("{}\n{}\n", "y".repeat(50), "z".repeat(51));
        let mut b = BlockingLines::new(io::BufReader::with_capacity(8, input.as_bytes()), 50);
        assert!(matches!(b.next().unwrap(), Line::Message(m) if m.len() == 50));
        assert!(matches!(b.next().unwrap(), Line::TooLong));
        assert!(matches!(b.next().unwrap(), Line::Eof));
    }
}
