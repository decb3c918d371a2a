//! `Position::wins_at_once`, the one-move win test of the search's mate check: hand-set
//! positions, and over random games of several variants the same verdict as playing the move
//! and asking `outcome()` (for every win but a stalemate or a repetition, which it does not
//! look for).

use rules::{Color, EndReason, Position, SplitMix64};

mod support;
use support::*;

/// The moves of `p` that win at once, as USI.
fn winning(p: &mut Position) -> Vec<String> {
    let moves = p.legal_moves();
    let wins: Vec<_> = moves.into_iter().filter(|&m| p.wins_at_once(m)).collect();
    let mut out: Vec<String> = wins.into_iter().map(|m| p.move_to_usi(m)).collect();
    out.sort();
    out
}

#[test]
fn a_drop_mate_is_the_one_winning_move() {
    // Minishogi: gote's king in the corner 1a, sente's pawn on 1c, a gold in hand. G*1b
    // mates (the pawn guards it); G*2b and G*2a are taken by the king, 1c1b+ too.
    let v = builtin("minishogi");
    let mut p = Position::from_sfen(&v, "4k/5/4P/5/K4 b G 1").unwrap();
    let before = (p.to_sfen(), p.hash());
    assert_eq!(winning(&mut p), ["G*1b"]);
    assert_eq!((p.to_sfen(), p.hash()), before, "the position is unchanged");
    // With a silver instead no move mates (S*1b leaves 2b; S*2b is taken).
    let mut p = Position::from_sfen(&v, "4k/5/4P/5/K4 b S 1").unwrap();
    assert_eq!(winning(&mut p), Vec::<String>::new());
    // A pawn in hand: P*1b would mate but is illegal (a pawn on the file already), and the
    // pawn's own step to 1b is taken.
    let mut p = Position::from_sfen(&v, "4k/5/4P/5/K4 b P 1").unwrap();
    assert_eq!(winning(&mut p), Vec::<String>::new());
}

#[test]
fn a_pawn_drop_mate_is_not_a_winning_move() {
    // Gote's king on 1a boxed in by its own rook on 2a and pawn on 2b, neither of which
    // reaches 1b; sente's gold on 1c guards 1b. P*1b would mate, and a drop mate by a pawn
    // is illegal; 1c1b is taken by the king: no winning move.
    let v = builtin("minishogi");
    let mut p = Position::from_sfen(&v, "3rk/3p1/4G/5/K4 b P 1").unwrap();
    assert!(p.legal_moves().iter().all(|&m| p.move_to_usi(m) != "P*1b"));
    assert_eq!(winning(&mut p), Vec::<String>::new());
}

#[test]
fn goals_of_the_variant_win_at_once_without_a_check() {
    // Hasami shogi: taking gote's man on 5d (8c5c encloses it against 5e) leaves gote one man.
    let v = builtin("hasami");
    let mut p = composed(
        &v,
        &[
            ("5e", "P"),
            ("8c", "P"),
            ("1i", "P"),
            ("5d", "p"),
            ("9a", "p"),
        ],
        "b -",
    );
    assert_eq!(winning(&mut p), ["8c5c"]);
    play(&mut p, "8c5c");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::BarePieces));
}

#[test]
fn the_verdict_is_that_of_outcome_over_random_games() {
    let mut rng = SplitMix64(7);
    let mut checked = [0usize; 2];
    for name in [
        "minishogi",
        "shogi",
        "kyoto",
        "judkins",
        "hasami",
        "dai-hasami",
        "chu",
        "tenjiku",
        "dai-dai",
        "maka-dai-dai",
        "tai",
        "taikyoku",
        "ko",
    ] {
        let v = builtin(name);
        for _game in 0..12 {
            let mut p = Position::start(v.clone());
            for _ply in 0..120 {
                if p.outcome().is_some() {
                    break;
                }
                let moves = p.legal_moves();
                let us = p.side_to_move();
                for &m in &moves {
                    let before = p.hash();
                    let says = p.wins_at_once(m);
                    assert_eq!(p.hash(), before, "{name}: unchanged");
                    p.make_move(m);
                    let o = p.outcome();
                    p.unmake_move();
                    let wins = o.is_some_and(|o| o.winner == Some(us));
                    let by_rule = o.is_some_and(|o| {
                        !matches!(
                            o.reason,
                            EndReason::Stalemate
                                | EndReason::Repetition
                                | EndReason::PerpetualCheck
                        )
                    });
                    let sfen = p.to_sfen();
                    let usi = p.move_to_usi(m);
                    if says {
                        assert!(wins, "{name} {sfen} {usi}: a win it is not ({o:?})");
                    } else {
                        assert!(!(wins && by_rule), "{name} {sfen} {usi}: missed {o:?}");
                    }
                    checked[says as usize] += 1;
                }
                p.make_move(moves[rng.below(moves.len())]);
            }
        }
    }
    assert!(checked[1] > 20, "winning moves seen: {checked:?}");
}

