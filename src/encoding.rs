//! The content codings ccc stores and sends: one type from the catalog's
//! tables through publish, the server's negotiation and ETags, to export's
//! sibling files and the JSON.
//!
//! A blob's main body (the `blobs` table) is `gzip` or `identity`; a gzip
//! blob may also have a `br` stream (the `brotli` table, see
//! [`crate::catalog`]). The names are HTTP's content-coding tokens (RFC
//! 9110 8.4.1), which are also what the tables and the JSON hold.

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
}

impl Encoding {
    /// Every encoding, in the server's order of preference when a client
    /// accepts several equally: the smallest first.
    pub const PREFERENCE: [Encoding; 3] = [Encoding::Brotli, Encoding::Gzip, Encoding::Identity];

    /// The content-coding token: the name in the tables, in JSON and in
    /// `Content-Encoding`.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
            Encoding::Identity => "identity",
        }
    }

    /// The word for people: `brotli`, `gzip` or `uncompressed`.
    pub fn describe(self) -> &'static str {
        match self {
            Encoding::Brotli => "brotli",
            Encoding::Gzip => "gzip",
            Encoding::Identity => "uncompressed",
        }
    }

    /// The token, as `Accept-Encoding` names it (case-insensitive; `x-gzip`
    /// is gzip, RFC 9110 8.4.1.3).
    pub fn from_token(token: &str) -> Option<Encoding> {
        let is = |name: &str| token.eq_ignore_ascii_case(name);
        if is("br") {
            Some(Encoding::Brotli)
        } else if is("gzip") || is("x-gzip") {
            Some(Encoding::Gzip)
        } else if is("identity") {
            Some(Encoding::Identity)
        } else {
            None
        }
    }

    /// A reader of the original bytes out of a body coded this way.
    pub fn decoder<'a>(self, body: &'a [u8]) -> Box<dyn std::io::Read + 'a> {
        match self {
            Encoding::Identity => Box::new(body),
            // Every member, as gzip(1) decodes a concatenation.
            Encoding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(body)),
            Encoding::Brotli => Box::new(brotli::Decompressor::new(body, 64 * 1024)),
        }
    }

    /// What a file's name gains for this encoding in a static layout
    /// (nginx `gzip_static`/`brotli_static`): `.br`, `.gz`, nothing.
    pub fn suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => ".br",
            Encoding::Gzip => ".gz",
            Encoding::Identity => "",
        }
    }

    /// What a representation's strong ETag adds to the content's sha256:
    /// each coding is a different representation (RFC 9110 8.8.3).
    pub fn etag_suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => "-br",
            Encoding::Gzip => "-gz",
            Encoding::Identity => "",
        }
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
        match Encoding::PREFERENCE
            .into_iter()
            .find(|e| e.as_str() == text)
        {
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
        for encoding in Encoding::PREFERENCE {
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
        assert_eq!(Encoding::from_token("deflate"), None);
        assert_eq!(Encoding::from_token("*"), None);
    }
}
