//! The sample store: `samples/<gen>/` holds one shard per finished game, named so that
//! counting needs only a directory listing and no two workers ever write the same name:
//!
//! ```text
//! samples/000012/<worker id, 16 hex>-<sequence, 8 digits>-<games>g<samples>s.zst
//! ```
//!
//! `<gen>` is the network generation a game started with. Shards are written under a
//! temporary name (`.tmp…`) and renamed; temporary files left by a killed writer are ignored by
//! readers and removed by [`clean_temporaries`].
//!
//! The counts of a name are untrusted: a name is a shard name only when it is written exactly
//! as [`ShardName::file_name`] writes it, with [`MAX_SHARD_GAMES`] game and at most
//! [`MAX_SHARD_SAMPLES`] samples (other files are strays, left out), and sums over names
//! saturate. When a shard is read, a games count that differs from its content makes it a bad
//! shard; its samples are counted from its content, the name's count being only what a listing
//! shows before it is read.

use crate::error::{IoOp, PipelineError, Result};
use selfplay::{read_shard, write_shard, GameRecord, ShardHeader};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Games a shard holds: the writer stores one game per shard, so a name claiming more is not
/// a shard of this store (it could end a synchronous generation early).
pub const MAX_SHARD_GAMES: u64 = 1;

/// Most training samples a shard name may claim (positions with a target of its game): far
/// more than any game reaches, small enough that a stray name cannot claim a run's worth.
pub const MAX_SHARD_SAMPLES: u64 = 1 << 16;

/// A shard as its name describes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShardName {
    /// Generation directory.
    pub generation: u64,
    /// Writer's id.
    pub worker: u64,
    /// Writer's sequence number.
    pub seq: u64,
    /// Games in the shard.
    pub games: u64,
    /// Training samples in the shard.
    pub samples: u64,
}

impl ShardName {
    /// The file name.
    pub fn file_name(&self) -> String {
        format!(
            "{:016x}-{:08}-{}g{}s.zst",
            self.worker, self.seq, self.games, self.samples
        )
    }

    /// Parses a file name of generation `generation` (None: not a shard name: not written as
    /// [`ShardName::file_name`] writes it, or counts out of bounds).
    pub fn parse(generation: u64, name: &str) -> Option<ShardName> {
        let stem = name.strip_suffix(".zst")?;
        let mut it = stem.splitn(3, '-');
        let (w, s, counts) = (it.next()?, it.next()?, it.next()?);
        if w.len() != 16 {
            return None;
        }
        let worker = u64::from_str_radix(w, 16).ok()?;
        let seq = s.parse().ok()?;
        let (g, rest) = counts.split_once('g')?;
        let samples = rest.strip_suffix('s')?.parse().ok()?;
        let s = ShardName {
            generation,
            worker,
            seq,
            games: g.parse().ok()?,
            samples,
        };
        // One spelling per shard ("+1g", "01g", upper-case hex are not), bounded counts.
        let bounded = (1..=MAX_SHARD_GAMES).contains(&s.games) && s.samples <= MAX_SHARD_SAMPLES;
        (bounded && s.file_name() == name).then_some(s)
    }

    /// Path in the run directory `dir`.
    pub fn path(&self, dir: &Path) -> PathBuf {
        generation_dir(dir, self.generation).join(self.file_name())
    }
}

/// `samples/<gen>` of a run directory.
pub fn generation_dir(dir: &Path, generation: u64) -> PathBuf {
    dir.join("samples").join(format!("{generation:06}"))
}

/// Every shard of the run, sorted by generation, worker and sequence. Files that are not shard
/// names (temporaries, strays) are left out; unreadable directories are errors.
pub fn list(dir: &Path) -> Result<Vec<ShardName>> {
    let root = dir.join("samples");
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(PipelineError::io(IoOp::List, &root)(e)),
    };
    for e in entries {
        let e = e.map_err(PipelineError::io(IoOp::List, &root))?;
        let Some(generation) = e.file_name().to_str().and_then(|n| n.parse::<u64>().ok()) else {
            continue;
        };
        out.extend(list_generation(dir, generation)?);
    }
    out.sort();
    Ok(out)
}

