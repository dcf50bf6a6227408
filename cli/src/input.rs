//! Input sources (files, standard input, gzip) and a line reader with a size cap.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The first two bytes of every gzip member (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Read buffer size for every source.
const BUF_SIZE: usize = 256 * 1024;

/// One opened input: a file or standard input, gunzipped when it starts with the gzip magic.
pub struct Input {
    /// The name used in reports: the path as given, or `-` for standard input.
    pub name: String,
    /// Size on disk when the source is a regular file (for the progress bar).
    pub size: Option<u64>,
    /// The decoded line stream.
    pub reader: Box<dyn BufRead + Send>,
    /// Raw (possibly compressed) bytes read so far from the source.
    pub raw_bytes: Arc<AtomicU64>,
}

/// Counts the raw (possibly compressed) bytes read, for the progress bar.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Input {
    /// Opens `spec` (`-` means standard input). `.gz` content is recognised by its magic bytes, so
    /// compressed standard input works too; concatenated gzip members are all read.
    ///
    /// # Errors
    /// The error of opening the file, or of reading its first two bytes.
    pub fn open(spec: &str) -> io::Result<Input> {
        let raw_bytes = Arc::new(AtomicU64::new(0));
        let (raw, size): (Box<dyn Read + Send>, Option<u64>) = if spec == "-" {
            (Box::new(io::stdin()), None)
        } else {
            let f = File::open(Path::new(spec))?;
            let meta = f.metadata()?;
            if meta.is_dir() {
                return Err(io::Error::other("is a directory"));
            }
            let size = meta.is_file().then_some(meta.len());
            (Box::new(f), size)
        };
        let mut raw = Counting {
            inner: raw,
            count: raw_bytes.clone(),
        };
        // Read the first two bytes ourselves: a pipe may deliver them one at a time.
        let mut head = [0u8; 2];
        let mut got = 0;
        while got < head.len() {
            match raw.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let stream = io::Cursor::new(head[..got].to_vec()).chain(raw);
        let reader: Box<dyn BufRead + Send> = if head[..got] == GZIP_MAGIC {
            let gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(BUF_SIZE, stream));
            Box::new(BufReader::with_capacity(BUF_SIZE, gz))
        } else {
            Box::new(BufReader::with_capacity(BUF_SIZE, stream))
        };
        Ok(Input {
            name: spec.to_string(),
            size,
            reader,
            raw_bytes,
        })
    }
}

impl Input {
    /// Wraps an in-memory or other reader (not gunzipped), e.g. for tests and embedding.
    pub fn from_reader(name: &str, reader: impl BufRead + Send + 'static) -> Input {
        Input {
            name: name.to_string(),
            size: None,
            reader: Box::new(reader),
            raw_bytes: Arc::default(),
        }
    }
}

/// What [`read_line_capped`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineRead {
    /// End of input; nothing was appended.
    Eof,
    /// A line was appended to the buffer, without its `\n` (or `\r\n`).
    Line,
    /// The line had more than `cap` bytes (this many, without the newline). Nothing was
    /// appended; the line was read through to its end without being kept.
    TooLong(u64),
}

/// Reads one line from `r` and appends it to `buf` without the line ending, keeping at most `cap`
/// bytes in memory. A last line without a newline counts as a line.
///
/// # Errors
/// Read errors other than `Interrupted`; `buf` is then restored to its previous length.
pub fn read_line_capped<R: BufRead + ?Sized>(
    r: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<LineRead> {
    let start = buf.len();
    let mut total: u64 = 0;
    let mut any = false;
    let mut too_long = false;
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        };
        if avail.is_empty() {
            if !any {
                return Ok(LineRead::Eof);
            }
            break;
        }
        any = true;
        let newline = avail.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(avail.len());
        if !too_long {
            if buf.len() - start + take > cap {
                too_long = true;
                buf.truncate(start);
            } else {
                reserve(buf, take);
                buf.extend_from_slice(&avail[..take]);
            }
        }
        total += take as u64;
        r.consume(take + usize::from(newline.is_some()));
        if newline.is_some() {
            break;
        }
    }
    if too_long {
        // A `\r` before the newline is part of the line ending, not of the content.
        return Ok(LineRead::TooLong(total));
    }
    if buf.len() > start && buf[buf.len() - 1] == b'\r' {
        buf.pop();
    }
    Ok(LineRead::Line)
}

/// Grows `buf` for `more` bytes: doubling while small, then in steps of at most [`GROW_STEP`],
/// so a long line does not leave a buffer of nearly twice its size behind.
fn reserve(buf: &mut Vec<u8>, more: usize) {
    if buf.capacity() - buf.len() < more {
        buf.reserve_exact(more.max(buf.capacity().min(GROW_STEP)));
    }
}

/// The largest step by which [`read_line_capped`] grows a buffer beyond what it needs.
const GROW_STEP: usize = 1 << 20;

