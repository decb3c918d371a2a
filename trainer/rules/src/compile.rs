//! Compiling a [`VariantSpec`] into a [`Variant`], in three steps (as Fairy-Stockfish's variant
//! parser reads the keys and `conclude()` then derives what follows from them): read and check
//! each key ([`Compiler::game_rules`], [`Compiler::parse_kinds`]), check the keys that must
//! agree with each other ([`Compiler::check_kind_rules`]), then derive the tables
//! ([`crate::tables`]) and check the start position against them.

use crate::betza::{self, MoveAtom, TwoLeg};
use crate::bitset::SquareSet;
use crate::compound::{Compound, CompoundTable, Step};
use crate::error::{Error, Result};
use crate::position::SMALL_BOARD;
use crate::spec::{
    EndSpec, PieceDropSpec, PieceSpec, PromotedSpec, RepeatSpec, ShootSpec, SkipOver, VariantSpec,
};
use crate::tables::{build_drop_squares, build_tables};
use crate::types::{Kind, Letter};
use crate::values::{
    ConnectDirections, FlipOn, MatchRule, MovesFrom, PerpetualCheck, PromotionMode, PromotionMoves,
    RepetitionFor, StalemateValue,
};
use crate::variant::{KindInfo, Links, Powers, Variant, MAX_KINDS, MAX_SIDE, MAX_SMALL_KINDS};
use std::sync::Arc;

/// The rules of a variant other than its pieces, as read from the spec (defaults applied).
struct GameRules {
    files: u8,
    ranks: u8,
    start: String,
    zone_depth: u8,
    forbid_immobile_moves: bool,
    promotion_entering: bool,
    immobile_may_promote: bool,
    flip_on_capture: bool,
    drops: bool,
    forbid_immobile_drops: bool,
    promoted_drops: bool,
    royal_drops: bool,
    unarmed_until_royal: bool,
    stalemate: StalemateValue,
    repetition: u32,
    repetition_result: StalemateValue,
    repetition_for_sente: bool,
    perpetual_check_loses: bool,
    max_plies: u32,
    bare_king: bool,
    match_rule: MatchRule,
    moves_from_behind: bool,
    lion_protected: bool,
    lion_counter_strike: bool,
    custodian: bool,
    custodian_corners: bool,
    bare_pieces: u32,
    connect: u8,
    connect_all_directions: bool,
    connect_outside_ranks: u8,
    passive_burn: bool,
    royal_capture: bool,
    promote_by_capture: bool,
}

/// A ride of a power key: direction `(dx, dy)` and range (0: unlimited).
type Ride = (i8, i8, u8);

/// Most compound move types a variant may have (Ko shogi: 47,517), and most a config may make
/// the compiler walk through before they are deduplicated.
const MAX_COMPOUND_TYPES: usize = 400_000;
const MAX_COMPOUND_WALK: usize = 5_000_000;

/// Most moves of a `repeat` power in one turn.
const MAX_REPEAT: u8 = 5;

/// Most king steps of an area move.
const MAX_AREA: u8 = 4;

/// A piece's power keys as written (unpromoted or promoted side).
struct PowerKeys<'a> {
    rank: Option<u8>,
    range_capture: &'a Option<String>,
    sweep: bool,
    skip_first: &'a Option<String>,
    skip_over: &'a Option<Vec<SkipOver>>,
    area: Option<u8>,
    hook: &'a Option<String>,
    burn: bool,
    lion_line: &'a Option<String>,
    anywhere: bool,
    shoot: &'a Option<ShootSpec>,
    repeat: &'a Option<RepeatSpec>,
}

/// The piece kinds of a variant with their parsed moves, before the tables are derived.
#[derive(Default)]
struct Kinds {
    /// Unpromoted kinds in declaration order, then the promoted forms.
    kinds: Vec<KindInfo>,
    /// Each kind's moves.
    atoms: Vec<Vec<MoveAtom>>,
    /// Each kind's extra moves on its owner's last rank.
    extras: Vec<Vec<MoveAtom>>,
    /// Each unpromoted kind's drop rules.
    drop_specs: Vec<PieceDropSpec>,
}

/// One unpromoted piece as read: its kind, moves, last-rank moves and drop rules.
type BasePiece = (KindInfo, Vec<MoveAtom>, Vec<MoveAtom>, PieceDropSpec);

/// Compiles specs; `file` names the source in errors.
pub(crate) struct Compiler<'a> {
    pub(crate) file: &'a str,
}

