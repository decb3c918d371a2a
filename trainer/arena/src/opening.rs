//! Openings from a file; the opening type and random openings are the lockstep driver's
//! ([`selfplay::Opening`]), shared by the referee.

use anyhow::{bail, Context, Result};
use rules::Variant;
use std::path::Path;
use std::sync::Arc;

pub use selfplay::{random_openings, Opening};

/// Reads openings, one per line as in [`Opening::parse`]; empty lines and lines starting
/// with `#` are skipped. Errors name the file and line; a file without openings is an error.
pub fn read_openings(path: &Path, variant: &Arc<Variant>) -> Result<Vec<Opening>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let o = Opening::parse(line, variant)
            .with_context(|| format!("{}:{}", path.display(), i + 1))?;
        out.push(o);
    }
    if out.is_empty() {
        bail!("{}: no openings", path.display());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minishogi() -> Arc<Variant> {
        Arc::new(Variant::builtin("minishogi").unwrap())
    }

    #[test]
    fn opening_files() {
        let v = minishogi();
        let dir = std::env::temp_dir().join(format!("arena-openings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("o.txt");
        std::fs::write(
            &p,
            "# comment\n\nstartpos\nstartpos moves 5d5c\nsfen rbsgk/4p/5/P4/KGSBR b - 1 moves 5d5c\n",
        )
        .unwrap();
        let o = read_openings(&p, &v).unwrap();
        assert_eq!(o.len(), 3);
        assert!(o[0].moves.is_empty());
        assert_eq!(o[1].moves.len(), 1);
        assert_eq!(o[2].position().to_sfen(), o[1].position().to_sfen());
        std::fs::write(&p, "startpos moves 9a9b\n").unwrap();
        let e = format!("{:#}", read_openings(&p, &v).unwrap_err());
        assert!(e.contains("o.txt:1"), "{e}");
        std::fs::write(&p, "# nothing\n").unwrap();
        assert!(read_openings(&p, &v).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