/// Modification times of the generation directories at their last listing, so that a reader
/// polling a large store lists only the directories that changed (a new shard changes its
/// directory's time; the others cost one `stat` each).
#[derive(Default)]
pub struct DirTimes(std::collections::HashMap<u64, std::time::SystemTime>);

/// The shards of the generation directories that changed since `times` last saw them.
pub fn list_changed(dir: &Path, times: &mut DirTimes) -> Result<Vec<ShardName>> {
    let root = dir.join("samples");
    let entries = match std::fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PipelineError::io(IoOp::List, &root)(e)),
    };
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(PipelineError::io(IoOp::List, &root))?;
        let Some(generation) = e.file_name().to_str().and_then(|n| n.parse::<u64>().ok()) else {
            continue;
        };
        let modified = e.metadata().and_then(|m| m.modified()).ok();
        if let Some(m) = modified {
            if times.0.get(&generation) == Some(&m) {
                continue;
            }
            // A time is remembered only once it is old enough that no shard written within
            // the clock's resolution can hide behind it; until then the directory is listed.
            if is_old(m) {
                times.0.insert(generation, m);
            } else {
                times.0.remove(&generation);
            }
        }
        out.extend(list_generation(dir, generation)?);
    }
    out.sort();
    Ok(out)
}

/// Whether a directory time is far enough in the past that no write can share it.
fn is_old(t: std::time::SystemTime) -> bool {
    t.elapsed()
        .is_ok_and(|age| age > std::time::Duration::from_secs(2))
}

/// The shards of one generation.
pub fn list_generation(dir: &Path, generation: u64) -> Result<Vec<ShardName>> {
    let gdir = generation_dir(dir, generation);
    let entries = match std::fs::read_dir(&gdir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PipelineError::io(IoOp::List, &gdir)(e)),
    };
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(PipelineError::io(IoOp::List, &gdir))?;
        if let Some(s) = e
            .file_name()
            .to_str()
            .and_then(|n| ShardName::parse(generation, n))
        {
            out.push(s);
        }
    }
    Ok(out)
}

/// Games and training samples the names of `shards` claim (saturating sums).
pub fn totals(shards: &[ShardName]) -> (u64, u64) {
    shards.iter().fold((0u64, 0u64), |(g, n), s| {
        (g.saturating_add(s.games), n.saturating_add(s.samples))
    })
}

/// Games stored for `generation`, from the listing.
pub fn games_in(dir: &Path, generation: u64) -> Result<u64> {
    Ok(totals(&list_generation(dir, generation)?).0)
}

/// Games and training samples stored for `generation`, from the listing.
pub fn games_and_samples_in(dir: &Path, generation: u64) -> Result<(u64, u64)> {
    Ok(totals(&list_generation(dir, generation)?))
}

