//! The content codings ccc stores and sends: one type from the catalog's
//! tables through publish, the server's negotiation and ETags, to export's
//! sibling files and the JSON.
//!
//! A blob's main body (the `blobs` table) is `gzip` or `identity`; a gzip
//! blob may also have a `br` stream (the `brotli` table, see
//! [`crate::catalog`]) and deltas against earlier files, `dcb` and `dcz`
//! (the `deltas` table, [`crate::delta`]). The names are HTTP's
//! content-coding tokens (RFC 9110 8.4.1, RFC 9842 4), which are also
//! what the tables and the JSON hold.

/// How a body is coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Encoding {
    /// A brotli stream (RFC 7932), served as is to clients that accept `br`.
    #[serde(rename = "br")]
    Brotli,
    /// A gzip stream, served as is to clients that accept gzip.
    #[serde(rename = "gzip")]
    Gzip,
    /// The original bytes, kept when gzip would save under 5%. The name is
    /// HTTP's for "no coding".
    #[serde(rename = "identity")]
    Identity,
    /// A delta: brotli against a dictionary the client holds (RFC 9842
    /// 4.1), sent only to a client that names that dictionary.
    #[serde(rename = "dcb")]
    Dcb,
    /// A delta: zstd against a dictionary the client holds (RFC 9842
    /// 4.2).
    #[serde(rename = "dcz")]
    Dcz,
}

impl Encoding {
    /// Every encoding, in the server's order of preference when a client
    /// accepts several equally: the smallest first.
    pub(crate) const PREFERENCE: [Encoding; 3] =
        [Encoding::Brotli, Encoding::Gzip, Encoding::Identity];

    /// Every coding, the deltas last.
    pub(crate) const ALL: [Encoding; 5] = [
        Encoding::Brotli,
        Encoding::Gzip,
        Encoding::Identity,
        Encoding::Dcb,
        Encoding::Dcz,
    ];

    /// Whether this is a delta, which decodes only against its dictionary.
    pub(crate) fn is_delta(self) -> bool {
        matches!(self, Encoding::Dcb | Encoding::Dcz)
    }

    /// The content-coding token: the name in the tables, in JSON and in
    /// `Content-Encoding`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
            Encoding::Identity => "identity",
            Encoding::Dcb => "dcb",
            Encoding::Dcz => "dcz",
        }
    }

    /// The word for people: `brotli`, `gzip` or `uncompressed`.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Encoding::Brotli => "brotli",
            Encoding::Gzip => "gzip",
            Encoding::Identity => "uncompressed",
            Encoding::Dcb => "dcb delta",
            Encoding::Dcz => "dcz delta",
        }
    }

    /// The token, as `Accept-Encoding` names it (case-insensitive; `x-gzip`
    /// is gzip, RFC 9110 8.4.1.3).
    pub(crate) fn from_token(token: &str) -> Option<Encoding> {
        let is = |name: &str| token.eq_ignore_ascii_case(name);
        if is("br") {
            Some(Encoding::Brotli)
        } else if is("gzip") || is("x-gzip") {
            Some(Encoding::Gzip)
        } else if is("identity") {
            Some(Encoding::Identity)
        } else if is("dcb") {
            Some(Encoding::Dcb)
        } else if is("dcz") {
            Some(Encoding::Dcz)
        } else {
            None
        }
    }

    /// A reader of the original bytes out of a body coded this way; a
    /// delta's reader fails, since only [`crate::delta::decode`], given its
    /// dictionary, decodes one.
    pub(crate) fn decoder<'a>(self, body: &'a [u8]) -> Box<dyn std::io::Read + 'a> {
        match self {
            Encoding::Identity => Box::new(body),
            // Every member, as gzip(1) decodes a concatenation.
            Encoding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(body)),
            Encoding::Brotli => Box::new(brotli::Decompressor::new(body, 64 * 1024)),
            Encoding::Dcb | Encoding::Dcz => Box::new(NeedsDictionary(self)),
        }
    }

    /// What a file's name gains for this encoding in a static layout
    /// (nginx `gzip_static`/`brotli_static`): `.br`, `.gz`, nothing.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => ".br",
            Encoding::Gzip => ".gz",
            Encoding::Identity => "",
            // Never exported: no static server sends a delta.
            Encoding::Dcb => ".dcb",
            Encoding::Dcz => ".dcz",
        }
    }

    /// What a representation's strong ETag adds to the content's sha256:
    /// each coding is a different representation (RFC 9110 8.8.3).
    pub(crate) fn etag_suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => "-br",
            Encoding::Gzip => "-gz",
            Encoding::Identity => "",
            // Followed by the dictionary's (`serve::prepared`).
            Encoding::Dcb => "-dcb",
            Encoding::Dcz => "-dcz",
        }
    }
}

/// The reader [`Encoding::decoder`] gives a delta: it has no dictionary.
struct NeedsDictionary(Encoding);

impl std::io::Read for NeedsDictionary {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other(format!(
            "a {} body decodes only against its dictionary",
            self.0
        )))
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::types::FromSql for Encoding {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        // Exactly the stored spelling: `x-gzip` or `GZIP` in a table is not
        // something ccc wrote.
        match Encoding::ALL.into_iter().find(|e| e.as_str() == text) {
            Some(encoding) => Ok(encoding),
            None => Err(rusqlite::types::FromSqlError::Other(
                format!("unknown encoding `{text}`").into(),
            )),
        }
    }
}

impl rusqlite::types::ToSql for Encoding {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn every_encoding_round_trips_through_sqlite() {
        let conn = Connection::open_in_memory().unwrap();
        for encoding in Encoding::ALL {
            let back: Encoding = conn
                .query_row("SELECT ?1", [encoding], |r| r.get(0))
                .unwrap();
            assert_eq!(back, encoding);
            let text: String = conn
                .query_row("SELECT ?1", [encoding], |r| r.get(0))
                .unwrap();
            assert_eq!(text, encoding.as_str());
            assert_eq!(
                serde_json::to_value(encoding).unwrap(),
                serde_json::json!(encoding.as_str())
            );
        }
        let err = conn
            .query_row("SELECT 'deflate'", [], |r| r.get::<_, Encoding>(0))
            .unwrap_err();
        assert!(
            err.to_string().contains("unknown encoding `deflate`"),
            "{err}"
        );
    }

    #[test]
    fn accept_encoding_tokens() {
        assert_eq!(Encoding::from_token("BR"), Some(Encoding::Brotli));
        assert_eq!(Encoding::from_token("x-gzip"), Some(Encoding::Gzip));
        assert_eq!(Encoding::from_token("Identity"), Some(Encoding::Identity));
        assert_eq!(Encoding::from_token("dcb"), Some(Encoding::Dcb));
        assert_eq!(Encoding::from_token("DCZ"), Some(Encoding::Dcz));
        assert_eq!(Encoding::from_token("deflate"), None);
        assert_eq!(Encoding::from_token("*"), None);
    }
}
