//! Which moves may give check, told without playing them: the mate check plays only those.
//!
//! A check after a move needs a piece of the mover attacking the enemy royal square. Where the
//! variant attacks only by leaps and by rides that stop at the first piece, and a move changes
//! nothing but the square it leaves and the square it reaches, a new attack can come only from
//! the piece on the square reached, or from a ride the vacated square opened. So a move can
//! check only if it reaches a square from which its piece (before or after promoting) attacks
//! the royal square, or leaves the first occupied square of a ride towards it.

use crate::position::{Position, SMALL_BOARD};
use crate::types::{Color, Kind, Move, Square};
use crate::variant::{SquareIndex, Variant};

/// Marks a leap in [`CheckLines::near`] (otherwise the ride's scan direction).
const LEAP: u8 = u8::MAX;

/// Where a move of the side to move can give check from, for one position.
#[derive(Debug)]
pub(crate) struct CheckLines {
    /// The enemy royal square.
    ksq: usize,
    /// Squares a checking piece may stand on: `(square, LEAP, 0)` for a leap attacker's
    /// square, `(square, scan, i)` for the `i`-th square of a ride scanned from the royal
    /// square (up to and including its first piece).
    near: Vec<(Square, u8, u8)>,
    /// The first piece of each ride towards the royal square: moving it may uncover one.
    blockers: Vec<Square>,
    /// One bit per square modulo 64 of `near` and of `blockers`, to answer most moves at once.
    near_bits: u64,
    blocker_bits: u64,
}

impl Variant {
    /// Whether checks can be told from the squares a move leaves and reaches (see the module
    /// doc): no hoppers, borrowed or last-rank moves, two-step or compound moves, powers, side
    /// captures, changes of kind by capture or by other pieces, and no end by moves other than
    /// checkmate.
    pub(crate) fn checks_by_lines(&self) -> bool {
        !(self.has_hoppers
            || self.moves_from_behind
            || self.has_legs
            || self.has_last_rank_moves
            || self.has_powers
            || self.has_burns
            || self.passive_burn
            || self.has_sweeps
            || self.custodian
            || self.has_shadowed_leaps
            || self.has_lion_lines
            || self.has_contagion
            || self.has_compound
            || self.has_capture_promotions
            || self.promote_by_capture
            || self.has_fates
            || self.has_without
            || self.unarmed_until_royal
            || self.royal_capture
            || self.several_royals
            || self.bare_king
            || self.bare_pieces > 0
            || self.connect > 0)
    }
}

fn bit(sq: usize) -> u64 {
    1 << (sq & 63)
}

impl CheckLines {
    /// The check squares of the side to move in `pos`; None where the variant does not allow
    /// the filter, the opponent has no single royal piece, or is in check already (then every
    /// move must be played to tell).
    pub(crate) fn new(pos: &Position) -> Option<CheckLines> {
        let v = &*pos.variant;
        if !v.checks_by_lines() {
            return None;
        }
        let us = pos.side_to_move();
        let ksq = pos.king[us.flip().index()]? as usize;
        if pos.is_attacked(ksq, us) {
            return None;
        }
        let mut lines = CheckLines {
            ksq,
            near: Vec::with_capacity(32),
            blockers: Vec::with_capacity(8),
            near_bits: 0,
            blocker_bits: 0,
        };
        let (s, e) = v.leap_attack_index[us.index() * v.n + ksq];
        for i in s as usize..e as usize {
            let from = match v.n <= SMALL_BOARD {
                true => v.small.leap_attackers[i].0 as Square,
                false => v.leap_attackers[i].0,
            };
            lines.add_near(from, LEAP, 0);
        }
        for scan in &v.ray_scans[us.index()] {
            if scan.max_hop != 0 {
                return None;
            }
            for (i, &t) in v.ray(ksq, scan.dir as usize).iter().enumerate() {
                lines.add_near(t, scan.dir, i.min(u8::MAX as usize) as u8);
                if !pos.board[t as usize].is_empty() {
                    lines.blockers.push(t);
                    lines.blocker_bits |= bit(t as usize);
                    break;
                }
            }
        }
        Some(lines)
    }

    fn add_near(&mut self, sq: Square, way: u8, i: u8) {
        self.near.push((sq, way, i));
        self.near_bits |= bit(sq as usize);
    }

