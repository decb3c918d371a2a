//! A run's self-play positions for Fairy-Stockfish's trainers: the positions with a search
//! target, with their values and results, and their export in the "plain" text format that
//! variant-nnue-tools (`learn convert`) reads and writes (src/tools/convert.cpp):
//!
//! ```text
//! fen <FEN as Fairy-Stockfish writes it>
//! move <the searched best move, its UCI notation>
//! score <the root value in its internal units, for the side to move>
//! ply <the game ply>
//! result <1, 0 or -1: the game's result for the side to move>
//! e
//! ```
//!
//! The score is `410 ln(p / (1 - p))` with `p = (1 + v) / 2` our root value's win probability,
//! the inverse of variant-nnue-pytorch's `sigmoid(score / 410)` (`model::nnue::score_of_value`),
//! within +-10000. The halfmove clock of the FEN counts as Fairy-Stockfish does: plies since
//! the last capture, drop or promotion (a Kyoto piece turning over is none).

use crate::error::{IoOp, PipelineError, Result};
use crate::export::games_or_skip;
use crate::export::ExportStats;
use crate::run::Run;
use crate::store;
use model::nnue::{score_of_value, FeatureLayout, FsfRules};
use rules::{Move, Position};
use selfplay::{GameRecord, SelfPlayError};
use std::io::Write;
use std::ops::{ControlFlow, RangeInclusive};
use std::path::Path;

/// One position of a game that had a full search.
#[derive(Clone, Debug)]
pub struct FsfSample {
    /// The position.
    pub position: Position,
    /// The search's root value for the side to move, in [-1, 1].
    pub value: f32,
    /// The game's result for the side to move: 1, 0 or -1.
    pub result: i8,
    /// The most visited move of the search.
    pub best: Move,
    /// Plies since the last capture, drop or promotion (Fairy-Stockfish's halfmove clock).
    pub halfmove: u32,
}

/// Whether `mv` takes a piece in `pos` (on its destination or, for a double move, on the way).
pub fn captures(pos: &Position, mv: Move) -> bool {
    let taken = |sq: Option<usize>| sq.is_some_and(|s| !pos.piece_at(s).is_empty());
    !mv.is_drop() && (taken(Some(mv.to())) || taken(mv.via()))
}

/// Whether a move resets Fairy-Stockfish's halfmove clock.
fn resets_clock(pos: &Position, mv: Move) -> bool {
    mv.is_drop() || mv.promotes() || captures(pos, mv)
}

