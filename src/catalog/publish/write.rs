//! Writing a publish: new blobs (whole, or in chunks for a big file) as
//! the workers hand them over, then the version, its files and dist-tags,
//! all inside the publish's transaction.

use super::*;

/// This thread's side of the pipeline: stores each new blob (and its
/// brotli stream) as it arrives, and notes every file's row for
/// [`write_version`].
pub(super) struct Blobs<'t> {
    pub(super) tx: &'t Connection,
    pub(super) path: &'t Path,
    /// A dry run hashes chunked files again but stores no chunk.
    pub(super) dry_run: bool,
    insert_blob: rusqlite::CachedStatement<'t>,
    insert_brotli: rusqlite::CachedStatement<'t>,
    insert_pieces: rusqlite::CachedStatement<'t>,
    /// Records the brotli quality of each new gzip blob (`recompress`).
    insert_made: rusqlite::CachedStatement<'t>,
    brotli_quality: BrotliQuality,
    pub(super) collected: Collected,
}

/// What [`Blobs`] gathered: a row per file, the blobs this publish stored
/// (by content sha256: id and stored size), and their brotli streams.
#[derive(Default)]
pub(super) struct Collected {
    pub(super) rows: Vec<FileRow>,
    pub(super) new_blobs: HashMap<[u8; 32], (i64, u64)>,
    pub(super) brotli: BrotliGroup,
    pub(super) chunked: Group,
    /// The references of each file that has any.
    pub(super) references: Vec<(String, crate::refs::Extracted)>,
    /// The version's `package.json`, as published.
    pub(super) manifest: Option<Vec<u8>>,
}

impl<'t> Blobs<'t> {
    pub(super) fn new(
        tx: &'t Connection,
        path: &'t Path,
        dry_run: bool,
        brotli_quality: BrotliQuality,
    ) -> Result<Blobs<'t>> {
        Ok(Blobs {
            tx,
            path,
            dry_run,
            insert_blob: tx
                .prepare_cached(
                    "INSERT INTO blobs (sha256, raw_size, encoding, body, stored_sha256, stored_xxh3)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(sha256) DO NOTHING",
                )
                .at(path)?,
            insert_brotli: tx
                .prepare_cached(
                    "INSERT INTO brotli (blob_id, body, stored_sha256, stored_xxh3)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .at(path)?,
            insert_pieces: tx.prepare_cached(pieces::INSERT).at(path)?,
            insert_made: tx
                .prepare_cached(crate::catalog::compression::RECORD_QUALITY)
                .at(path)?,
            brotli_quality,
            collected: Collected::default(),
        })
    }

    /// Stores what a worker made of one file, when it is new content.
    pub(super) fn add(&mut self, done: Processed) -> Result<()> {
        let (kind, known) = match &done.content {
            Content::New(blob) => (Kind::New, self.store(&done, blob)?),
            Content::NewChunked(source) => (Kind::New, self.store_chunked(&done, source)?),
            &Content::Stored(id, stored) => (Kind::Stored, Some((id, stored))),
            Content::Repeated => (Kind::Repeated, None),
        };
        if done.manifest.is_some() {
            self.collected.manifest = done.manifest;
        }
        if let Some(references) = done.references {
            self.collected
                .references
                .push((done.path.clone(), references));
        }
        let row = (done.path, done.sha256, done.raw_size, kind, known);
        self.collected.rows.push(row);
        Ok(())
    }

    /// Inserts a blob's row: its id, or None when the catalog had the
    /// content already (never in practice: the worker looked).
    pub(super) fn insert(
        &mut self,
        done: &Processed,
        encoding: Encoding,
        body: &[u8],
        stored_sha256: &[u8; 32],
        stored_xxh3: Option<&[u8; 16]>,
    ) -> Result<Option<i64>> {
        let inserted = self
            .insert_blob
            .execute(params![
                &done.sha256[..],
                done.raw_size as i64,
                encoding,
                body,
                &stored_sha256[..],
                stored_xxh3.map(|d| &d[..])
            ])
            .at(self.path)?;
        Ok((inserted > 0).then(|| self.tx.last_insert_rowid()))
    }

    /// Inserts a new blob and its brotli stream: its id and stored size.
    pub(super) fn store(&mut self, done: &Processed, blob: &NewBlob) -> Result<Option<(i64, u64)>> {
        let (sha, xxh3) = (&blob.stored_sha256, Some(&blob.stored_xxh3));
        let Some(id) = self.insert(done, blob.encoding, &blob.body, sha, xxh3)? else {
            return Ok(None);
        };
        let entry = (id, blob.body.len() as u64);
        self.insert_pieces(id, Coding::Stored, blob.pieces.as_deref())?;
        if blob.encoding == Encoding::Gzip {
            self.insert_made
                .execute(params![id, self.brotli_quality.get()])
                .at(self.path)?;
        }
        if let Some(br) = &blob.brotli {
            self.insert_brotli
                .execute(params![
                    entry.0,
                    &br.body,
                    &br.stored_sha256[..],
                    &br.stored_xxh3[..]
                ])
                .at(self.path)?;
            self.insert_pieces(id, Coding::Brotli, br.pieces.as_deref())?;
            let brotli = &mut self.collected.brotli;
            brotli.blob_count += 1;
            brotli.raw_bytes += done.raw_size;
            brotli.gzip_bytes += entry.1;
            brotli.brotli_bytes += br.body.len() as u64;
        }
        self.collected.new_blobs.insert(done.sha256, entry);
        Ok(Some(entry))
    }

