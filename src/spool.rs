//! Lists too long to hold in memory, spooled line by line to an unnamed
//! temporary file and read back once complete.
//!
//! `gc` on a catalog of millions of files reports tens of thousands of
//! versions and, with `--purge`, a URL for each of their files. Holding
//! those made its memory grow with the catalog; a spool keeps it flat,
//! and the list is still written out only once the command knows its
//! outcome. The file has no name, so the system deletes it when ccc exits,
//! however it exits.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};

/// A list being written: one line per item, items without newlines.
pub(crate) struct Spool {
    out: BufWriter<File>,
    lines: u64,
    /// What the list holds, for errors: `the URLs to purge`.
    what: &'static str,
}

impl Spool {
    pub(crate) fn new(what: &'static str) -> Result<Spool> {
        let file = tempfile::tempfile()
            .map_err(|e| Error::system(format!("cannot create a temporary file for {what}"), e))?;
        Ok(Spool {
            out: BufWriter::new(file),
            lines: 0,
            what,
        })
    }

    /// Appends `line`, which must not contain a newline.
    pub(crate) fn push(&mut self, line: &str) -> Result<()> {
        debug_assert!(!line.contains('\n'), "{line:?}");
        self.out
            .write_all(line.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|e| self.write_error(e))?;
        self.lines += 1;
        Ok(())
    }

    /// Appends `value` as one line of compact JSON.
    pub(crate) fn push_json(&mut self, value: &impl serde::Serialize) -> Result<()> {
        let line = serde_json::to_string(value)
            .map_err(|e| Error::Internal(format!("cannot encode {} as JSON: {e}", self.what)))?;
        self.push(&line)
    }

    /// The complete list, to read.
    pub(crate) fn finish(self) -> Result<Spooled> {
        let what = self.what;
        let mut file = self.out.into_inner().map_err(|e| {
            Error::system(
                format!("cannot write {what} to a temporary file"),
                e.into_error(),
            )
        })?;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::system(format!("cannot read back {what}"), e))?;
        Ok(Spooled {
            file,
            lines: self.lines,
            what,
        })
    }

    fn write_error(&self, e: std::io::Error) -> Error {
        Error::system(format!("cannot write {} to a temporary file", self.what), e)
    }
}

/// A complete list, read from its start as often as needed.
pub(crate) struct Spooled {
    file: File,
    lines: u64,
    what: &'static str,
}

impl Spooled {
    /// How many lines the list holds.
    pub(crate) fn len(&self) -> u64 {
        self.lines
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// The lines, from the first, one at a time.
    pub(crate) fn lines(&self) -> Result<impl Iterator<Item = Result<String>> + '_> {
        let what = self.what;
        let read_error = move |e| Error::system(format!("cannot read back {what}"), e);
        // `&File` reads and seeks through a shared reference; every reader
        // starts by rewinding, so readers one after another each see all.
        let mut file = &self.file;
        file.seek(SeekFrom::Start(0)).map_err(read_error)?;
        Ok(BufReader::new(file)
            .lines()
            .map(move |line| line.map_err(read_error)))
    }
}

/// Serializes a spool of compact JSON values ([`Spool::push_json`]) as one
/// JSON array, reading and writing one value at a time, so that the
/// document around it is written in the same style (pretty or compact).
pub(crate) struct JsonLines<'a>(pub &'a Spooled);

impl serde::Serialize for JsonLines<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq};
        let mut seq = serializer.serialize_seq(Some(self.0.len() as usize))?;
        for line in self.0.lines().map_err(S::Error::custom)? {
            let line = line.map_err(S::Error::custom)?;
            let value: serde_json::Value = serde_json::from_str(&line).map_err(|e| {
                S::Error::custom(format!("{} spooled an invalid line: {e}", self.0.what))
            })?;
            seq.serialize_element(&value)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_reads_back_every_line_as_often_as_asked() {
        let mut spool = Spool::new("test lines").unwrap();
        for i in 0..10_000 {
            spool.push(&format!("line {i}")).unwrap();
        }
        let spooled = spool.finish().unwrap();
        assert_eq!(spooled.len(), 10_000);
        for _ in 0..2 {
            let lines: Vec<String> = spooled.lines().unwrap().map(|l| l.unwrap()).collect();
            assert_eq!(lines.len(), 10_000);
            assert_eq!(
                (lines[0].as_str(), lines[9_999].as_str()),
                ("line 0", "line 9999")
            );
        }
    }

    #[test]
    fn json_lines_serialize_as_one_array_in_the_document_style() {
        let mut spool = Spool::new("test values").unwrap();
        spool
            .push_json(&serde_json::json!({"a": 1, "b": [true]}))
            .unwrap();
        spool.push_json(&serde_json::json!("two")).unwrap();
        let spooled = spool.finish().unwrap();
        let doc = serde_json::json!({"before": 0});
        let pretty = serde_json::to_string_pretty(&(doc, JsonLines(&spooled))).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&pretty).unwrap(),
            serde_json::json!([{"before": 0}, [{"a": 1, "b": [true]}, "two"]])
        );
        assert!(pretty.contains("\n      \"a\": 1"), "{pretty}");
        let empty = Spool::new("nothing").unwrap().finish().unwrap();
        assert_eq!(serde_json::to_string(&JsonLines(&empty)).unwrap(), "[]");
    }
}
