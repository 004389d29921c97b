//! Command-line parsing shared by the examples: `--help` prints usage and exits 0; a bad flag
//! prints one line and exits 2, with no backtrace.

use clap::Parser;

/// Parses the command line into `A`, or exits as described in the module docs.
pub fn parse_or_exit<A: Parser>() -> A {
    A::try_parse().unwrap_or_else(|err| {
        if !err.use_stderr() {
            // `--help`: print it and exit 0.
            err.exit();
        }
        let rendered = err.to_string();
        eprintln!(
            "{} (try --help)",
            rendered.lines().next().unwrap_or("error: bad arguments")
        );
        std::process::exit(2);
    })
}
