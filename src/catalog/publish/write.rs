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
    /// Every file's row, by path.
    pub(super) rows: Vec<FileRow>,
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
        rows: Vec::new(),
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
            content_type::for_path(path).as_str()
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
    written.rows = std::mem::take(rows);
    written.tags =
        crate::catalog::tags::after_publish(tx, package, tags_before, version_id, version, tag)?;
    Ok(written)
}

/// Gives files of the written version new content, `files` by path: each
/// content new to the catalog is stored as a published file's is (gzip,
/// brotli, piece digests, XXH3; in chunks from `--chunked-from`), the
/// file's asset row points at it, and the blob it had is deleted when
/// this publish stored it and no file uses it any more. The version's
/// totals and the report's groups are then the assets' again, and
/// `new_blobs` the blobs this publish stored. Returns the files whose
/// content changed, with their new bytes.
pub(super) fn replace_files(
    tx: &Connection,
    path: &Path,
    written: &mut Written,
    new_blobs: &mut HashSet<i64>,
    files: Vec<(String, Vec<u8>)>,
    options: &Options,
) -> Result<Vec<(String, Vec<u8>)>> {
    let mut blobs = Blobs::new(tx, path, options.dry_run, options.brotli_quality)?;
    let mut deflater = Deflater::new(
        Compression::new(options.level.get()),
        options.brotli_quality.get(),
    );
    let mut changed = Vec::new();
    for (file, bytes) in files {
        let Ok(i) = written
            .rows
            .binary_search_by(|row| row.0.as_str().cmp(&file))
        else {
            return Err(Error::Internal(format!(
                "a rewrite named {file}, which is not a file of the version"
            )));
        };
        let sha256: [u8; 32] = Sha256::digest(&bytes).into();
        if sha256 == written.rows[i].1 {
            continue;
        }
        let (old_id, old_stored): (i64, u64) = tx
            .query_row(
                concat!(
                    "SELECT b.id, ",
                    crate::stored_len!("b"),
                    " FROM assets a JOIN blobs b ON b.id = a.blob_id
                      WHERE a.version_id = ?1 AND a.path = ?2"
                ),
                params![written.version_id, file],
                |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
            )
            .at(path)?;
        let (_, _, old_raw, old_kind, _) = written.rows[i];
        written.group(old_kind).remove(old_raw, old_stored);
        let known: Option<(i64, u64)> = tx
            .query_row(
                concat!(
                    "SELECT id, ",
                    crate::stored_len!("blobs"),
                    " FROM blobs WHERE sha256 = ?1"
                ),
                [&sha256[..]],
                |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
            )
            .optional()
            .at(path)?;
        let raw_size = bytes.len() as u64;
        let (kind, (blob_id, stored)) = match known {
            Some(known) if new_blobs.contains(&known.0) => (Kind::Repeated, known),
            Some(known) => (Kind::Stored, known),
            None => {
                let done = Processed {
                    path: file.clone(),
                    sha256,
                    raw_size,
                    content: Content::Repeated,
                    references: None,
                    manifest: None,
                };
                let stored = if raw_size >= options.chunked_from {
                    let source = Source::Memory(Arc::from(&bytes[..]));
                    blobs.store_chunked(&done, &source)?
                } else {
                    blobs.store(&done, &deflater.compress(&bytes, sha256))?
                };
                let stored = stored.ok_or_else(|| {
                    Error::Internal(format!("the new content of {file} was stored already"))
                })?;
                new_blobs.insert(stored.0);
                (Kind::New, stored)
            }
        };
        tx.execute(
            "UPDATE assets SET blob_id = ?3 WHERE version_id = ?1 AND path = ?2",
            params![written.version_id, file, blob_id],
        )
        .at(path)?;
        written.group(kind).add(raw_size, stored);
        written.rows[i] = (
            file.clone(),
            sha256,
            raw_size,
            kind,
            Some((blob_id, stored)),
        );
        if new_blobs.contains(&old_id) {
            drop_unused(tx, path, written, new_blobs, old_id)?;
        }
        changed.push((file, bytes));
    }
    let added = blobs.finish();
    written.brotli.blob_count += added.brotli.blob_count;
    written.brotli.raw_bytes += added.brotli.raw_bytes;
    written.brotli.gzip_bytes += added.brotli.gzip_bytes;
    written.brotli.brotli_bytes += added.brotli.brotli_bytes;
    written.chunked.file_count += added.chunked.file_count;
    written.chunked.raw_bytes += added.chunked.raw_bytes;
    written.chunked.stored_bytes += added.chunked.stored_bytes;
    let (raw_bytes, stored_bytes): (i64, i64) = tx
        .query_row(
            concat!(
                "SELECT coalesce(sum(b.raw_size), 0), coalesce(sum(",
                crate::stored_len!("b"),
                "), 0) FROM assets a JOIN blobs b ON b.id = a.blob_id WHERE a.version_id = ?1"
            ),
            [written.version_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .at(path)?;
    tx.execute(
        "UPDATE versions SET raw_bytes = ?2, stored_bytes = ?3 WHERE id = ?1",
        params![written.version_id, raw_bytes, stored_bytes],
    )
    .at(path)?;
    written.raw_bytes = raw_bytes as u64;
    written.stored_bytes = stored_bytes as u64;
    Ok(changed)
}

/// Deletes blob `id`, which this publish stored, when no file uses it,
/// with its brotli stream, pieces and chunks, and takes it out of the
/// report's brotli and chunked counts.
fn drop_unused(
    tx: &Connection,
    path: &Path,
    written: &mut Written,
    new_blobs: &mut HashSet<i64>,
    id: i64,
) -> Result<()> {
    let used: bool = tx
        .prepare_cached("SELECT 1 FROM assets WHERE blob_id = ?1")
        .and_then(|mut s| s.exists([id]))
        .at(path)?;
    if used {
        return Ok(());
    }
    let (raw_size, body_len, brotli_len): (i64, i64, Option<i64>) = tx
        .query_row(
            "SELECT b.raw_size, length(b.body), (SELECT length(body) FROM brotli WHERE blob_id = b.id)
               FROM blobs b WHERE b.id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .at(path)?;
    let (raw_size, body_len) = (raw_size as u64, body_len as u64);
    if let Some(brotli_len) = brotli_len {
        let brotli = &mut written.brotli;
        brotli.blob_count = brotli.blob_count.saturating_sub(1);
        brotli.raw_bytes = brotli.raw_bytes.saturating_sub(raw_size);
        brotli.gzip_bytes = brotli.gzip_bytes.saturating_sub(body_len);
        brotli.brotli_bytes = brotli.brotli_bytes.saturating_sub(brotli_len as u64);
    }
    if body_len == 0 && raw_size > 0 {
        written.chunked.remove(raw_size, raw_size);
    }
    tx.execute("DELETE FROM blobs WHERE id = ?1", [id])
        .at(path)?;
    new_blobs.remove(&id);
    Ok(())
}

impl Written {
    /// The report's group of files of `kind`.
    fn group(&mut self, kind: Kind) -> &mut Group {
        match kind {
            Kind::New => &mut self.new_content,
            Kind::Stored => &mut self.already_stored,
            Kind::Repeated => &mut self.repeated_in_version,
        }
    }
}