impl Compiler<'_> {
    fn err(&self, key: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::config(self.file, key, reason)
    }

    /// Reads, checks and compiles a spec.
    pub(crate) fn compile(&self, spec: VariantSpec) -> Result<Variant> {
        let rules = self.game_rules(&spec)?;
        let pieces = spec.pieces.as_deref().unwrap_or_default();
        let mut kinds = self.parse_kinds(pieces, rules.files, rules.ranks)?;
        self.link_promotes_to(pieces, &rules, &mut kinds.kinds)?;
        self.link_captured_as(pieces, &mut kinds.kinds)?;
        self.link_contagion(pieces, &mut kinds.kinds)?;
        self.link_capture_lists(pieces, &mut kinds.kinds)?;
        let hand_kinds = hand_kinds(&mut kinds.kinds, pieces.len(), &rules);
        self.check_kind_rules(&spec, &rules, &mut kinds.kinds)?;
        let has_hoppers = kinds.atoms.iter().flatten().any(|a| a.hops != 1);
        let mut v = unbuilt(&spec, rules, kinds.kinds, hand_kinds, has_hoppers);
        if v.passive_burn && !v.has_burns {
            return Err(self.err("capture.passive_burn", "needs a piece with burn = true"));
        }
        if let Some(i) = v.kinds.iter().position(|k| k.powers.sweep) {
            // Own pieces swept leave the game: no hands to put them in, and no check rules
            // whose legality test would have to sweep too.
            let key = match i < pieces.len() {
                true => format!("pieces[{i}].sweep"),
                false => "pieces[].promoted.sweep".to_string(),
            };
            if !v.royal_capture || !v.hand_kinds.is_empty() {
                return Err(self.err(
                    key,
                    "needs [drops] enabled = false and end.royal_capture = true",
                ));
            }
        }
        self.check_compound(&spec, pieces, &mut v)?;
        build_tables(&mut v, &kinds.atoms, &kinds.extras);
        build_drop_squares(&mut v, &kinds.drop_specs);
        self.check_start(v)
    }

    /// The board size and start position, as written.
    fn board(&self, spec: &VariantSpec) -> Result<(u8, u8, String)> {
        let files = spec.files.ok_or_else(|| self.err("files", "missing"))?;
        let ranks = spec.ranks.ok_or_else(|| self.err("ranks", "missing"))?;
        if !(1..=MAX_SIDE).contains(&files) {
            return Err(self.err("files", format!("must be 1 to {MAX_SIDE}, got {files}")));
        }
        if !(1..=MAX_SIDE).contains(&ranks) {
            return Err(self.err("ranks", format!("must be 1 to {MAX_SIDE}, got {ranks}")));
        }
        let start = spec
            .start
            .clone()
            .ok_or_else(|| self.err("start", "missing"))?;
        Ok((files, ranks, start))
    }

    /// Every rule but the pieces, with its default where the spec has none.
    fn game_rules(&self, spec: &VariantSpec) -> Result<GameRules> {
        let (files, ranks, start) = self.board(spec)?;
        if spec.pieces.as_ref().is_none_or(Vec::is_empty) {
            return Err(self.err("pieces", "no pieces defined"));
        }
        let prom = spec.promotion.clone().unwrap_or_default();
        let drops = spec.drops.clone().unwrap_or_default();
        let end = spec.end.clone().unwrap_or_default();
        let lions = spec.lions.clone().unwrap_or_default();
        let promote_by_capture = prom.moves == Some(PromotionMoves::Capture);
        if promote_by_capture {
            // Promotion by capture has no zone, and a piece that could never move again waits
            // for a capture to promote (the large variants' pawn on its last rank).
            let zone_keys = [
                ("promotion.zone_depth", prom.zone_depth.is_some()),
                (
                    "promotion.immobile_may_promote",
                    prom.immobile_may_promote == Some(true),
                ),
                (
                    "promotion.forbid_immobile",
                    prom.forbid_immobile == Some(true),
                ),
                ("promotion.flip_on", prom.flip_on.is_some()),
            ];
            if let Some((k, _)) = zone_keys.iter().find(|(_, set)| *set) {
                return Err(self.err(
                    *k,
                    "does not apply with promotion.moves = \"capture\" (promotion on every capture, anywhere, no zone)",
                ));
            }
        }
        let zone_depth = match promote_by_capture {
            true => 0,
            false => prom.zone_depth.unwrap_or(ranks / 3),
        };
        if zone_depth > ranks {
            return Err(self.err(
                "promotion.zone_depth",
                format!("{zone_depth} is deeper than the board ({ranks} ranks)"),
            ));
        }
        let repetition = end.repetition.unwrap_or(4);
        if repetition == 1 {
            return Err(self.err("end.repetition", "must be 0 (off) or at least 2"));
        }
        let capture = spec.capture.clone().unwrap_or_default();
        let custodian = capture.custodian.unwrap_or(false);
        let custodian_corners = capture.custodian_corners.unwrap_or(false);
        if custodian_corners && !custodian {
            return Err(self.err(
                "capture.custodian_corners",
                "needs capture.custodian = true",
            ));
        }
        let connect = self.connect_rule(&end, files, ranks)?;
        Ok(GameRules {
            files,
            ranks,
            start,
            zone_depth,
            forbid_immobile_moves: prom.forbid_immobile.unwrap_or(!promote_by_capture),
            promotion_entering: prom.moves == Some(PromotionMoves::Entering),
            immobile_may_promote: prom.immobile_may_promote.unwrap_or(false),
            flip_on_capture: prom.flip_on == Some(FlipOn::Capture),
            drops: drops.enabled.unwrap_or(true),
            forbid_immobile_drops: drops.forbid_immobile.unwrap_or(true),
            promoted_drops: drops.promoted.unwrap_or(false),
            royal_drops: drops.royal.unwrap_or(false),
            unarmed_until_royal: drops.unarmed_until_royal.unwrap_or(false),
            stalemate: end.stalemate.unwrap_or(StalemateValue::Loss),
            repetition,
            repetition_result: end.repetition_result.unwrap_or(StalemateValue::Draw),
            repetition_for_sente: end.repetition_result_for == Some(RepetitionFor::Sente),
            perpetual_check_loses: end.perpetual_check != Some(PerpetualCheck::Draw),
            max_plies: end.max_plies.unwrap_or(0),
            bare_king: end.bare_king.unwrap_or(false),
            match_rule: spec.match_rule.unwrap_or(MatchRule::Single),
            moves_from_behind: spec.moves_from == Some(MovesFrom::Behind),
            lion_protected: lions.protected.unwrap_or(false),
            lion_counter_strike: lions.counter_strike.unwrap_or(false),
            custodian,
            custodian_corners,
            bare_pieces: end.bare_pieces.unwrap_or(0),
            connect: connect.0,
            connect_all_directions: connect.1,
            connect_outside_ranks: connect.2,
            passive_burn: capture.passive_burn.unwrap_or(false),
            royal_capture: end.royal_capture.unwrap_or(false),
            promote_by_capture,
        })
    }

    /// The n-in-a-row goal: its length (0: none), whether diagonals count, and the own ranks
    /// that do not count; the last two keys only with `end.connect`.
    fn connect_rule(&self, end: &EndSpec, files: u8, ranks: u8) -> Result<(u8, bool, u8)> {
        let n = end.connect.unwrap_or(0);
        let all = end.connect_directions == Some(ConnectDirections::All);
        let outside = end.connect_outside_ranks.unwrap_or(0);
        if n == 0 {
            for (key, set) in [
                ("end.connect_directions", end.connect_directions.is_some()),
                (
                    "end.connect_outside_ranks",
                    end.connect_outside_ranks.is_some(),
                ),
            ] {
                if set {
                    return Err(self.err(key, "needs end.connect at least 1"));
                }
            }
            return Ok((0, false, 0));
        }
        if n > files.max(ranks) {
            return Err(self.err(
                "end.connect",
                format!("{n} in a row does not fit on a {files}x{ranks} board"),
            ));
        }
        if outside >= ranks {
            return Err(self.err(
                "end.connect_outside_ranks",
                format!("{outside} leaves no rank of the {ranks} to count"),
            ));
        }
        Ok((n, all, outside))
    }

    /// The kinds: unpromoted in declaration order, then promoted forms.
    fn parse_kinds(&self, pieces: &[PieceSpec], files: u8, ranks: u8) -> Result<Kinds> {
        let mut ks = Kinds::default();
        for (i, p) in pieces.iter().enumerate() {
            let (kind, atoms, extra, drop) = self.base_kind(i, p, ranks, &ks.kinds)?;
            ks.kinds.push(kind);
            ks.atoms.push(atoms);
            ks.extras.push(extra);
            ks.drop_specs.push(drop);
        }
        for (i, p) in pieces.iter().enumerate() {
            if let (Some(pr), true) = (&p.promoted, ks.kinds[i].promotion != PromotionMode::None) {
                let (kind, atoms) = self.promoted_kind(i, pr, &ks.kinds[i])?;
                ks.kinds[i].promotes_to = Some(ks.kinds.len() as Kind);
                ks.kinds.push(kind);
                ks.atoms.push(atoms);
                ks.extras.push(Vec::new());
            }
        }
        let most = if files as usize * ranks as usize <= SMALL_BOARD {
            MAX_SMALL_KINDS
        } else {
            MAX_KINDS
        };
        if ks.kinds.len() > most {
            return Err(self.err(
                "pieces",
                format!(
                    "{} kinds with promoted forms; at most {most} on this board ({MAX_SMALL_KINDS} \
                     on boards of up to 256 squares, {MAX_KINDS} on larger ones)",
                    ks.kinds.len()
                ),
            ));
        }
        Ok(ks)
    }

    /// Piece `i` (unpromoted side), after the kinds `earlier`.
    fn base_kind(
        &self,
        i: usize,
        p: &PieceSpec,
        ranks: u8,
        earlier: &[KindInfo],
    ) -> Result<BasePiece> {
        let key = |k: &str| format!("pieces[{i}].{k}");
        let letter = self.piece_letter(p, i)?;
        if earlier.iter().any(|k| k.letter == letter) {
            return Err(self.err(
                key("letter"),
                format!("letter {:?} used twice", letter.to_string()),
            ));
        }
        // A piece with two-step moves may promote by its other moves; those never promote.
        let (atoms, legs) = self.moves(&p.betza, &key("betza"))?;
        let powers = self.powers(
            PowerKeys {
                rank: p.rank,
                range_capture: &p.range_capture,
                sweep: p.sweep,
                skip_first: &p.skip_first,
                skip_over: &p.skip_over,
                area: p.area,
                hook: &p.hook,
                burn: p.burn,
                lion_line: &p.lion_line,
                anywhere: p.leap_anywhere,
                shoot: &p.shoot,
                repeat: &p.repeat,
            },
            &key(""),
        )?;
        self.check_lion_line(&atoms, &powers.lion_line, &key("lion_line"))?;
        let promotion = self.promotion_mode(p, &key("promotion"))?;
        // A royal piece may promote only into another royal form (Maka dai-dai's king to
        // emperor): a side's royal pieces are counted by kind.
        if p.royal && p.promoted.as_ref().is_some_and(|pr| !pr.royal) {
            return Err(self.err(
                key("promoted"),
                "a royal piece can promote only into a royal form (promoted.royal = true)",
            ));
        }
        let d = p.drop.clone().unwrap_or_default();
        if p.royal && d != Default::default() {
            return Err(self.err(key("drop"), "a royal piece is never in hand"));
        }
        let max_per_file = self.drop_file_limit(&d, ranks, &key)?;
        let has_rays = atoms.iter().any(|m| m.range != 1);
        let extra = self.last_rank_moves(p, &key("last_rank_betza"))?;
        if p.move_max_per_file == Some(0) {
            return Err(self.err(key("move_max_per_file"), "must be at least 1"));
        }
        let kind = KindInfo {
            letter,
            promoted: false,
            name: p.name.clone().unwrap_or_else(|| letter.to_string()),
            betza: p.betza.clone(),
            royal: p.royal,
            promotes_to: None,
            demoted: i as Kind,
            promotion,
            hand_index: None,
            max_per_file,
            no_drop_mate: d.no_mate.unwrap_or(false),
            drop_must_check: d.must_check.unwrap_or(false),
            droppable: d.allowed.unwrap_or(true),
            has_rays,
            legs,
            lion: p.lion,
            bridge_exempt: false,
            bare_king_ignored: false,
            last_rank_betza: p.last_rank_betza.clone(),
            move_max_per_file: p.move_max_per_file,
            captured_as: i as Kind,
            contagion: None,
            powers,
            shadowed_leaps: false,
            links: Links::default(),
        };
        Ok((kind, atoms, extra, d))
    }

    /// The promoted form of piece `i`, whose unpromoted side is `base`.
    fn promoted_kind(
        &self,
        i: usize,
        pr: &PromotedSpec,
        base: &KindInfo,
    ) -> Result<(KindInfo, Vec<MoveAtom>)> {
        let (atoms, legs) = self.moves(&pr.betza, &format!("pieces[{i}].promoted.betza"))?;
        let powers = self.powers(
            PowerKeys {
                rank: pr.rank,
                range_capture: &pr.range_capture,
                sweep: pr.sweep,
                skip_first: &pr.skip_first,
                skip_over: &pr.skip_over,
                area: pr.area,
                hook: &pr.hook,
                burn: pr.burn,
                lion_line: &pr.lion_line,
                anywhere: pr.leap_anywhere,
                shoot: &pr.shoot,
                repeat: &pr.repeat,
            },
            &format!("pieces[{i}].promoted."),
        )?;
        self.check_lion_line(
            &atoms,
            &powers.lion_line,
            &format!("pieces[{i}].promoted.lion_line"),
        )?;
        let letter = base.letter;
        let kind = KindInfo {
            letter,
            promoted: true,
            name: pr.name.clone().unwrap_or_else(|| format!("+{letter}")),
            betza: pr.betza.clone(),
            royal: pr.royal,
            promotes_to: None,
            demoted: i as Kind,
            // A flipping piece flips back.
            promotion: match base.promotion {
                PromotionMode::Flip => PromotionMode::Flip,
                _ => PromotionMode::None,
            },
            hand_index: None,
            max_per_file: None,
            no_drop_mate: false,
            drop_must_check: false,
            droppable: false,
            has_rays: atoms.iter().any(|m| m.range != 1),
            legs,
            lion: pr.lion,
            bridge_exempt: false,
            bare_king_ignored: false,
            last_rank_betza: None,
            move_max_per_file: None,
            captured_as: i as Kind,
            contagion: None,
            powers,
            shadowed_leaps: false,
            links: Links::default(),
        };
        Ok((kind, atoms))
    }

    /// A Betza string's moves and two-step moves, checked (see [`Compiler::check_legs`]).
    fn moves(&self, text: &str, key: &str) -> Result<(Vec<MoveAtom>, Vec<TwoLeg>)> {
        let (atoms, legs) = betza::parse_all(text).map_err(|e| self.err(key, e.to_string()))?;
        self.check_legs(&atoms, &legs, key)?;
        Ok((atoms, legs))
    }

    /// A kind's powers beyond its Betza moves; `prefix` is its key path (`pieces[3].`).
    fn powers(&self, k: PowerKeys, prefix: &str) -> Result<Powers> {
        let key = |name: &str| format!("{prefix}{name}");
        let rank = k.rank.unwrap_or(0);
        let range_capture = match k.range_capture {
            Some(text) => self.power_rides(text, &key("range_capture"), false)?,
            None => Vec::new(),
        };
        if !range_capture.is_empty() && rank == 0 {
            return Err(self.err(key("rank"), "range_capture needs a rank of at least 1"));
        }
        if k.sweep && range_capture.is_empty() {
            return Err(self.err(key("sweep"), "needs range_capture lines to sweep"));
        }
        let skip_first = match k.skip_first {
            Some(text) => self.power_rides(text, &key("skip_first"), true)?,
            None => Vec::new(),
        };
        // Each jump: the rides it follows and the squares it passes over.
        let mut jumps: Vec<(Vec<Ride>, u8)> = Vec::new();
        match k.skip_over {
            Some(_) if k.skip_first.is_none() => {
                return Err(self.err(key("skip_over"), "needs skip_first rides to jump along"))
            }
            Some(over) if over.is_empty() => {
                return Err(self.err(key("skip_over"), "no jump: give at least one"))
            }
            Some(over) => {
                for item in over {
                    let (rides, n) = match item {
                        SkipOver::All(n) => (skip_first.clone(), *n),
                        SkipOver::Along(text) => {
                            let Some((n, rides)) = text
                                .split_once(':')
                                .and_then(|(n, r)| Some((n.trim().parse::<u8>().ok()?, r)))
                            else {
                                return Err(self.err(
                                    key("skip_over"),
                                    format!("{text:?}: write a number of squares, a colon and rides (\"3:fB\")"),
                                ));
                            };
                            (self.power_rides(rides.trim(), &key("skip_over"), true)?, n)
                        }
                    };
                    let most = MAX_SIDE - 2;
                    if n == 0 || n > most {
                        return Err(self.err(
                            key("skip_over"),
                            format!("{n} squares: a jump passes over 1 to {most}"),
                        ));
                    }
                    jumps.push((rides, n));
                }
            }
            None => jumps.push((skip_first.clone(), 1)),
        }
        let area = k.area.unwrap_or(0);
        if area > MAX_AREA {
            return Err(self.err(key("area"), format!("at most {MAX_AREA} steps, got {area}")));
        }
        let hook = match k.hook {
            Some(text) => self.power_rides(text, &key("hook"), false)?,
            None => Vec::new(),
        };
        let lion_line = match k.lion_line {
            Some(text) => self.power_rides(text, &key("lion_line"), true)?,
            None => Vec::new(),
        };
        if let Some(&(_, _, n)) = lion_line.iter().find(|r| !(2..=3).contains(&r.2)) {
            let got = match n {
                0 => "no range".to_string(),
                n => format!("range {n}"),
            };
            return Err(self.err(
                key("lion_line"),
                format!("a Lion line has 2 or 3 steps (Q3: the Lion Dog), got {got}"),
            ));
        }
        let mut powers = Powers {
            anywhere: k.anywhere,
            lion_line,
            hook: hook.iter().map(|&(dx, dy, _)| (dx, dy)).collect(),
            rank,
            range_capture: range_capture.iter().map(|&(dx, dy, _)| (dx, dy)).collect(),
            sweep: k.sweep,
            // Each jump over n squares, then the ride from square n + 1 up to the range.
            skip_first: jumps
                .iter()
                .flat_map(|(rides, n)| {
                    rides
                        .iter()
                        .map(move |&(dx, dy, range)| (dx, dy, n + 1, range))
                })
                .filter(|&(_, _, first, range)| range == 0 || range >= first)
                .collect(),
            area,
            burn: k.burn,
            repeat: self.repeat_power(k.repeat, &key("repeat"))?,
            shoot: self.shoot_power(k.shoot, &key("shoot"))?,
            moving: false,
        };
        powers.moving = powers.any_moves();
        Ok(powers)
    }

    /// Checks that a piece with Lion power along a line jumps, by its Betza moves, to every
    /// square of the line (moving or capturing): the power only adds the moves that also take
    /// pieces on the way, so the plain jumps and the attacks stay in the move tables.
    fn check_lion_line(&self, atoms: &[MoveAtom], lines: &[(i8, i8, u8)], key: &str) -> Result<()> {
        for &(dx, dy, n) in lines {
            for k in 1..=n as i8 {
                let jumps = atoms.iter().any(|a| {
                    let reaches = match k {
                        1 => (a.dx, a.dy) == (dx, dy),
                        _ => (a.dx, a.dy) == (dx * k, dy * k) && a.range == 1,
                    };
                    reaches && a.can_move && a.can_capture && a.hops & 1 != 0
                });
                if !jumps {
                    return Err(self.err(
                        key,
                        format!(
                            "the line ({dx}, {dy}) needs a jump to its square {k} steps away in \
                             betza (a Lion Dog's lion_line Q3 goes with the jumps KADGH)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The rides of a power: plain orthogonal or diagonal riders (`ranged`: a range of at
    /// least 2 allowed), as (dx, dy, range; 0 = unlimited).
    fn power_rides(&self, text: &str, key: &str, ranged: bool) -> Result<Vec<Ride>> {
        let (atoms, legs) = betza::parse_all(text).map_err(|e| self.err(key, e.to_string()))?;
        let plain = |a: &MoveAtom| {
            a.can_move
                && a.can_capture
                && a.hops == 1
                && (a.dx == 0 || a.dy == 0 || a.dx.abs() == a.dy.abs())
                && a.dx.abs().max(a.dy.abs()) == 1
                && (a.range == 0 || (ranged && a.range >= 2))
        };
        if !legs.is_empty() || atoms.is_empty() || !atoms.iter().all(plain) {
            let what = match ranged {
                true => "unlimited or ranged (2 or more)",
                false => "unlimited",
            };
            return Err(self.err(
                key,
                format!("{text:?}: only plain {what} orthogonal or diagonal rides (R, B, Q) are allowed"),
            ));
        }
        Ok(atoms.iter().map(|a| (a.dx, a.dy, a.range)).collect())
    }

    /// The promotion mode of a piece: `optional` when it has a promoted form and no mode.
    fn promotion_mode(&self, p: &PieceSpec, key: &str) -> Result<PromotionMode> {
        match (p.promotion, &p.promoted) {
            (None, None) | (Some(PromotionMode::None), _) => Ok(PromotionMode::None),
            (None, Some(_)) => Ok(PromotionMode::Optional),
            (Some(m), Some(_)) => Ok(m),
            (Some(m), None) => {
                Err(self.err(key, format!("{:?} needs a `promoted` form", m.as_str())))
            }
        }
    }

    /// The per-file drop limit (`nifu`, `max_per_file`), after checking the forbidden ranks.
    fn drop_file_limit(
        &self,
        d: &PieceDropSpec,
        ranks: u8,
        key: &dyn Fn(&str) -> String,
    ) -> Result<Option<u8>> {
        if let Some(r) = &d.forbidden_ranks {
            if let Some(bad) = r.iter().find(|&&r| r == 0 || r > ranks) {
                return Err(self.err(
                    key("drop.forbidden_ranks"),
                    format!("rank {bad} is not between 1 and {ranks}"),
                ));
            }
        }
        match (d.nifu, d.max_per_file) {
            (_, Some(0)) => Err(self.err(
                key("drop.max_per_file"),
                "must be at least 1 (use drop.allowed = false to forbid drops)",
            )),
            (Some(true), Some(n)) if n != 1 => Err(self.err(
                key("drop.max_per_file"),
                format!("nifu = true means max_per_file = 1, got {n}: give one of them"),
            )),
            (Some(true), _) => Ok(Some(1)),
            (_, n) => Ok(n),
        }
    }

    /// The extra moves of a piece on its last rank (none without `last_rank_betza`).
    fn last_rank_moves(&self, p: &PieceSpec, key: &str) -> Result<Vec<MoveAtom>> {
        let Some(b) = &p.last_rank_betza else {
            return Ok(Vec::new());
        };
        let (atoms, legs) = betza::parse_all(b).map_err(|e| self.err(key, e.to_string()))?;
        if !legs.is_empty() {
            return Err(self.err(key, "two-step moves are not supported here"));
        }
        Ok(atoms)
    }

    /// Points the pieces with `promotes_to` at the existing kind they promote into.
    fn link_promotes_to(
        &self,
        pieces: &[PieceSpec],
        rules: &GameRules,
        kinds: &mut [KindInfo],
    ) -> Result<()> {
        for (i, p) in pieces.iter().enumerate() {
            let Some(letter) = &p.promotes_to else {
                continue;
            };
            let key = format!("pieces[{i}].promotes_to");
            let refuse = |why: &str| Err(self.err(&key, why));
            if p.promoted.is_some() {
                return refuse("give either `promoted` or `promotes_to`, not both");
            }
            if !rules.promote_by_capture || rules.drops {
                return refuse(
                    "needs promotion by capture ([promotion] moves = \"capture\") and no drops",
                );
            }
            if p.contagious {
                return refuse("a contagious piece needs a promoted form of its own");
            }
            let target = Letter::parse(letter)
                .and_then(|(l, _)| kinds[..pieces.len()].iter().position(|k| k.letter == l))
                .ok_or_else(|| {
                    self.err(&key, format!("{letter:?} is not the letter of a piece"))
                })?;
            if target == i {
                return refuse("names the piece itself");
            }
            let to = &pieces[target];
            if to.promoted.is_some() || to.promotes_to.is_some() {
                return refuse(
                    "names a piece that promotes itself: a piece promoted into it would promote \
                     again",
                );
            }
            if p.royal && !to.royal {
                return refuse("a royal piece can promote only into a royal piece");
            }
            kinds[i].promotes_to = Some(target as Kind);
        }
        Ok(())
    }

    /// The steps of a compound power's Betza moves: leaps and rides only.
    fn compound_steps(&self, text: &str, key: &str) -> Result<Vec<Step>> {
        let (atoms, legs) = betza::parse_all(text).map_err(|e| self.err(key, e.to_string()))?;
        if !legs.is_empty() || atoms.iter().any(|a| a.hops != 1) {
            return Err(self.err(
                key,
                "only leaps and rides (no two-step moves, no jumps over pieces)",
            ));
        }
        if atoms.is_empty() {
            return Err(self.err(key, "no move"));
        }
        Ok(atoms
            .iter()
            .map(|a| Step {
                dx: a.dx,
                dy: a.dy,
                range: a.range,
                can_move: a.can_move,
                can_capture: a.can_capture,
            })
            .collect())
    }

    /// A `repeat` power.
    fn repeat_power(&self, r: &Option<RepeatSpec>, key: &str) -> Result<Option<Compound>> {
        let Some(r) = r else { return Ok(None) };
        if !(2..=MAX_REPEAT).contains(&r.times) {
            return Err(self.err(
                format!("{key}.times"),
                format!("2 to {MAX_REPEAT} moves a turn, got {}", r.times),
            ));
        }
        Ok(Some(Compound {
            steps: self.compound_steps(&r.betza, &format!("{key}.betza"))?,
            times: r.times,
            line: r.line,
            ..Compound::default()
        }))
    }

    /// A `shoot` power.
    fn shoot_power(&self, s: &Option<ShootSpec>, key: &str) -> Result<Option<Compound>> {
        let Some(s) = s else { return Ok(None) };
        if s.range == 0 || s.range > MAX_SIDE - 1 {
            return Err(self.err(
                format!("{key}.range"),
                format!("1 to {} squares, got {}", MAX_SIDE - 1, s.range),
            ));
        }
        let targets = s.targets.unwrap_or(1);
        if !(1..=2).contains(&targets) {
            return Err(self.err(format!("{key}.targets"), format!("1 or 2, got {targets}")));
        }
        let times = s.times.unwrap_or(1);
        if !(1..=2).contains(&times) {
            return Err(self.err(format!("{key}.times"), format!("1 or 2, got {times}")));
        }
        Ok(Some(Compound {
            steps: self.compound_steps(&s.betza, &format!("{key}.betza"))?,
            times,
            line: false,
            shot_range: s.range,
            over: s.over,
            targets,
        }))
    }

    /// Resolves a list of letters (`+L`: a promoted form) to kinds.
    fn kind_list(&self, letters: &[String], kinds: &[KindInfo], key: &str) -> Result<Vec<Kind>> {
        letters
            .iter()
            .enumerate()
            .map(|(j, l)| {
                let (promoted, text) = match l.strip_prefix('+') {
                    Some(t) => (true, t),
                    None => (false, l.as_str()),
                };
                Letter::parse(text)
                    .and_then(|(letter, _)| {
                        kinds
                            .iter()
                            .position(|k| k.letter == letter && k.promoted == promoted)
                    })
                    .map(|k| k as Kind)
                    .ok_or_else(|| {
                        self.err(
                            format!("{key}[{j}]"),
                            format!("{l:?} is not the letter of a piece (or of a promoted form)"),
                        )
                    })
            })
            .collect()
    }

    /// Sets each kind's `spares`, `displaces_only` and `promotes_capturing`.
    fn link_capture_lists(&self, pieces: &[PieceSpec], kinds: &mut [KindInfo]) -> Result<()> {
        for (i, p) in pieces.iter().enumerate() {
            let key = |k: &str| format!("pieces[{i}].{k}");
            let promoted = kinds[i].promotes_to;
            let sides = [
                (i, p.spares.as_deref(), p.displaces_only.as_deref(), key("")),
                (
                    promoted.map_or(usize::MAX, |k| k as usize),
                    p.promoted.as_ref().and_then(|q| q.spares.as_deref()),
                    p.promoted
                        .as_ref()
                        .and_then(|q| q.displaces_only.as_deref()),
                    key("promoted."),
                ),
            ];
            for (k, spares, only, prefix) in sides {
                if k == usize::MAX {
                    continue;
                }
                if let Some(l) = spares {
                    kinds[k].links.spares = self.kind_list(l, kinds, &format!("{prefix}spares"))?;
                }
                if let Some(l) = only {
                    kinds[k].links.displaces_only =
                        Some(self.kind_list(l, kinds, &format!("{prefix}displaces_only"))?);
                }
            }
            self.link_fates(i, p, kinds)?;
            if let Some(l) = &p.promotes_capturing {
                let list = self.kind_list(l, kinds, &key("promotes_capturing"))?;
                if promoted.is_none() {
                    return Err(self.err(
                        key("promotes_capturing"),
                        "needs a promoted form (or promotes_to) to promote into",
                    ));
                }
                kinds[i].links.promotes_capturing = list;
            }
        }
        Ok(())
    }

    /// Piece `i`'s `without`, `promotes_with`, `promotion_effects`, `reverts_near` and
    /// `shot_from` keys.
    fn link_fates(&self, i: usize, p: &PieceSpec, kinds: &mut [KindInfo]) -> Result<()> {
        let key = |k: &str| format!("pieces[{i}].{k}");
        let promoted = kinds[i].promotes_to.map(|k| k as usize);
        let one = |letter: &str, key: &str, kinds: &[KindInfo]| -> Result<Kind> {
            Ok(self.kind_list(&[letter.to_string()], kinds, key)?[0])
        };
        if let Some(w) = &p.without {
            let need = one(&w.letter, &key("without.letter"), kinds)?;
            let need = kinds[need as usize].demoted;
            let atoms = betza::parse(&w.loses)
                .map_err(|e| self.err(key("without.loses"), e.to_string()))?;
            let reach = MAX_SIDE as i32;
            let mut lost = Vec::new();
            for a in &atoms {
                let last = if a.range == 0 { reach } else { a.range as i32 };
                lost.extend((1..=last).map(|n| ((a.dx as i32 * n) as i8, (a.dy as i32 * n) as i8)));
            }
            kinds[i].links.without = Some((need, lost));
        }
        if let Some(l) = &p.promotes_with {
            let need = one(l, &key("promotes_with"), kinds)?;
            let need = kinds[need as usize].demoted;
            let Some(pk) = promoted else {
                return Err(self.err(key("promotes_with"), "needs a promoted form"));
            };
            kinds[i].links.promotes_with = Some(need);
            kinds[pk].links.promotes_with = Some(need);
        }
        if let Some(e) = &p.promotion_effects {
            if promoted.is_none() {
                return Err(self.err(key("promotion_effects"), "needs a promoted form"));
            }
            let ups = self.kind_list(&e.promotes, kinds, &key("promotion_effects.promotes"))?;
            if let Some(j) = ups.iter().position(|&k| {
                kinds[k as usize].promoted || kinds[k as usize].promotes_to.is_none()
            }) {
                return Err(self.err(
                    format!("{}[{j}]", key("promotion_effects.promotes")),
                    "name an unpromoted piece with a promoted form",
                ));
            }
            let kills = self.kind_list(&e.kills, kinds, &key("promotion_effects.kills"))?;
            kinds[i].links.promotion_effects = Some((ups, kills));
        }
        kinds[i].links.shot_from = p.shot_from.unwrap_or(0);
        if let (Some(pr), Some(pk)) = (&p.promoted, promoted) {
            kinds[pk].links.shot_from = pr.shot_from.unwrap_or(0);
            if let Some(r) = &pr.reverts_near {
                let near = one(&r.letter, &key("promoted.reverts_near.letter"), kinds)?;
                if r.within == 0 {
                    return Err(self.err(key("promoted.reverts_near.within"), "at least 1"));
                }
                kinds[pk].links.reverts_near = Some((near, r.within));
            }
        }
        Ok(())
    }

    /// The rules of compound moves, capture limits, capture promotions and the royal reserve:
    /// all need `end.royal_capture` (no check test knows them); then builds the table of
    /// compound move types.
    fn check_compound(
        &self,
        spec: &VariantSpec,
        pieces: &[PieceSpec],
        v: &mut Variant,
    ) -> Result<()> {
        let key_of = |i: usize, name: &str| match i < pieces.len() {
            true => format!("pieces[{i}].{name}"),
            false => format!("pieces[].promoted.{name}"),
        };
        for (i, k) in v.kinds.iter().enumerate() {
            let uses = [
                (k.powers.shoot.is_some(), "shoot"),
                (k.powers.repeat.is_some(), "repeat"),
                (!k.links.spares.is_empty(), "spares"),
                (k.links.displaces_only.is_some(), "displaces_only"),
                (k.links.without.is_some(), "without"),
                (
                    k.links.promotes_with.is_some() && !k.promoted,
                    "promotes_with",
                ),
                (k.links.promotion_effects.is_some(), "promotion_effects"),
                (k.links.reverts_near.is_some(), "reverts_near"),
            ];
            for (used, name) in uses {
                if used && !v.royal_capture {
                    return Err(self.err(
                        key_of(i, name),
                        "needs end.royal_capture = true (captured royal pieces, no check rule)",
                    ));
                }
            }
            if k.powers.compound() && (!k.legs.is_empty() || !k.powers.lion_line.is_empty()) {
                return Err(self.err(
                    key_of(
                        i,
                        if k.powers.shoot.is_some() {
                            "shoot"
                        } else {
                            "repeat"
                        },
                    ),
                    "cannot be combined with two-step moves or lion_line",
                ));
            }
        }
        let reserve = spec.end.as_ref().and_then(|e| e.royal_reserve.as_deref());
        if let Some(l) = reserve {
            if !v.royal_capture {
                return Err(self.err("end.royal_reserve", "needs end.royal_capture = true"));
            }
            let list = self.kind_list(l, &v.kinds, "end.royal_reserve")?;
            if let Some(j) = list
                .iter()
                .position(|&k| v.kinds[k as usize].promoted || v.kinds[k as usize].royal)
            {
                return Err(self.err(
                    format!("end.royal_reserve[{j}]"),
                    "name unpromoted pieces that are not royal (their promoted forms count too)",
                ));
            }
            v.royal_reserve = list;
        }
        let mut types = Vec::new();
        let mut budget = MAX_COMPOUND_WALK;
        for (i, k) in v.kinds.iter().enumerate() {
            for c in [&k.powers.repeat, &k.powers.shoot].into_iter().flatten() {
                let size = (v.files, v.ranks);
                let done = crate::compound::enumerate(
                    c,
                    size,
                    &mut budget,
                    MAX_COMPOUND_TYPES,
                    &mut types,
                );
                types.sort();
                types.dedup();
                if !done || types.len() > MAX_COMPOUND_TYPES {
                    let name = if c.shot_range > 0 { "shoot" } else { "repeat" };
                    return Err(self.err(
                        key_of(i, name),
                        format!(
                            "its pieces' compound moves make more than {MAX_COMPOUND_TYPES} \
                             types (each a policy plane); lower a range, targets or times"
                        ),
                    ));
                }
            }
        }
        let table = CompoundTable::new(types);
        if table.largest_group() > u16::MAX as usize + 1 {
            return Err(self.err(
                "pieces",
                "too many compound move types ending on one square",
            ));
        }
        v.has_compound = !table.is_empty();
        v.compound = table;
        v.has_capture_limits = v
            .kinds
            .iter()
            .any(|k| !k.links.spares.is_empty() || k.links.displaces_only.is_some());
        v.has_capture_promotions = v
            .kinds
            .iter()
            .any(|k| !k.links.promotes_capturing.is_empty());
        v.has_without = v.kinds.iter().any(|k| k.links.without.is_some());
        let mut near = Vec::new();
        for (i, k) in v.kinds.iter().enumerate() {
            if let Some((t, _)) = k.links.reverts_near {
                for x in [i as Kind, t] {
                    let base = v.kinds[x as usize].demoted;
                    near.extend([base].into_iter().chain(v.kinds[base as usize].promotes_to));
                }
            }
        }
        near.sort_unstable();
        near.dedup();
        v.near_kinds = near;
        v.has_fates = v.kinds.iter().any(|k| {
            k.links.promotes_with.is_some()
                || k.links.promotion_effects.is_some()
                || k.links.reverts_near.is_some()
        });
        Ok(())
    }

    /// Sets the kind a captor of each contagious piece (either side of it) becomes: its
    /// promoted form, which must exist and not be royal.
    fn link_contagion(&self, pieces: &[PieceSpec], kinds: &mut [KindInfo]) -> Result<()> {
        for (i, _) in pieces.iter().enumerate().filter(|(_, p)| p.contagious) {
            let key = format!("pieces[{i}].contagious");
            let Some(to) = kinds[i].promotes_to else {
                return Err(self.err(&key, "needs a promoted form for the captor to become"));
            };
            if kinds[to as usize].royal {
                return Err(self.err(
                    &key,
                    "its promoted form is royal; a captor cannot become it",
                ));
            }
            kinds[i].contagion = Some(to);
            kinds[to as usize].contagion = Some(to);
        }
        Ok(())
    }

    /// Sets each kind's `captured_as` from `pieces[].captured_as`; promoted forms follow their
    /// unpromoted side.
    fn link_captured_as(&self, pieces: &[PieceSpec], kinds: &mut [KindInfo]) -> Result<()> {
        let base_count = pieces.len();
        for (i, p) in pieces.iter().enumerate() {
            let Some(letter) = &p.captured_as else {
                continue;
            };
            let key = format!("pieces[{i}].captured_as");
            let target = Letter::parse(letter)
                .and_then(|(l, _)| kinds[..base_count].iter().position(|k| k.letter == l))
                .ok_or_else(|| {
                    self.err(&key, format!("{letter:?} is not the letter of a piece"))
                })?;
            if kinds[target].royal || pieces[target].captured_as.is_some() || target == i {
                return Err(self.err(
                    &key,
                    "must name another piece that is not royal and keeps its own kind in hand",
                ));
            }
            kinds[i].captured_as = target as Kind;
        }
        for i in base_count..kinds.len() {
            kinds[i].captured_as = kinds[kinds[i].demoted as usize].captured_as;
        }
        Ok(())
    }

    /// The rules that concern several keys or kinds: borrowed moves against two-step and
    /// last-rank moves, the Lion rules' letters and pieces, the bare-king exceptions.
    fn check_kind_rules(
        &self,
        spec: &VariantSpec,
        rules: &GameRules,
        kinds: &mut [KindInfo],
    ) -> Result<()> {
        let behind = rules.moves_from_behind;
        if behind && kinds.iter().any(|k| k.last_rank_betza.is_some()) {
            return Err(self.err(
                "moves_from",
                "borrowed moves and last-rank moves cannot be combined",
            ));
        }
        if behind && kinds.iter().any(|k| !k.legs.is_empty()) {
            return Err(self.err(
                "moves_from",
                "borrowed moves and two-step moves cannot be combined",
            ));
        }
        let exempt = spec.lions.as_ref().and_then(|l| l.bridge_exempt.as_deref());
        for (i, letter) in exempt.unwrap_or_default().iter().enumerate() {
            let key = format!("lions.bridge_exempt[{i}]");
            match base_kind_mut(kinds, letter) {
                Some(k) => k.bridge_exempt = true,
                None => {
                    return Err(self.err(key, format!("{letter:?} is not the letter of a piece")))
                }
            }
        }
        let ignored = spec
            .end
            .as_ref()
            .and_then(|e| e.bare_king_ignores.as_deref());
        for (i, letter) in ignored.unwrap_or_default().iter().enumerate() {
            let key = format!("end.bare_king_ignores[{i}]");
            if !rules.bare_king {
                return Err(self.err(key, "needs end.bare_king = true"));
            }
            match base_kind_mut(kinds, letter) {
                Some(k) if !k.royal => k.bare_king_ignored = true,
                Some(_) => return Err(self.err(key, format!("{letter:?} is a royal piece"))),
                None => {
                    return Err(self.err(key, format!("{letter:?} is not the letter of a piece")))
                }
            }
        }
        let lion_rules = rules.lion_protected || rules.lion_counter_strike;
        if lion_rules && !kinds.iter().any(|k| k.lion) {
            return Err(self.err("lions", "Lion rules without any piece marked lion = true"));
        }
        Ok(())
    }

    /// Two-step moves must end where a plain leap of the piece could capture (or back on the
    /// start square), so that the attack tables, built from single moves, stay exact.
    fn check_legs(&self, atoms: &[MoveAtom], legs: &[TwoLeg], key: &str) -> Result<()> {
        for l in legs {
            let (dx, dy) = (l.dx1 + l.dx2, l.dy1 + l.dy2);
            let leaps = atoms.iter().any(|a| {
                a.range == 1 && a.can_capture && a.hops & 1 != 0 && (a.dx, a.dy) == (dx, dy)
            });
            if (dx, dy) != (0, 0) && !leaps {
                return Err(self.err(
                    key,
                    format!(
                        "a two-step move ends at ({dx}, {dy}), where the piece has no capturing \
                         leap; add that leap (the Lion is KNADcaKmabK)"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn piece_letter(&self, p: &PieceSpec, i: usize) -> Result<Letter> {
        match Letter::parse(&p.letter) {
            Some((l, _)) => Ok(l),
            None => Err(self.err(
                format!("pieces[{i}].letter"),
                format!(
                    "must be one ASCII letter, optionally followed by one of {}, got {:?}",
                    Letter::MARKS.iter().collect::<String>(),
                    p.letter
                ),
            )),
        }
    }

    /// The start position must parse; its material bounds every other position's, with what
    /// promotion into a piece of the start position (`promotes_to`) and contagion can add.
    fn check_start(&self, mut v: Variant) -> Result<Variant> {
        let start_pos = crate::Position::from_sfen_with(Arc::new(v.clone()), &v.start_sfen)
            .map_err(|e| self.err("start", e.to_string()))?;
        let mut most = start_pos.material();
        let all: usize = most.iter().sum();
        for (k, info) in v.kinds.iter().enumerate() {
            match info.promotes_to {
                // A piece that promotes into a piece of the start position adds to its count.
                Some(to) if !info.promoted && !v.kinds[to as usize].promoted => {
                    most[to as usize] += most[k];
                }
                _ => {}
            }
            // Any piece may become a contagious piece's promoted form (counted as that piece).
            if info.contagion.is_some() && !info.promoted {
                most[k] = all;
            }
        }
        v.max_material = most;
        Ok(v)
    }
}

/// The unpromoted kind with this letter as written in a config (`"P"`, `"N'"`).
fn base_kind_mut<'k>(kinds: &'k mut [KindInfo], letter: &str) -> Option<&'k mut KindInfo> {
    let (l, _) = Letter::parse(letter)?;
    kinds.iter_mut().find(|k| !k.promoted && k.letter == l)
}

/// Gives hand slots to the unpromoted kinds that go to hand as themselves (royal ones only
/// with royal drops), and returns them in hand order; none without drops.
fn hand_kinds(kinds: &mut [KindInfo], base_count: usize, rules: &GameRules) -> Vec<Kind> {
    let mut hand = Vec::new();
    if !rules.drops {
        return hand;
    }
    for (i, k) in kinds.iter_mut().enumerate().take(base_count) {
        // A piece that goes to hand as another kind has no hand slot of its own.
        if (!k.royal || rules.royal_drops) && k.captured_as as usize == i {
            k.hand_index = Some(hand.len());
            hand.push(i as Kind);
        }
    }
    hand
}

/// The variant with its rules and kinds, its tables still empty.
fn unbuilt(
    spec: &VariantSpec,
    r: GameRules,
    kinds: Vec<KindInfo>,
    hand_kinds: Vec<Kind>,
    has_hoppers: bool,
) -> Variant {
    Variant {
        name: spec.name.clone().unwrap_or_else(|| "variant".into()),
        spec: spec.clone(),
        files: r.files,
        ranks: r.ranks,
        start_sfen: r.start,
        several_royals: kinds.iter().filter(|k| k.royal).count() > 1,
        has_legs: kinds.iter().any(|k| !k.legs.is_empty()),
        has_last_rank_moves: kinds.iter().any(|k| k.last_rank_betza.is_some()),
        has_move_file_limits: kinds.iter().any(|k| k.move_max_per_file.is_some()),
        has_powers: kinds.iter().any(|k| k.powers.any()),
        has_burns: kinds.iter().any(|k| k.powers.burn),
        has_sweeps: kinds.iter().any(|k| k.powers.sweep),
        has_shadowed_leaps: false,
        has_lion_lines: kinds.iter().any(|k| !k.powers.lion_line.is_empty()),
        has_contagion: kinds.iter().any(|k| k.contagion.is_some()),
        compound: Default::default(),
        has_compound: false,
        has_capture_limits: false,
        has_capture_promotions: false,
        has_without: false,
        has_fates: false,
        near_kinds: Vec::new(),
        royal_reserve: Vec::new(),
        kinds,
        hand_kinds,
        zone_depth: r.zone_depth,
        forbid_immobile_moves: r.forbid_immobile_moves,
        drops: r.drops,
        forbid_immobile_drops: r.forbid_immobile_drops,
        stalemate: r.stalemate,
        repetition: r.repetition,
        repetition_result: r.repetition_result,
        repetition_for_sente: r.repetition_for_sente,
        perpetual_check_loses: r.perpetual_check_loses,
        max_plies: r.max_plies,
        bare_king: r.bare_king,
        match_rule: r.match_rule,
        has_hoppers,
        moves_from_behind: r.moves_from_behind,
        flip_on_capture: r.flip_on_capture,
        promoted_drops: r.promoted_drops,
        royal_drops: r.royal_drops,
        unarmed_until_royal: r.unarmed_until_royal,
        promotion_entering: r.promotion_entering,
        immobile_may_promote: r.immobile_may_promote,
        lion_protected: r.lion_protected,
        lion_counter_strike: r.lion_counter_strike,
        custodian: r.custodian,
        custodian_corners: r.custodian_corners,
        bare_pieces: r.bare_pieces,
        connect: r.connect,
        connect_all_directions: r.connect_all_directions,
        connect_outside_ranks: r.connect_outside_ranks,
        passive_burn: r.passive_burn,
        royal_capture: r.royal_capture,
        promote_by_capture: r.promote_by_capture,
        n: r.files as usize * r.ranks as usize,
        legs: Vec::new(),
        last_rank_rays: Vec::new(),
        last_rank: [SquareSet::EMPTY; 2],
        dirs: Vec::new(),
        dir_opposite: Vec::new(),
        ray_start: Vec::new(),
        ray_len: Vec::new(),
        ray_squares: Vec::new(),
        leap_index: Vec::new(),
        leaps: Vec::new(),
        rays: Vec::new(),
        leap_attack_index: Vec::new(),
        leap_attackers: Vec::new(),
        kind_sets: Vec::new(),
        small: Default::default(),
        ray_attack: Vec::new(),
        ray_scans: [Vec::new(), Vec::new()],
        immobile: Vec::new(),
        dead_squares: [0; 2],
        max_material: Vec::new(),
        zone: [SquareSet::EMPTY; 2],
        drop_squares: Vec::new(),
        file_squares: Vec::new(),
        leap_checks: Vec::new(),
        all_squares: SquareSet::EMPTY,
        z_board: Vec::new(),
        z_half: 128,
        z_hand: Vec::new(),
        z_side: 0,
    }
}