/// Reads and drops the `\n` bytes at the current position, up to the first other byte or the end
/// of input, and returns how many there were: a run of empty lines, skipped without looking at
/// them one by one.
///
/// # Errors
/// Read errors other than `Interrupted`; the newlines skipped before it are lost.
pub fn skip_newlines<R: BufRead + ?Sized>(r: &mut R) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(total);
        }
        let n = leading_newlines(avail);
        let whole = n == avail.len();
        r.consume(n);
        total += n as u64;
        if !whole {
            return Ok(total);
        }
    }
}

/// How many bytes at the start of `bytes` are `\n`. Scans 64 bytes per step with a branch-free
/// OR over each block (which the compiler vectorises), then finishes byte by byte.
fn leading_newlines(bytes: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let blocks = bytes
        .chunks_exact(BLOCK)
        .take_while(|block| block.iter().fold(0u8, |acc, &b| acc | (b ^ b'\n')) == 0)
        .count();
    let done = blocks * BLOCK;
    done + bytes[done..].iter().take_while(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<(LineRead, Vec<u8>)> {
        let mut r = BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        loop {
            let mut buf = b"prefix".to_vec();
            let got = read_line_capped(&mut r, &mut buf, cap).expect("in-memory read");
            assert!(buf.starts_with(b"prefix"), "existing content is kept");
            if got == LineRead::Eof {
                assert_eq!(buf, b"prefix");
                return out;
            }
            out.push((got, buf[6..].to_vec()));
        }
    }

    #[test]
    fn splits_lines_and_strips_endings() {
        let got = lines(b"ab\r\n\ncdef\nlast", 10);
        let want: Vec<(LineRead, Vec<u8>)> = vec![
            (LineRead::Line, b"ab".to_vec()),
            (LineRead::Line, b"".to_vec()),
            (LineRead::Line, b"cdef".to_vec()),
            (LineRead::Line, b"last".to_vec()),
        ];
        assert_eq!(got, want);
        assert!(lines(b"", 10).is_empty());
        assert_eq!(lines(b"\n", 10), vec![(LineRead::Line, Vec::new())]);
    }

    #[test]
    fn caps_long_lines_and_continues() {
        // Cap 4: "abcd" fits, "abcde" does not; the reader's buffer (3 bytes) is smaller than both.
        let got = lines(b"abcd\nabcde\nxy\n0123456789\r\nz", 4);
        let want: Vec<(LineRead, Vec<u8>)> = vec![
            (LineRead::Line, b"abcd".to_vec()),
            (LineRead::TooLong(5), Vec::new()),
            (LineRead::Line, b"xy".to_vec()),
            (LineRead::TooLong(11), Vec::new()),
            (LineRead::Line, b"z".to_vec()),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn skips_runs_of_newlines_across_buffer_refills() {
        for (input, want, rest) in [
            (&b""[..], 0, &b""[..]),
            (b"abc\n", 0, b"abc\n"),
            (b"\n\n\nx\n\n", 3, b"x\n\n"),
            (b"\n\r\n", 1, b"\r\n"),
        ] {
            let mut r = BufReader::with_capacity(2, input);
            assert_eq!(skip_newlines(&mut r).expect("in memory"), want);
            let mut left = Vec::new();
            r.read_to_end(&mut left).expect("in memory");
            assert_eq!(left, rest);
        }
        for len in [0, 1, 63, 64, 65, 200] {
            let mut bytes = vec![b'\n'; len];
            assert_eq!(leading_newlines(&bytes), len);
            bytes.push(b' ');
            bytes.extend_from_slice(&[b'\n'; 70]);
            assert_eq!(leading_newlines(&bytes), len);
        }
    }

    #[test]
    fn a_long_line_leaves_little_spare_capacity() {
        let line = vec![b'a'; 5 << 20];
        let mut input = line.clone();
        input.push(b'\n');
        let mut r = BufReader::with_capacity(BUF_SIZE, &input[..]);
        let mut buf = Vec::new();
        let got = read_line_capped(&mut r, &mut buf, 6 << 20).expect("in memory");
        assert_eq!((got, buf.len()), (LineRead::Line, line.len()));
        assert!(
            buf.capacity() <= line.len() + GROW_STEP,
            "{}",
            buf.capacity()
        );
    }

    #[test]
    fn gzip_is_detected_by_magic() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("nv-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("two-members.gz");
        let mut bytes = Vec::new();
        for part in [&b"one\n"[..], &b"two\n"[..]] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(part).expect("in-memory");
            bytes.extend(enc.finish().expect("in-memory"));
        }
        std::fs::write(&path, &bytes).expect("write temp file");
        let mut input = Input::open(path.to_str().expect("utf-8 path")).expect("open");
        let counter = input.raw_bytes.clone();
        let mut text = String::new();
        input.reader.read_to_string(&mut text).expect("read");
        assert_eq!(text, "one\ntwo\n");
        assert_eq!(input.size, Some(bytes.len() as u64));
        assert_eq!(counter.load(Ordering::Relaxed), bytes.len() as u64);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
