//! `ccc cat PKG@VERSION/PATH`: the original bytes (or a gzip stream) on
//! stdout.
//!
//! The stored body is checked against its recorded digest before a byte is
//! written, as `serve` checks what it sends (`AssetRecord::check`); a big
//! file's chunks are checked one by one as they are read. A body that
//! fails either check, or a gzip stream that does not decode, is reported
//! as damage to the catalog naming the file, never as a write error.

use super::resolve_version;
use crate::catalog::{Access, Catalog, Encoding};
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::spec::Target;
use clap::Args;
use flate2::Compression;
use flate2::write::{GzDecoder, GzEncoder};
use std::cell::Cell;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Write a file's original bytes to stdout.
#[derive(Debug, Args)]
pub struct CatArgs {
    /// The file, like `app@1.4.0/js/main.js`.
    #[arg(value_name = "PKG@VERSION/PATH", value_parser = parse_file)]
    pub(crate) target: Target,

    /// Write a gzip stream instead: the stored one, or for files stored raw,
    /// one made on the fly.
    #[arg(long)]
    pub(crate) gzip: bool,
}

/// Standard output, remembering whether a write to it failed, so that an
/// error coming out of a decoder wrapped around it can be told apart: the
/// output's, or the stream's.
struct Out<'a, W> {
    inner: W,
    failed: &'a Cell<bool>,
}

impl<W: Write> Write for Out<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|_| self.failed.set(true))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|_| self.failed.set(true))
    }
}

pub(crate) fn run(db: &Path, args: CatArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let version = resolve_version(&catalog, &args.target)?;
    let Some(path) = args.target.path.as_deref() else {
        return Err(Error::Usage(
            "name a file: PKG@VERSION/PATH, like app@1.4.0/index.html".into(),
        ));
    };
    let asset = catalog.asset(&version, path)?;
    let name = format!("{}@{}/{}", version.package, version.version, asset.path);
    let corrupt = |what: String| Error::Corrupt {
        path: catalog.path().to_path_buf(),
        what: format!(
            "{name} (blob sha256 {}) {what}; not written",
            hex::encode(asset.sha256)
        ),
    };
    let Some(mut record) =
        catalog.lookup(&version.package, &version.version.to_string(), &asset.path)?
    else {
        // Removed by another ccc since it was found.
        return Err(Error::AssetNotFound {
            package: version.package.clone(),
            version: version.version.to_string(),
            path: asset.path.clone(),
            similar: Vec::new(),
        });
    };
    // cat never writes the brotli stream, so its damage is not cat's to report.
    record.brotli = None;
    record.check().map_err(&corrupt)?;
    // A body longer than a piece, read whole and checked as it is read.
    catalog.load_bodies(&mut record).map_err(|e| match e {
        Error::Corrupt { what, .. } => corrupt(what),
        e => e,
    })?;

    let failed = Cell::new(false);
    let stdout = Out {
        inner: std::io::stdout().lock(),
        failed: &failed,
    };
    // An error the output did not raise is the stored stream's.
    let io = |e: std::io::Error| {
        if failed.get() {
            Error::Stdout(e)
        } else {
            corrupt(format!("does not decode: {e}"))
        }
    };
    let copy = |out: &mut dyn Write| match (&record.chunks, &record.body) {
        (Some(_), _) => catalog.copy_blob(asset.blob_id, out, &io),
        (None, Some(body)) => out.write_all(body).map_err(io),
        (None, None) => Err(Error::Internal(format!("{name} was not loaded"))),
    };
    match (record.encoding, args.gzip) {
        (Encoding::Gzip, false) => {
            let mut decoder = GzDecoder::new(stdout);
            copy(&mut decoder)?;
            decoder.finish().map_err(io)?.flush().map_err(io)?;
        }
        (Encoding::Identity, true) => {
            let mut encoder = GzEncoder::new(stdout, Compression::best());
            copy(&mut encoder)?;
            encoder.finish().map_err(io)?.flush().map_err(io)?;
        }
        _ => {
            let mut stdout = stdout;
            copy(&mut stdout)?;
            stdout.flush().map_err(io)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
