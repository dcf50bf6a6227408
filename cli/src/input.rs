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
