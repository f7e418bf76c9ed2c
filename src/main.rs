//! The `ccc` binary: parse, run, report. All work lives in the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = ccc::cli::Cli::parse_args();
    match ccc::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`ccc cat ... | head`) is not a failure.
            if let ccc::Error::Stdout(source) = &err
                && source.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {err}");
            if let Some(hint) = err.hint() {
                eprintln!("  hint: {hint}");
            }
            ExitCode::from(err.exit_code())
        }
    }
}
