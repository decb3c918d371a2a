//! Sample shards: versioned, compressed files of finished self-play games, one record per game
//! (start SFEN, moves, per-move search targets, result), written atomically.
//!
//! A shard is zstd-compressed JSON lines: a [`ShardHeader`] line, then one [`GameRecord`] per
//! line. Shards are written under a temporary name and renamed, so a reader never sees a
//! partial shard and a killed writer loses at most the games it had not yet written.

use rules::{Color, GameResult, Outcome};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Version of the shard format.
pub const SHARD_VERSION: u32 = 1;

/// Largest decompressed shard [`read_shard`] reads, in bytes (256 MiB); a larger one (a zstd
/// bomb, say) is refused once this many bytes are read, before it exhausts memory. Real shards
/// are far smaller: the pipeline stores one game per shard, a few kB for minishogi, and even a
/// game of 10,000 recorded positions with 300-move policies stays under [`MAX_LINE_BYTES`].
pub const MAX_SHARD_BYTES: u64 = 256 << 20;

/// Longest line (the header, or one game's record) [`read_shard`] reads, in bytes (64 MiB);
/// a longer line is refused once this many bytes are read.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

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

impl From<atomic_file::WriteError> for SampleError {
    fn from(e: atomic_file::WriteError) -> Self {
        SampleError::Io {
            path: e.path.display().to_string(),
            source: e.source,
        }
    }
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
    /// Policy surprise: KL(policy target || the network's prior) in nats, what
    /// `replay.policy_surprise_weight` weights samples by (absent in older shards: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub surprise: f32,
}

fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

/// KL(target || prior) in nats over the moves the target gives a probability; priors are
/// floored at 1e-9 so that a move the network ruled out does not make it infinite.
pub fn policy_surprise(target: &[f32], prior: &[f32]) -> f32 {
    target
        .iter()
        .zip(prior)
        .filter(|(&t, _)| t > 0.0)
        .map(|(&t, &p)| f64::from(t) * (f64::from(t) / f64::from(p.max(1e-9))).ln())
        .sum::<f64>()
        .max(0.0) as f32
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

/// Writes a shard atomically ([`atomic_file`]: temporary name, fsync, rename, directory fsync);
/// a full or failing disk leaves no partial file behind.
pub fn write_shard(
    path: &Path,
    header: &ShardHeader,
    games: &[GameRecord],
) -> Result<(), SampleError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    atomic_file::write_with(path, |tmp| -> Result<(), SampleError> {
        let file = std::fs::File::create(tmp).map_err(io(tmp))?;
        let mut enc = zstd::Encoder::new(file, 3).map_err(io(tmp))?;
        let mut line = serde_json::to_vec(header).expect("header serialises");
        line.push(b'\n');
        enc.write_all(&line).map_err(io(tmp))?;
        for g in games {
            let mut line = serde_json::to_vec(g).expect("record serialises");
            line.push(b'\n');
            enc.write_all(&line).map_err(io(tmp))?;
        }
        enc.finish().map_err(io(tmp))?;
        Ok(())
    })
}

/// Reads a shard, incrementally and within [`MAX_SHARD_BYTES`] decompressed bytes and
/// [`MAX_LINE_BYTES`] per line: a larger shard is a [`SampleError::Format`] that says so.
pub fn read_shard(path: &Path) -> Result<(ShardHeader, Vec<GameRecord>), SampleError> {
    read_shard_within(path, MAX_SHARD_BYTES, MAX_LINE_BYTES)
}

