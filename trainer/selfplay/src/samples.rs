//! Sample shards: versioned, compressed files of finished self-play games, one record per game
//! (start SFEN, moves, per-move search targets, result), written atomically.
//!
//! A shard is zstd-compressed JSON lines: a [`ShardHeader`] line, then one [`GameRecord`] per
//! line. Shards are written under a temporary name and renamed, so a reader never sees a
//! partial shard and a killed writer loses at most the games it had not yet written.

use rules::{Color, GameResult, Outcome};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Version of the shard format.
pub const SHARD_VERSION: u32 = 1;

/// A shard that cannot be read or written.
#[derive(Debug, Error)]
pub enum SampleError {
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The content is not a valid shard.
    #[error("{path}: {reason}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

/// First line of a shard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// Shard format version.
    pub version: u32,
    /// Variant name.
    pub variant: String,
    /// Policy vector length of the encoding the targets index into.
    pub policy_len: usize,
    /// Generation of the network that played the games.
    pub generation: u64,
}

/// The search target of one position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveTarget {
    /// Sparse policy target: (policy index, probability), probabilities sum to 1.
    pub policy: Vec<(u32, f32)>,
    /// Root value for the side to move, in [-1, 1].
    pub value: f32,
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Start position.
    pub start_sfen: String,
    /// Moves in USI notation.
    pub moves: Vec<String>,
    /// Per move: the search target when it came from a full search (recorded for training),
    /// `None` for fast playout-cap searches.
    pub targets: Vec<Option<MoveTarget>>,
    /// The result (stored as 1: sente won, -1: gote won, 0: draw).
    pub result: GameResult,
    /// How the game ended (checkmate, resignation, repetition, ...).
    pub reason: String,
}

impl GameRecord {
    /// Result for `color`: 1 win, 0 draw, -1 loss.
    pub fn score_for(&self, color: Color) -> i8 {
        self.result.score_for(color)
    }

    /// The result of an outcome.
    pub fn result_of(o: &Outcome) -> GameResult {
        GameResult::from_winner(o.winner)
    }

    /// Positions with a training target.
    pub fn num_samples(&self) -> usize {
        self.targets.iter().filter(|t| t.is_some()).count()
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SampleError + '_ {
    move |source| SampleError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes a shard atomically (temporary name in the same directory, then rename).
pub fn write_shard(
    path: &Path,
    header: &ShardHeader,
    games: &[GameRecord],
) -> Result<(), SampleError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let tmp = path.with_file_name(format!(
        ".tmp{}-{}",
        std::process::id(),
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    let written = (|| -> Result<(), SampleError> {
        let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        let mut enc = zstd::Encoder::new(file, 3).map_err(io(&tmp))?;
        let mut line = serde_json::to_vec(header).expect("header serialises");
        line.push(b'\n');
        enc.write_all(&line).map_err(io(&tmp))?;
        for g in games {
            let mut line = serde_json::to_vec(g).expect("record serialises");
            line.push(b'\n');
            enc.write_all(&line).map_err(io(&tmp))?;
        }
        let file = enc.finish().map_err(io(&tmp))?;
        file.sync_all().map_err(io(&tmp))
    })();
    if let Err(e) = written {
        // A full or failing disk leaves no partial file behind.
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// Reads a shard.
pub fn read_shard(path: &Path) -> Result<(ShardHeader, Vec<GameRecord>), SampleError> {
    let bad = |reason: String| SampleError::Format {
        path: path.display().to_string(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(io(path))?;
    let dec = zstd::Decoder::new(file).map_err(io(path))?;
    let mut lines = BufReader::new(dec).lines();
    let first = lines
        .next()
        .ok_or_else(|| bad("empty shard".into()))?
        .map_err(|e| bad(format!("not a zstd shard: {e}")))?;
    let header: ShardHeader =
        serde_json::from_str(&first).map_err(|e| bad(format!("bad header: {e}")))?;
    if header.version != SHARD_VERSION {
        return Err(bad(format!(
            "shard version {} (this build reads {SHARD_VERSION})",
            header.version
        )));
    }
    let mut games = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line.map_err(|e| bad(format!("truncated shard: {e}")))?;
        let g: GameRecord =
            serde_json::from_str(&line).map_err(|e| bad(format!("bad record {}: {e}", i + 1)))?;
        if g.targets.len() != g.moves.len() {
            return Err(bad(format!(
                "record {}: {} targets for {} moves",
                i + 1,
                g.targets.len(),
                g.moves.len()
            )));
        }
        games.push(g);
    }
    Ok((header, games))
}

/// Shard files (`*.zst`) under `dir`, sorted by name; temporary files are skipped.
pub fn list_shards(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|x| x == "zst")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(n: usize) -> GameRecord {
        GameRecord {
            start_sfen: "rbsgk/4p/5/P4/KGSBR b - 1".into(),
            moves: vec!["5e4d".into(); n],
            targets: (0..n)
                .map(|i| {
                    (i % 2 == 0).then(|| MoveTarget {
                        policy: vec![(3, 0.25), (7, 0.75)],
                        value: 0.5,
                    })
                })
                .collect(),
            result: GameResult::GoteWins,
            reason: "checkmate".into(),
        }
    }

    #[test]
    fn shard_round_trip_and_atomic_names() {
        let dir = std::env::temp_dir().join(format!("shard-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let h = ShardHeader {
            version: SHARD_VERSION,
            variant: "minishogi".into(),
            policy_len: 1725,
            generation: 3,
        };
        let p = dir.join("a.zst");
        write_shard(&p, &h, &[game(3), game(0)]).unwrap();
        let (h2, g) = read_shard(&p).unwrap();
        assert_eq!(h2, h);
        assert_eq!(g, vec![game(3), game(0)]);
        assert_eq!(g[0].num_samples(), 2);
        // A temporary (partial) file is never listed.
        std::fs::write(dir.join(".tmp1-b.zst"), b"partial").unwrap();
        assert_eq!(list_shards(&dir), vec![p.clone()]);
        // Damage is reported, not panicked on.
        std::fs::write(dir.join("c.zst"), b"garbage").unwrap();
        assert!(read_shard(&dir.join("c.zst")).is_err());
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(dir.join("d.zst"), &bytes[..bytes.len() / 2]).unwrap();
        assert!(read_shard(&dir.join("d.zst")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