/// Removes temporary files of atomic writes (`.tmp…` names, as a killed writer leaves them:
/// [`atomic_file::is_temporary`]) older than `min_age` in `dirs`.
pub fn clean_temporaries_in(dirs: &[PathBuf], min_age: std::time::Duration) -> usize {
    let mut removed = 0;
    for d in dirs {
        let Ok(files) = std::fs::read_dir(d) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            let temporary = atomic_file::is_temporary(&name);
            let old = f
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= min_age);
            if temporary && old && f.path().is_file() && std::fs::remove_file(f.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// Removes temporary files older than `min_age` under `samples/` (left by killed writers).
pub fn clean_temporaries(dir: &Path, min_age: std::time::Duration) -> usize {
    let dirs: Vec<PathBuf> = std::fs::read_dir(dir.join("samples"))
        .map(|gens| gens.flatten().map(|g| g.path()).collect())
        .unwrap_or_default();
    clean_temporaries_in(&dirs, min_age)
}

/// Writes the shards of one worker: unique names from its id and a sequence.
pub struct ShardWriter {
    dir: PathBuf,
    worker: u64,
    seq: u64,
    variant: String,
    policy_len: usize,
}

impl ShardWriter {
    /// A writer for worker `worker` of the run in `dir`.
    pub fn new(dir: &Path, worker: u64, variant: &str, policy_len: usize) -> ShardWriter {
        ShardWriter {
            dir: dir.to_path_buf(),
            worker,
            seq: 0,
            variant: variant.to_string(),
            policy_len,
        }
    }

    /// Stores one finished game played by network `generation`; returns its shard.
    pub fn write(&mut self, generation: u64, game: &GameRecord) -> Result<ShardName> {
        let name = ShardName {
            generation,
            worker: self.worker,
            seq: self.seq,
            games: 1,
            samples: game.num_samples() as u64,
        };
        if name.samples > MAX_SHARD_SAMPLES {
            return Err(PipelineError::GameTooLong {
                samples: name.samples,
            });
        }
        self.seq += 1;
        let header = ShardHeader {
            version: selfplay::samples::SHARD_VERSION,
            variant: self.variant.clone(),
            policy_len: self.policy_len,
            generation,
        };
        let path = name.path(&self.dir);
        write_shard(&path, &header, std::slice::from_ref(game))
            .map_err(|source| PipelineError::StoreGame { path, source })?;
        Ok(name)
    }
}

/// Reads a shard and checks it against the run: the variant, the policy length, the games
/// count of its name (its samples count is not checked: readers count the samples of the
/// games they take in). Errors name the file and the reason.
pub fn read_checked(
    dir: &Path,
    name: &ShardName,
    variant: &str,
    policy_len: usize,
) -> Result<Vec<GameRecord>> {
    let path = name.path(dir);
    let (h, games) = read_shard(&path)?;
    let bad = |reason: String| PipelineError::Shard {
        path: path.clone(),
        reason,
    };
    if h.variant != variant {
        return Err(bad(format!(
            "games of variant {:?}, this run plays {variant:?}",
            h.variant
        )));
    }
    if h.policy_len != policy_len {
        return Err(bad(format!(
            "policy length {}, this run's encoding has {policy_len}",
            h.policy_len
        )));
    }
    if games.len() as u64 != name.games {
        return Err(bad(format!(
            "{} games, its name says {}",
            games.len(),
            name.games
        )));
    }
    for g in &games {
        // Rounding may leave a value or probability a hair outside its range.
        const EPS: f32 = 1e-3;
        for t in g.targets.iter().flatten() {
            if !(-1.0 - EPS..=1.0 + EPS).contains(&t.value) {
                return Err(bad(format!("root value {} outside [-1, 1]", t.value)));
            }
            if t.policy
                .iter()
                .any(|&(i, p)| i as usize >= policy_len || !(-EPS..=1.0 + EPS).contains(&p))
            {
                return Err(bad("a policy target outside the policy or [0, 1]".into()));
            }
        }
    }
    Ok(games)
}

/// Shards already taken in by a reader, so a poll reads only the new ones.
#[derive(Default)]
pub struct Seen(HashSet<(u64, u64, u64)>);

impl Seen {
    /// Marks a shard; `true` when it is new.
    pub fn insert(&mut self, s: &ShardName) -> bool {
        self.0.insert((s.generation, s.worker, s.seq))
    }

    /// Shards seen.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none was seen.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_strays_are_ignored() {
        let s = ShardName {
            generation: 3,
            worker: 0xdead_beef_0123_4567,
            seq: 42,
            games: 1,
            samples: 17,
        };
        assert_eq!(ShardName::parse(3, &s.file_name()), Some(s));
        for bad in [
            ".tmp123-x.zst",
            "000001-00-000001.zst",
            "deadbeef-00000001-1g2s.zst",
            "deadbeef01234567-x-1g2s.zst",
            "deadbeef01234567-00000001-1g2.zst",
        ] {
            assert_eq!(ShardName::parse(0, bad), None, "{bad}");
        }
    }

    #[test]
    fn hostile_counts_in_names_are_not_shard_names() {
        let w = "deadbeef01234567-00000001";
        let max = format!("{w}-1g{MAX_SHARD_SAMPLES}s.zst");
        assert_eq!(
            ShardName::parse(0, &max).unwrap().samples,
            MAX_SHARD_SAMPLES
        );
        for bad in [
            format!("{w}-18446744073709551615g1s.zst"),
            format!("{w}-18446744073709551616g1s.zst"),
            format!("{w}-1g18446744073709551615s.zst"),
            format!("{w}-1g{}s.zst", MAX_SHARD_SAMPLES + 1),
            format!("{w}-2g1s.zst"),
            format!("{w}-0g0s.zst"),
            format!("{w}-+1g1s.zst"),
            format!("{w}-01g1s.zst"),
            format!("{w}-1g01s.zst"),
            "DEADBEEF01234567-00000001-1g1s.zst".into(),
            "deadbeef01234567-1-1g1s.zst".into(),
        ] {
            assert_eq!(ShardName::parse(0, &bad), None, "{bad}");
        }
    }

    /// A poll lists only the generation directories whose time changed: every directory the
    /// first time, none when nothing was written, and only the one that got a shard after.
    #[test]
    fn polling_relists_only_the_directories_that_changed() {
        let dir = std::env::temp_dir().join(format!("store-poll-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let shard = |generation, seq| ShardName {
            generation,
            worker: 7,
            seq,
            games: 1,
            samples: 3,
        };
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        for g in [1, 2] {
            let gdir = generation_dir(&dir, g);
            std::fs::create_dir_all(&gdir).unwrap();
            std::fs::write(gdir.join(shard(g, 0).file_name()), b"").unwrap();
            // Old enough to be remembered (a fresh time is listed again, see `is_old`).
            std::fs::File::open(&gdir)
                .unwrap()
                .set_modified(past)
                .unwrap();
        }
        let mut times = DirTimes::default();
        assert_eq!(list_changed(&dir, &mut times).unwrap().len(), 2);
        assert!(list_changed(&dir, &mut times).unwrap().is_empty());
        let gdir = generation_dir(&dir, 2);
        std::fs::write(gdir.join(shard(2, 1).file_name()), b"").unwrap();
        let changed = list_changed(&dir, &mut times).unwrap();
        assert!(changed.iter().all(|s| s.generation == 2), "{changed:?}");
        assert_eq!(changed.len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn listing_counts_are_bounded_and_sums_saturate() {
        let dir = std::env::temp_dir().join(format!("store-counts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let g = generation_dir(&dir, 0);
        std::fs::create_dir_all(&g).unwrap();
        for name in [
            "0000000000000001-00000000-1g7s.zst",
            "0000000000000002-00000000-18446744073709551615g1s.zst",
            "0000000000000003-00000000-1g18446744073709551615s.zst",
            "0000000000000004-00000000-1000g0s.zst",
        ] {
            std::fs::write(g.join(name), b"").unwrap();
        }
        // Only the plausible name counts: a stray cannot claim a generation's games.
        assert_eq!(games_and_samples_in(&dir, 0).unwrap(), (1, 7));
        assert_eq!(games_in(&dir, 0).unwrap(), 1);
        let huge = ShardName {
            generation: 0,
            worker: 0,
            seq: 0,
            games: u64::MAX,
            samples: u64::MAX,
        };
        assert_eq!(totals(&[huge.clone(), huge]), (u64::MAX, u64::MAX));
        // The writer never names a shard the listing would leave out.
        let moves = MAX_SHARD_SAMPLES as usize + 1;
        let game = GameRecord {
            start_sfen: "rbsgk/4p/5/P4/KGSBR b - 1".into(),
            moves: vec!["5d5c".into(); moves],
            targets: vec![
                Some(selfplay::MoveTarget {
                    policy: vec![(0, 1.0)],
                    value: 0.0,
                    surprise: 0.0,
                });
                moves
            ],
            result: rules::GameResult::Draw,
            reason: "move limit".into(),
        };
        let err = ShardWriter::new(&dir, 9, "minishogi", 1)
            .write(0, &game)
            .unwrap_err();
        assert!(err.to_string().contains("more than a shard holds"), "{err}");
        assert_eq!(list(&dir).unwrap().len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
