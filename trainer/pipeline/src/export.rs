//! Exports of a run's self-play data for other trainers: dlshogi's `hcpe` records.

use crate::error::{PipelineError, Result};
use crate::run::Run;
use crate::store;
use selfplay::hcpe;
use std::ops::RangeInclusive;
use std::path::Path;

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportStats {
    /// Records written.
    pub positions: u64,
    /// Games they came from.
    pub games: u64,
    /// Damaged shards and games skipped (each named on stderr).
    pub skipped: u64,
}

/// Parses `A..B` (both included), `A..`, `..B` or `N` into a range of generations.
pub fn parse_generations(s: &str) -> Result<RangeInclusive<u64>> {
    let num = |t: &str, default: u64| -> Result<u64> {
        match t.trim() {
            "" => Ok(default),
            t => t.parse().map_err(|source| PipelineError::GenerationNumber {
                range: s.to_string(),
                token: t.to_string(),
                source,
            }),
        }
    };
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (num(a, 0)?, num(b.trim_start_matches('='), u64::MAX)?),
        None => {
            let n = num(s, 0)?;
            (n, n)
        }
    };
    if a > b {
        return Err(PipelineError::GenerationOrder {
            range: s.to_string(),
        });
    }
    Ok(a..=b)
}

/// Writes every position with a training target of the run's games played by the networks
/// of `generations` as dlshogi `hcpe` records to `out` (atomically: a temporary name, then a
/// rename). Standard shogi only. Damaged shards and games are skipped with a warning.
pub fn export_hcpe(run: &Run, generations: RangeInclusive<u64>, out: &Path) -> Result<ExportStats> {
    encoding::dlshogi::check_standard_shogi(&run.variant).map_err(|e| {
        PipelineError::NotStandardShogi {
            variant: run.variant.name.clone(),
            reason: e.reason,
        }
    })?;
    let mut stats = ExportStats::default();
    let mut bytes = Vec::new();
    for shard in store::list(&run.dir)? {
        if !generations.contains(&shard.generation) {
            continue;
        }
        let path = shard.path(&run.dir);
        let Some(games) = games_or_skip(&path, &mut stats.skipped) else {
            continue;
        };
        for (i, game) in games.iter().enumerate() {
            let records = hcpe::target_positions(game, &run.encoder).and_then(|ps| {
                ps.iter()
                    .map(|t| {
                        let eval = hcpe::eval_of(t.value);
                        hcpe::record(&t.position, eval, t.best, game.result)
                    })
                    .collect::<Result<Vec<_>, selfplay::SelfPlayError>>()
            });
            match records {
                Ok(rs) => {
                    stats.positions += rs.len() as u64;
                    stats.games += 1;
                    rs.iter().for_each(|r| bytes.extend_from_slice(r));
                }
                Err(e) => {
                    eprintln!(
                        "warning: skipping game {} of {}: {e}",
                        i + 1,
                        path.display()
                    );
                    stats.skipped += 1;
                }
            }
        }
    }
    atomic_file::write_bytes(out, &bytes).map_err(|e| PipelineError::Writing {
        path: out.to_path_buf(),
        source: Box::new(e),
    })?;
    Ok(stats)
}

/// The games of the shard at `path`, or None after a warning naming it (counted in `skipped`):
/// exports read a damaged shard as a skipped one.
pub(crate) fn games_or_skip(
    path: &std::path::Path,
    skipped: &mut u64,
) -> Option<Vec<selfplay::GameRecord>> {
    match selfplay::read_shard(path) {
        Ok((_, games)) => Some(games),
        Err(e) => {
            eprintln!("warning: skipping {e}");
            *skipped += 1;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_ranges() {
        assert_eq!(parse_generations("2..5").unwrap(), 2..=5);
        assert_eq!(parse_generations("3").unwrap(), 3..=3);
        assert_eq!(parse_generations("4..").unwrap(), 4..=u64::MAX);
        assert_eq!(parse_generations("..4").unwrap(), 0..=4);
        assert!(parse_generations("5..2").is_err());
        let e = parse_generations("a..2").unwrap_err().to_string();
        assert!(e.contains("\"a\""), "{e}");
    }
}