    /// False when `mv`, a legal move of the side to move, cannot give check; true when it may.
    pub(crate) fn may_check(&self, pos: &Position, mv: Move) -> bool {
        let v = &*pos.variant;
        let us = pos.side_to_move();
        match mv {
            Move::Normal { from, to, promote } => {
                let (from, to) = (from as usize, to as usize);
                if self.blocker_bits & bit(from) != 0
                    && self.blockers.iter().any(|&b| b as usize == from)
                {
                    return true;
                }
                let k = pos.board[from].kind();
                let promoted = match promote {
                    true => v.kinds[k as usize].promotes_to,
                    false => v.flips_to(k),
                };
                self.hits(v, us, to, k) || promoted.is_some_and(|p| self.hits(v, us, to, p))
            }
            Move::Drop { kind, to } => self.hits(v, us, to as usize, kind),
            _ => true,
        }
    }

    /// Whether a piece of `kind` of `us` on `to` attacks the royal square, the squares
    /// between them as they are now.
    fn hits(&self, v: &Variant, us: Color, to: usize, kind: Kind) -> bool {
        if self.near_bits & bit(to) == 0 {
            return false;
        }
        let nd = v.dirs.len();
        let base = us.index() * v.kinds.len();
        self.near.iter().any(|&(sq, way, i)| {
            sq as usize == to
                && match way {
                    LEAP => match v.n <= SMALL_BOARD {
                        true => leap_attacks::<u8>(v, us, self.ksq, to, kind),
                        false => leap_attacks::<Square>(v, us, self.ksq, to, kind),
                    },
                    scan => {
                        (i as usize)
                            < v.ray_attack[(base + kind as usize) * nd + scan as usize][0] as usize
                    }
                }
        })
    }
}

/// Whether a piece of `kind` of `by` on `from` attacks `target` by a leap.
fn leap_attacks<S: SquareIndex>(
    v: &Variant,
    by: Color,
    target: usize,
    from: usize,
    kind: Kind,
) -> bool {
    let (s, e) = v.leap_attack_index[by.index() * v.n + target];
    S::leap_attackers(v)[s as usize..e as usize]
        .iter()
        .any(|&(f, kinds)| f.into() == from && S::attacks(v, kinds, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SplitMix64;
    use std::sync::Arc;

    /// Over random games of every built-in variant the filter allows: a move it says cannot
    /// check never checks; and in minishogi and shogi it passes over most moves (random games
    /// from a fixed seed: the counts are the same on every run).
    #[test]
    fn a_move_the_filter_passes_over_never_checks() {
        let mut rng = SplitMix64(7);
        let mut used = 0;
        for name in crate::VariantSpec::builtin_names() {
            let v = Arc::new(Variant::builtin(name).unwrap());
            if !v.checks_by_lines() {
                continue;
            }
            used += 1;
            let (mut moves, mut skipped, mut checks) = (0usize, 0usize, 0usize);
            for _game in 0..12 {
                let mut pos = Position::start(v.clone());
                for _ply in 0..120 {
                    let legal = pos.legal_moves();
                    if legal.is_empty() || pos.outcome().is_some() {
                        break;
                    }
                    if let Some(lines) = CheckLines::new(&pos) {
                        for &m in &legal {
                            let may = lines.may_check(&pos, m);
                            pos.make_move(m);
                            let check = pos.in_check();
                            pos.unmake_move();
                            assert!(
                                may || !check,
                                "{name}: {} checks in {} but was passed over",
                                pos.move_to_usi(m),
                                pos.to_sfen()
                            );
                            moves += 1;
                            skipped += usize::from(!may);
                            checks += usize::from(check);
                        }
                    }
                    let m = legal[rng.below(legal.len())];
                    pos.make_move(m);
                }
            }
            assert!(checks > 0, "{name}: no check seen");
            // README.md and BENCHMARKS.md: three in four of minishogi's moves, 94% of shogi's.
            let least = match name {
                "minishogi" => 0.7,
                "shogi" => 0.9,
                _ => 0.0,
            };
            assert!(
                skipped as f64 >= least * moves as f64,
                "{name}: only {skipped} of {moves} moves passed over"
            );
        }
        assert!(used >= 5, "{used} variants");
    }
}
