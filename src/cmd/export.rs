//! `ccc export [PKG[@VERSION]] DIR`: the catalog as plain files, each gzip
//! stored asset with its `.gz` sibling, for nginx `gzip_static` or an object
//! store. File times are set to the version's publish time, so such a
//! server's `Last-Modified` matches `ccc serve`'s.

use crate::catalog::query::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::cli::ExportArgs;
use crate::error::{Error, Result};
use crate::output;
use crate::spec::{Selector, Target};
use crate::units::human_size;
use flate2::read::GzDecoder;
use serde::Serialize;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

#[derive(Serialize)]
struct Report {
    versions: u64,
    files: u64,
    gz_files: u64,
    bytes_written: u64,
    /// `.gz` siblings not written because the version has a real file by
    /// that name.
    gz_skipped: Vec<String>,
}

pub fn run(db: &Path, args: ExportArgs) -> Result<ExitCode> {
    let (target, out) = match args.args.as_slice() {
        [out] => (None, PathBuf::from(out)),
        [target, out] => (Some(target.as_str()), PathBuf::from(out)),
        _ => return Err(Error::Usage("expected [PKG[@VERSION]] DIR".into())),
    };
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let versions = select(&catalog, target)?;
    let mut report = Report {
        versions: 0,
        files: 0,
        gz_files: 0,
        bytes_written: 0,
        gz_skipped: Vec::new(),
    };
    for version in &versions {
        export_version(&catalog, version, &out, &mut report)?;
    }
    if args.json {
        output::print_json(&report)?;
    } else {
        output::print(format_args!(
            "Exported {} versions to {}: {} files and {} .gz siblings, {}",
            report.versions,
            out.display(),
            report.files,
            report.gz_files,
            human_size(report.bytes_written)
        ))?;
        for skipped in &report.gz_skipped {
            eprintln!("warning: {skipped}.gz not written: the version has a file of that name");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn select(catalog: &Catalog, target: Option<&str>) -> Result<Vec<VersionRow>> {
    let Some(input) = target else {
        let mut all = Vec::new();
        for p in catalog.packages()? {
            all.extend(catalog.versions(&p.name)?);
        }
        return Ok(all);
    };
    let target = Target::parse(input)?;
    if target.path.is_some() {
        return Err(Error::InvalidSpec {
            what: "export target",
            input: input.to_string(),
            why: "expected PKG or PKG@VERSION".into(),
        });
    }
    match target.version.as_deref() {
        None => {
            let versions = catalog.versions(&target.package)?;
            if versions.is_empty() {
                return Err(Error::PackageNotFound(target.package));
            }
            Ok(versions)
        }
        Some(v) => {
            let selector = Selector::parse(&target.package, v)?;
            Ok(vec![catalog.resolve(&target.package, &selector)?])
        }
    }
}

fn export_version(
    catalog: &Catalog,
    v: &VersionRow,
    out: &Path,
    report: &mut Report,
) -> Result<()> {
    let root = out.join(&v.package).join(v.version.to_string());
    let mtime = UNIX_EPOCH + Duration::from_secs(v.published_at.max(0) as u64);
    let files = catalog.files(v.id)?;
    let names: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for file in &files {
        let body = catalog.blob_body(file.blob_id)?;
        let path = root.join(&file.path);
        if file.encoding == "gzip" {
            let mut raw = Vec::with_capacity(file.raw_size as usize);
            GzDecoder::new(&body[..])
                .read_to_end(&mut raw)
                .map_err(|e| Error::Corrupt {
                    path: catalog.path().to_path_buf(),
                    what: format!(
                        "{}@{}/{} does not decode: {e}",
                        v.package, v.version, file.path
                    ),
                })?;
            write_file(&path, &raw, mtime)?;
            report.bytes_written += raw.len() as u64;
            let gz_name = format!("{}.gz", file.path);
            if names.contains(gz_name.as_str()) {
                report
                    .gz_skipped
                    .push(format!("{}@{}/{}", v.package, v.version, file.path));
            } else {
                write_file(&root.join(&gz_name), &body, mtime)?;
                report.bytes_written += body.len() as u64;
                report.gz_files += 1;
            }
        } else {
            write_file(&path, &body, mtime)?;
            report.bytes_written += body.len() as u64;
        }
        report.files += 1;
    }
    report.versions += 1;
    Ok(())
}

fn write_file(path: &Path, bytes: &[u8], mtime: std::time::SystemTime) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut writer = std::io::BufWriter::new(&file);
    std::io::Write::write_all(&mut writer, bytes).map_err(|e| Error::io(path, e))?;
    drop(writer);
    file.set_modified(mtime).map_err(|e| Error::io(path, e))
}