/// Full width: whether the side to move wins within `plies` plies, trying every move at its
/// turns and every reply at the opponent's. `checks_only`: the mirror of `forced_win`, which
/// tries only checks before the last move and does not look for wins by stalemate or
/// repetition without a check.
fn wins_within(p: &mut Position, plies: u32, checks_only: bool) -> bool {
    let us = p.side_to_move();
    let moves = p.legal_moves();
    let counts = |o: rules::Outcome, check: bool| {
        o.winner == Some(us)
            && !(checks_only
                && !check
                && matches!(
                    o.reason,
                    EndReason::Stalemate | EndReason::Repetition | EndReason::PerpetualCheck
                ))
    };
    moves.into_iter().any(|m| {
        p.make_move(m);
        let won = match p.outcome() {
            Some(o) => counts(o, p.in_check()),
            None if plies >= 3 && (p.in_check() || !checks_only) => {
                let replies = p.legal_moves();
                replies.into_iter().all(|r| {
                    p.make_move(r);
                    let ok = match p.outcome() {
                        Some(o) => o.winner == Some(us),
                        None => wins_within(p, plies - 2, checks_only),
                    };
                    p.unmake_move();
                    ok
                })
            }
            None => false,
        };
        p.unmake_move();
        won
    })
}

#[test]
fn forced_wins_within_three_plies_are_those_of_a_full_width_search() {
    let mut rng = SplitMix64(11);
    let mut found = [0usize; 2];
    for name in ["minishogi", "judkins"] {
        let v = builtin(name);
        for _game in 0..40 {
            let mut p = Position::start(v.clone());
            for _ply in 0..40 {
                if p.outcome().is_some() {
                    break;
                }
                let legal = p.legal_moves();
                let sfen = p.to_sfen();
                let in_one = p.forced_win(&legal, 1).is_some();
                assert_eq!(in_one, wins_within(&mut p, 1, true), "{name} {sfen}");
                let in_three = p.forced_win(&legal, 3);
                assert_eq!(p.to_sfen(), sfen, "unchanged");
                // Checks first: the same as a full-width search that tries checks only, and
                // every win it finds a full-width search finds.
                assert_eq!(
                    in_three.is_some(),
                    wins_within(&mut p, 3, true),
                    "{name} {sfen}"
                );
                if let Some(m) = in_three {
                    assert!(p.forces_win(m, 3), "{name} {sfen}");
                    assert!(wins_within(&mut p, 3, false), "{name} {sfen}");
                    assert!(in_one || !p.wins_at_once(m));
                    found[in_one as usize] += 1;
                } else {
                    assert!(!in_one);
                }
                p.make_move(legal[rng.below(legal.len())]);
            }
        }
    }
    assert!(
        found[0] > 5 && found[1] > 5,
        "wins in three, in one: {found:?}"
    );
}

#[test]
fn a_bounded_mate_search_proves_only_what_it_has_the_moves_for() {
    // A minishogi game 16 plies in, sente to move: 1e1b mates in five plies, checks only.
    let v = builtin("minishogi");
    let mut p = Position::start(v);
    for m in
        "4e4d 2a3b 4d3c 1a2a 3e4d 3b3c 4d3c G*3b 3c2d 3b2b G*4c 2a1a 2e3d 4a3b 3d1b 2b1b".split(' ')
    {
        p.play_usi(m).unwrap();
    }
    let legal = p.legal_moves();
    let sfen = p.to_sfen();
    let unbounded = p.forced_win(&legal, 5).expect("a mate in five");
    assert!(p.forces_win(unbounded, 5) && p.forced_win(&legal, 3).is_none());
    // Enough moves: the same answer, and the count of moves played went down.
    let mut budget = 100_000;
    assert_eq!(
        p.forced_win_bounded(&legal, 5, &mut budget),
        Some(unbounded)
    );
    let used = 100_000 - budget;
    assert!((10..100_000).contains(&used), "{used}");
    // One move short of what it needs: nothing is proven, the position is unchanged.
    let mut short = used - 1;
    assert_eq!(p.forced_win_bounded(&legal, 5, &mut short), None);
    assert_eq!(short, 0);
    assert_eq!(p.to_sfen(), sfen);
    // Exactly enough: found again.
    let mut exact = used + 1;
    assert_eq!(p.forced_win_bounded(&legal, 5, &mut exact), Some(unbounded));
}