    /// Records the piece digests of stream `coding` of new blob `id`, when
    /// it has them.
    fn insert_pieces(&mut self, id: i64, coding: Coding, digests: Option<&[u8]>) -> Result<()> {
        if let Some(digests) = digests {
            self.insert_pieces
                .execute(params![id, coding.code(), digests])
                .at(self.path)?;
        }
        Ok(())
    }

    /// Inserts a new blob stored in chunks, reading its file again: its
    /// id and stored size. Its row has an empty body and, stored as it is,
    /// the file's own digest; each chunk has its XXH3. A file that changed
    /// since it was hashed is refused.
    fn store_chunked(&mut self, done: &Processed, source: &Source) -> Result<Option<(i64, u64)>> {
        let Some(id) = self.insert(done, Encoding::Identity, &[], &done.sha256, None)? else {
            return Ok(None);
        };
        let (mut reader, name) = open_source(source, &done.path)?;
        let (sha256, len) =
            crate::catalog::chunks::write(self.tx, self.path, id, &mut reader, !self.dry_run)?;
        if sha256 != done.sha256 || len != done.raw_size {
            return Err(Error::bad_input(
                name,
                "changed while it was being published",
            ));
        }
        let entry = (id, done.raw_size);
        self.collected.chunked.add(done.raw_size, done.raw_size);
        self.collected.new_blobs.insert(done.sha256, entry);
        Ok(Some(entry))
    }

    pub(super) fn finish(self) -> Collected {
        self.collected
    }
}

/// Stores what each file of version `version_id` references (`refs`).
pub(super) fn write_links(
    tx: &Connection,
    version_id: i64,
    links: &[crate::refs::check::Link],
) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO refs (version_id, path, line, col, kind, written, class, target)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for link in links {
        insert.execute(params![
            version_id,
            link.file,
            link.line,
            link.column,
            link.kind.name(),
            link.reference,
            link.class,
            link.target
        ])?;
    }
    Ok(())
}

/// The version's rows as [`write_version`] wrote them.
pub(super) struct Written {
    pub(super) version_id: i64,
    pub(super) file_count: u64,
    pub(super) raw_bytes: u64,
    pub(super) stored_bytes: u64,
    pub(super) new_content: Group,
    pub(super) already_stored: Group,
    pub(super) repeated_in_version: Group,
    pub(super) brotli: BrotliGroup,
    pub(super) chunked: Group,
    pub(super) tags: Vec<String>,
}

/// Writes the version: its package when new, the version row (replacing
/// `existing`), an asset per file in path order, the version's totals and
/// its dist-tags.
pub(super) fn write_version(
    tx: &Connection,
    (package, version): &Identity,
    existing: Option<i64>,
    mut collected: Collected,
    tag: Option<&str>,
) -> rusqlite::Result<Written> {
    let now = unix_now();
    let tags_before = crate::catalog::tags::before_publish(tx, package, existing)?;
    if let Some(id) = existing {
        tx.execute("DELETE FROM versions WHERE id = ?1", [id])?;
    }
    tx.execute(
        "INSERT INTO packages (name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO NOTHING",
        params![package, now],
    )?;
    let version_id: i64 = tx.query_row(
        "INSERT INTO versions (package_id, version, published_at, file_count, raw_bytes, stored_bytes)
         VALUES ((SELECT id FROM packages WHERE name = ?1), ?2, ?3, 0, 0, 0) RETURNING id",
        params![package, version.to_string(), now],
        |r| r.get(0),
    )?;
    let rows = &mut collected.rows;
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut written = Written {
        version_id,
        file_count: rows.len() as u64,
        raw_bytes: 0,
        stored_bytes: 0,
        new_content: Group::default(),
        already_stored: Group::default(),
        repeated_in_version: Group::default(),
        brotli: collected.brotli,
        chunked: collected.chunked,
        tags: Vec::new(),
    };
    let mut insert_asset = tx.prepare_cached(
        "INSERT INTO assets (version_id, path, blob_id, content_type) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut find_blob = tx.prepare_cached(concat!(
        "SELECT id, ",
        crate::stored_len!("blobs"),
        " FROM blobs WHERE sha256 = ?1"
    ))?;
    for (path, sha, raw_size, kind, known) in rows.iter() {
        // Content a sibling file of this publish stored, or (never in
        // practice) a blob whose insert found it already there.
        let (blob_id, stored) = match known.or_else(|| collected.new_blobs.get(sha).copied()) {
            Some(k) => k,
            None => {
                find_blob.query_row([&sha[..]], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
            }
        };
        insert_asset.execute(params![
            version_id,
            path,
            blob_id,
            content_type::for_path(path)
        ])?;
        written.raw_bytes += raw_size;
        written.stored_bytes += stored;
        let group = match kind {
            Kind::New => &mut written.new_content,
            Kind::Stored => &mut written.already_stored,
            Kind::Repeated => &mut written.repeated_in_version,
        };
        group.add(*raw_size, stored);
    }
    tx.execute(
        "UPDATE versions SET file_count = ?2, raw_bytes = ?3, stored_bytes = ?4 WHERE id = ?1",
        params![
            version_id,
            written.file_count as i64,
            written.raw_bytes as i64,
            written.stored_bytes as i64
        ],
    )?;
    written.tags =
        crate::catalog::tags::after_publish(tx, package, tags_before, version_id, version, tag)?;
    Ok(written)
}