/// The samples of one game, or why it is damaged.
pub fn game_samples(
    rec: &GameRecord,
    run: &Run,
    mut f: impl FnMut(FsfSample) -> ControlFlow<()>,
) -> std::result::Result<ControlFlow<()>, SelfPlayError> {
    let mut pos = Position::from_sfen(&run.variant, &rec.start_sfen)?;
    let mut halfmove = 0u32;
    for (ply, (usi, target)) in rec.moves.iter().zip(&rec.targets).enumerate() {
        let mv = pos
            .parse_usi(usi)
            .map_err(|source| SelfPlayError::Move { ply, source })?;
        if let Some(t) = target {
            let legal = run.encoder.legal_indices(&pos);
            let best = t
                .policy
                .iter()
                .filter_map(|&(i, p)| legal.iter().find(|l| l.0 == i as usize).map(|l| (l.1, p)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(m, _)| m)
                .ok_or_else(|| SelfPlayError::Target {
                    ply,
                    reason: "the policy target has no legal move".into(),
                })?;
            let sample = FsfSample {
                position: pos.clone(),
                value: t.value,
                result: rec.score_for(pos.side_to_move()),
                best,
                halfmove,
            };
            if f(sample).is_break() {
                return Ok(ControlFlow::Break(()));
            }
        }
        halfmove = if resets_clock(&pos, mv) {
            0
        } else {
            halfmove.saturating_add(1)
        };
        pos.make_move(mv);
    }
    Ok(ControlFlow::Continue(()))
}

/// Calls `f` with every sample of the games of `generations`, oldest generation first or
/// (`newest_first`) newest first, until it breaks. Damaged shards and games are skipped with
/// a warning on stderr and counted.
pub fn for_each_sample(
    run: &Run,
    generations: &RangeInclusive<u64>,
    newest_first: bool,
    mut f: impl FnMut(FsfSample) -> ControlFlow<()>,
) -> Result<ExportStats> {
    let mut stats = ExportStats::default();
    let mut shards: Vec<_> = store::list(&run.dir)?
        .into_iter()
        .filter(|s| generations.contains(&s.generation))
        .collect();
    shards.sort_by_key(|s| (s.generation, s.worker, s.seq));
    if newest_first {
        shards.reverse();
    }
    for shard in shards {
        let path = shard.path(&run.dir);
        let Some(games) = games_or_skip(&path, &mut stats.skipped) else {
            continue;
        };
        for (i, game) in games.iter().enumerate() {
            let mut n = 0;
            let r = game_samples(game, run, |s| {
                n += 1;
                f(s)
            });
            match r {
                Ok(flow) => {
                    stats.positions += n;
                    stats.games += 1;
                    if flow.is_break() {
                        return Ok(stats);
                    }
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
    Ok(stats)
}

/// The Fairy-Stockfish variant and feature layout for a run: `fsf_variant` when given, else
/// the run's variant's built-in counterpart or our export of it.
pub fn layout_for(run: &Run, fsf_variant: Option<&str>) -> Result<FeatureLayout> {
    let rules = FsfRules::for_variant(&run.variant, fsf_variant)?;
    Ok(FeatureLayout::new(&run.variant, &rules)?)
}

/// One record of the plain format.
pub fn plain_record(layout: &FeatureLayout, s: &FsfSample) -> String {
    format!(
        "fen {}\nmove {}\nscore {}\nply {}\nresult {}\ne\n",
        layout.fsf_fen(&s.position, s.halfmove),
        layout.fsf_move(&s.position, s.best),
        score_of_value(s.value),
        layout.fsf_game_ply(&s.position),
        s.result
    )
}

/// Writes every sample of the games of `generations` in the plain format to `out`
/// (atomically), for Fairy-Stockfish's `fsf_variant` (see [`layout_for`]). Returns what was
/// written and the variant's name (the `UCI_Variant` its tools need).
pub fn export_fsf_plain(
    run: &Run,
    generations: RangeInclusive<u64>,
    fsf_variant: Option<&str>,
    out: &Path,
) -> Result<(ExportStats, String)> {
    let layout = layout_for(run, fsf_variant)?;
    let tmp = out.with_file_name(format!(
        ".tmp{}-{}",
        std::process::id(),
        out.file_name().unwrap_or_default().to_string_lossy()
    ));
    let writing = |e: Box<dyn std::error::Error + Send + Sync>| PipelineError::Writing {
        path: out.to_path_buf(),
        source: e,
    };
    let stats = match write_plain(run, &generations, &layout, &tmp) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(writing(e));
        }
    };
    std::fs::rename(&tmp, out).map_err(|e| writing(Box::new(e)))?;
    Ok((stats, layout.rules().name.clone()))
}

/// Writes the plain records of `generations` to `tmp` and syncs it.
fn write_plain(
    run: &Run,
    generations: &RangeInclusive<u64>,
    layout: &FeatureLayout,
    tmp: &Path,
) -> std::result::Result<ExportStats, Box<dyn std::error::Error + Send + Sync>> {
    let file = std::fs::File::create(tmp).map_err(PipelineError::io(IoOp::Create, tmp))?;
    let mut w = std::io::BufWriter::new(file);
    let mut err = None;
    let stats = for_each_sample(run, generations, false, |s| {
        match w.write_all(plain_record(layout, &s).as_bytes()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                err = Some(e);
                ControlFlow::Break(())
            }
        }
    })?;
    if let Some(e) = err {
        return Err(e.into());
    }
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn captures_drops_and_promotions_reset_the_clock() {
        let v = Arc::new(rules::Variant::builtin("minishogi").unwrap());
        let mut pos = Position::start(v.clone());
        let quiet = pos.parse_usi("5d5c").unwrap();
        assert!(!resets_clock(&pos, quiet));
        pos.play_usi("5d5c 1b1c 5c5b 1c1d").unwrap();
        assert!(resets_clock(&pos, pos.parse_usi("5b5a+").unwrap()));
        let p = Position::from_sfen(&v, "rbs1k/5/5/S3G/K2BR b GPp 9").unwrap();
        assert!(resets_clock(&p, p.parse_usi("P*3c").unwrap()));
    }
}
