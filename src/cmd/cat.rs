//! `ccc cat PKG@VERSION/PATH`: the original bytes (or a gzip stream) on
//! stdout.

use super::resolve_version;
use crate::catalog::{Access, Catalog, Encoding};
use crate::cli::CatArgs;
use crate::error::{Error, Result};
use flate2::Compression;
use flate2::write::{GzDecoder, GzEncoder};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: CatArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let version = resolve_version(&catalog, &args.target)?;
    let Some(path) = args.target.path.as_deref() else {
        return Err(Error::Usage(
            "name a file: PKG@VERSION/PATH, like app@1.4.0/index.html".into(),
        ));
    };
    let asset = catalog.asset(&version, path)?;
    let stdout = std::io::stdout().lock();
    let io = Error::Stdout;
    let copy = |out: &mut dyn Write| catalog.copy_blob(asset.blob_id, out, &io);
    match (asset.encoding, args.gzip) {
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