/// [`read_shard`] with the bounds `max_bytes` (decompressed shard) and `max_line` (one line).
fn read_shard_within(
    path: &Path,
    max_bytes: u64,
    max_line: u64,
) -> Result<(ShardHeader, Vec<GameRecord>), SampleError> {
    let bad = |reason: String| SampleError::Format {
        path: path.display().to_string(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(io(path))?;
    let dec = zstd::Decoder::new(file).map_err(io(path))?;
    // One byte past the bound tells a shard of exactly `max_bytes` from a larger one.
    let mut reader = BufReader::new(dec.take(max_bytes.saturating_add(1)));
    let mut total = 0u64;
    let mut buf = Vec::new();
    // The next line without its newline (None at the end), its length and the shard's total
    // bounded; `what` names it, `broken` says what a decoding error means there.
    let mut next_line = |what: &str, broken: &str| -> Result<Option<String>, SampleError> {
        buf.clear();
        let n = (&mut reader)
            .take(max_line.saturating_add(1))
            .read_until(b'\n', &mut buf)
            .map_err(|e| bad(format!("{broken}: {e}")))?;
        total = total.saturating_add(n as u64);
        if total > max_bytes {
            return Err(bad(format!(
                "more than {max_bytes} bytes decompressed (the most a shard may hold)"
            )));
        }
        if n == 0 {
            return Ok(None);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        } else if n as u64 > max_line {
            return Err(bad(format!(
                "{what}: a line longer than {max_line} bytes (the most a line may hold)"
            )));
        }
        String::from_utf8(std::mem::take(&mut buf))
            .map(Some)
            .map_err(|_| bad(format!("{what}: not UTF-8 text")))
    };
    let first =
        next_line("header", "not a zstd shard")?.ok_or_else(|| bad("empty shard".into()))?;
    let header: ShardHeader =
        serde_json::from_str(&first).map_err(|e| bad(format!("bad header: {e}")))?;
    if header.version != SHARD_VERSION {
        return Err(bad(format!(
            "shard version {} (this build reads {SHARD_VERSION})",
            header.version
        )));
    }
    let mut games = Vec::new();
    loop {
        let i = games.len() + 1;
        let Some(line) = next_line(&format!("record {i}"), "truncated shard")? else {
            break;
        };
        let g: GameRecord =
            serde_json::from_str(&line).map_err(|e| bad(format!("bad record {i}: {e}")))?;
        if g.targets.len() != g.moves.len() {
            return Err(bad(format!(
                "record {i}: {} targets for {} moves",
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

    /// KL(target || prior) by hand: (0.5, 0.5, 0) against (0.25, 0.5, 0.25) is 0.5 ln 2; a
    /// target equal to the prior is 0; a prior of 0 is floored at 1e-9.
    #[test]
    fn policy_surprise_is_the_kl_divergence() {
        let s = policy_surprise(&[0.5, 0.5, 0.0], &[0.25, 0.5, 0.25]);
        assert!((s - 0.5 * 2f32.ln()).abs() < 1e-6, "{s}");
        assert_eq!(policy_surprise(&[0.2, 0.8], &[0.2, 0.8]), 0.0);
        let s = policy_surprise(&[1.0, 0.0], &[0.0, 1.0]);
        assert!((s - 1e9f32.ln()).abs() < 1e-3, "{s}");
    }

    /// The surprise is written only when not 0, and a record without it (an older shard)
    /// reads as 0.
    #[test]
    fn surprise_is_optional_in_records() {
        let t = MoveTarget {
            policy: vec![(1, 1.0)],
            value: 0.25,
            surprise: 0.0,
        };
        let text = serde_json::to_string(&t).unwrap();
        assert!(!text.contains("surprise"), "{text}");
        let back: MoveTarget =
            serde_json::from_str(r#"{"policy":[[1,1.0]],"value":0.25}"#).unwrap();
        assert_eq!(back, t);
        let t = MoveTarget {
            surprise: 0.75,
            ..t
        };
        let back: MoveTarget = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    fn game(n: usize) -> GameRecord {
        GameRecord {
            start_sfen: "rbsgk/4p/5/P4/KGSBR b - 1".into(),
            moves: vec!["5e4d".into(); n],
            targets: (0..n)
                .map(|i| {
                    (i % 2 == 0).then(|| MoveTarget {
                        policy: vec![(3, 0.25), (7, 0.75)],
                        value: 0.5,
                        surprise: 0.0,
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

    fn header() -> ShardHeader {
        ShardHeader {
            version: SHARD_VERSION,
            variant: "minishogi".into(),
            policy_len: 1725,
            generation: 0,
        }
    }

    fn reason(e: SampleError) -> String {
        match e {
            SampleError::Format { reason, .. } => reason,
            e => panic!("not a format error: {e}"),
        }
    }

    /// One zstd frame of `bytes`.
    fn frame(bytes: &[u8]) -> Vec<u8> {
        zstd::encode_all(bytes, 3).unwrap()
    }

    #[test]
    fn zstd_bomb_with_an_endless_line_is_refused_at_the_line_bound() {
        let dir = std::env::temp_dir().join(format!("shard-bomb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A valid header, then a record line that never ends: 1 GiB of 'x' from 1024 copies of
        // one small frame (a reader decodes concatenated frames as one stream).
        let mut h = serde_json::to_vec(&header()).unwrap();
        h.push(b'\n');
        let head = frame(&h);
        let mut bytes = head.clone();
        let mib = frame(&vec![b'x'; 1 << 20]);
        for _ in 0..1024 {
            bytes.extend_from_slice(&mib);
        }
        assert!(bytes.len() < 1 << 20, "a bomb: {} bytes", bytes.len());
        let p = dir.join("bomb.zst");
        std::fs::write(&p, &bytes).unwrap();
        let why = reason(read_shard(&p).unwrap_err());
        assert!(
            why.contains("record 1") && why.contains(&format!("longer than {MAX_LINE_BYTES}")),
            "{why}"
        );
        // The same endless line as the header.
        let p = dir.join("endless-header.zst");
        std::fs::write(&p, &bytes[head.len()..]).unwrap();
        let why = reason(read_shard(&p).unwrap_err());
        assert!(
            why.contains("header") && why.contains("longer than"),
            "{why}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn decompressed_size_and_line_length_are_bounded_exactly() {
        let dir = std::env::temp_dir().join(format!("shard-bounds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let p = dir.join("a.zst");
        let games = vec![game(6); 40];
        write_shard(&p, &header(), &games).unwrap();
        let raw = zstd::decode_all(std::fs::File::open(&p).unwrap()).unwrap();
        let size = raw.len() as u64;
        let line = raw.split(|&b| b == b'\n').map(|l| l.len()).max().unwrap() as u64;
        // At the bounds the shard is read; one byte less and it is refused with the reason.
        let (_, g) = read_shard_within(&p, size, line).unwrap();
        assert_eq!(g, games);
        let why = reason(read_shard_within(&p, size - 1, line).unwrap_err());
        assert!(
            why.contains(&format!("more than {} bytes decompressed", size - 1)),
            "{why}"
        );
        let why = reason(read_shard_within(&p, size, line - 1).unwrap_err());
        assert!(why.contains(&format!("longer than {}", line - 1)), "{why}");
        // A bomb of valid records (one frame again and again) stops at the size bound.
        let mut bomb = std::fs::read(&p).unwrap();
        let mut l = serde_json::to_vec(&game(6)).unwrap();
        l.push(b'\n');
        let record = frame(&l);
        for _ in 0..100_000 {
            bomb.extend_from_slice(&record);
        }
        let q = dir.join("bomb.zst");
        std::fs::write(&q, &bomb).unwrap();
        let why = reason(read_shard_within(&q, 64 << 10, line).unwrap_err());
        assert!(why.contains("more than 65536 bytes decompressed"), "{why}");
        // Not UTF-8: refused, not panicked on.
        std::fs::write(&q, frame(b"\xff\xfe\n")).unwrap();
        assert!(reason(read_shard(&q).unwrap_err()).contains("UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
