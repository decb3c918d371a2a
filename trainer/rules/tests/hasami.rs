//! Hasami shogi and Dai hasami shogi, tested by hand from the English Wikipedia article (see
//! configs/variants/hasami.toml and dai-hasami.toml): no engine we can run plays them. Squares
//! are USI: file 9..1 from left to right, rank a (gote's first rank) to i (sente's first rank).

use rules::fsf::to_fsf_ini;
use rules::{perft, Color, EndReason, Position, SplitMix64, Variant, VariantSpec};
use std::sync::Arc;

mod support;
use support::*;

fn hasami() -> Arc<Variant> {
    builtin("hasami")
}

fn dai() -> Arc<Variant> {
    builtin("dai-hasami")
}

/// Men of both sides: sente's on `sente`, gote's on `gote`; `side` to move.
fn men(v: &Arc<Variant>, sente: &[&str], gote: &[&str], side: &str) -> Position {
    let pieces: Vec<(&str, &str)> = sente
        .iter()
        .map(|&s| (s, "P"))
        .chain(gote.iter().map(|&s| (s, "p")))
        .collect();
    composed(v, &pieces, &format!("{side} -"))
}

/// Whether a man of `c` stands on the USI square `sq`.
fn has(p: &Position, sq: &str, c: Color) -> bool {
    let v = p.variant();
    let split = sq.find(|ch: char| ch.is_ascii_lowercase()).unwrap();
    let file: usize = sq[..split].parse().unwrap();
    let rank = (sq.as_bytes()[split] - b'a') as usize;
    let piece = p.piece_at(v.square(v.files as usize - file, rank));
    piece.is_color(c)
}

/// Men of `c` on the board.
fn count(p: &Position, c: Color) -> usize {
    p.occupied_by(c).len()
}

#[test]
fn start_position_move_counts_by_hand() {
    // Nine men on rank i, gote's nine on rank a: no man moves sideways (its neighbours block
    // it), and each moves up its file 1 to 7 squares (ranks h..b): 9 x 7 = 63.
    let p = Position::start(hasami());
    assert_eq!(p.legal_moves().len(), 63);
    assert_eq!(dests(&p, "5i").len(), 7);
    assert!(dests(&p, "5i").contains("5b") && !dests(&p, "5i").contains("5a"));
    // Dai hasami: the nine men of rank h move up 1 to 5 squares (ranks g..c), the nine of rank
    // i jump over the man in front of them to rank g; sideways jumps land on men: 45 + 9 = 54.
    let p = Position::start(dai());
    assert_eq!(p.legal_moves().len(), 54);
    assert_eq!(dests(&p, "5i"), set(&["5g"]));
    assert_eq!(dests(&p, "5h"), set(&["5g", "5f", "5e", "5d", "5c"]));
}

#[test]
fn perft_two_by_hand() {
    // Hasami: after sente's man on some file reaches rank index k (b = 1 .. h = 7), gote's man
    // on that file has k - 1 moves and its eight others 7 each; no first move captures (a man
    // next to gote's rank has only the board's edge behind them). Per file
    // sum_{k=1..7} (56 + k - 1) = 413, times 9 files = 3717.
    assert_eq!(perft(&mut Position::start(hasami()), 2), 3717);
    // Dai hasami: a man of rank h to rank index k (c = 2 .. g = 6) leaves gote 8 x 5 steps,
    // k - 2 steps on its file, and the nine jumps of rank a, except that at k = 2 the jump on
    // that file is blocked while gote's rank-b man may jump the intruder: 49, 50, 51, 52, 53,
    // 255 per file, 2295 in all. A jump of a rank-i man to g leaves 40 + 4 + 9 = 53 replies,
    // 477 for the nine. 2295 + 477 = 2772.
    assert_eq!(perft(&mut Position::start(dai()), 2), 2772);
}

#[test]
fn a_man_between_two_enemies_is_captured() {
    let mut p = men(&hasami(), &["5e", "8c", "1i"], &["5d", "9a", "1a"], "b");
    play(&mut p, "8c5c");
    assert!(!has(&p, "5d", Color::Gote), "{}", p.to_sfen());
    assert_eq!(count(&p, Color::Gote), 2);
    assert!(has(&p, "5c", Color::Sente) && has(&p, "5e", Color::Sente));
    // Captured men leave the game: no hand.
    assert!(p.to_sfen().contains(" w - "), "{}", p.to_sfen());
    // Gote captures the same way.
    let mut p = men(&hasami(), &["5d", "9i", "1i"], &["5e", "8c", "1a"], "w");
    play(&mut p, "8c5c");
    assert!(!has(&p, "5d", Color::Sente));
    assert_eq!(count(&p, Color::Sente), 2);
}

#[test]
fn a_line_of_men_is_captured_at_once() {
    // Gote's 5c and 5d between sente's 5e and the man arriving on 5b.
    let mut p = men(
        &hasami(),
        &["5e", "7b", "1i"],
        &["5c", "5d", "9a", "1a"],
        "b",
    );
    play(&mut p, "7b5b");
    assert_eq!(count(&p, Color::Gote), 2);
    assert!(!has(&p, "5c", Color::Gote) && !has(&p, "5d", Color::Gote));
    // One move closing two lines takes both: 5e arrives between 5d/6e lines.
    let mut p = men(
        &hasami(),
        &["5c", "7e", "5h"],
        &["5d", "6e", "9a", "1a"],
        "b",
    );
    // 5h..5e: the man moves up from 5h to 5e: 5d is between 5e and 5c, but 6e is between 5e
    // and 7e.
    play(&mut p, "5h5e");
    assert!(!has(&p, "5d", Color::Gote) && !has(&p, "6e", Color::Gote));
    assert_eq!(count(&p, Color::Gote), 2);
}

#[test]
fn a_gap_or_the_edge_does_not_enclose() {
    // A gap: 5c (gote), 5d empty, 5e gote, sente arrives on 5b with 5f sente.
    let mut p = men(
        &hasami(),
        &["5f", "7b", "1i"],
        &["5c", "5e", "9a", "1a"],
        "b",
    );
    play(&mut p, "7b5b");
    assert_eq!(count(&p, Color::Gote), 4);
    // The edge is no friendly man: 9e between sente's 8e and the board's edge.
    let mut p = men(&hasami(), &["8h", "1i", "2i"], &["9e", "5a", "1a"], "b");
    play(&mut p, "8h8e");
    assert_eq!(count(&p, Color::Gote), 3);
}

#[test]
fn corner_men_are_captured_by_the_two_squares_beside_them() {
    // Gote's 1a with sente on 2a; sente's man arriving on 1b takes it.
    let mut p = men(&hasami(), &["2a", "1e", "9i"], &["1a", "9a", "8a"], "b");
    play(&mut p, "1e1b");
    assert!(!has(&p, "1a", Color::Gote));
    assert_eq!(count(&p, Color::Gote), 2);
    // The other corner, the other way round: 9i with gote on 9h, gote arrives on 8i.
    let mut p = men(&hasami(), &["9i", "1i", "2i"], &["9h", "8c", "1a"], "w");
    play(&mut p, "8c8i");
    assert!(!has(&p, "9i", Color::Sente));
    // A corner man next to one enemy only stays.
    let mut p = men(&hasami(), &["1e", "9i"], &["1a", "9a", "8a"], "b");
    play(&mut p, "1e1b");
    assert!(has(&p, "1a", Color::Gote));
}

#[test]
fn corners_need_their_key() {
    let mut spec = VariantSpec::builtin("hasami").unwrap();
    spec.capture.as_mut().unwrap().custodian_corners = Some(false);
    let v = Arc::new(Variant::compile(spec).unwrap());
    let mut p = men(&v, &["2a", "1e", "9i"], &["1a", "9a", "8a"], "b");
    play(&mut p, "1e1b");
    assert!(has(&p, "1a", Color::Gote));
    // Corner captures without custodian capture are refused.
    let mut spec = VariantSpec::builtin("hasami").unwrap();
    spec.capture.as_mut().unwrap().custodian = Some(false);
    let e = Variant::compile(spec).unwrap_err().to_string();
    assert!(e.contains("capture.custodian_corners"), "{e}");
}

#[test]
fn without_custodian_capture_nothing_is_taken() {
    let mut spec = VariantSpec::builtin("hasami").unwrap();
    let c = spec.capture.as_mut().unwrap();
    c.custodian = Some(false);
    c.custodian_corners = Some(false);
    let v = Arc::new(Variant::compile(spec).unwrap());
    assert!(!v.custodian);
    let mut p = men(&v, &["5e", "8c", "1i"], &["5d", "9a", "1a"], "b");
    play(&mut p, "8c5c");
    assert_eq!(count(&p, Color::Gote), 3);
}

#[test]
fn moving_into_a_sandwich_is_safe() {
    // Sente's man enters 5d between gote's 5c and 5e: nothing happens to it.
    let mut p = men(&hasami(), &["8d", "1i", "2i"], &["5c", "5e", "1a"], "b");
    play(&mut p, "8d5d");
    assert!(has(&p, "5d", Color::Sente));
    assert_eq!((count(&p, Color::Sente), count(&p, Color::Gote)), (3, 3));
    // Completing an enclosed chain of own men is safe too: 5c gote, 5d sente, 5f gote, sente
    // arrives on 5e.
    let mut p = men(&hasami(), &["5d", "8e", "1i"], &["5c", "5f", "1a"], "b");
    play(&mut p, "8e5e");
    assert_eq!(count(&p, Color::Sente), 3);
}

#[test]
fn diagonals_never_capture() {
    // Gote's 4d between sente's 3c and the man arriving on 5e, diagonally.
    let mut p = men(&hasami(), &["3c", "5h", "1i"], &["4d", "9a", "1a"], "b");
    play(&mut p, "5h5e");
    assert!(has(&p, "4d", Color::Gote));
    // Nor does a man take by moving onto another: no move ends on an occupied square.
    let p = men(&hasami(), &["5e", "1i"], &["5c", "9a", "1a"], "b");
    assert!(!dests(&p, "5e").contains("5c"));
    assert!(dests(&p, "5e").contains("5d"));
}

#[test]
fn capturing_all_but_one_wins() {
    let mut p = men(&hasami(), &["5e", "8c", "1i"], &["5d", "9a"], "b");
    assert_eq!(p.outcome(), None);
    play(&mut p, "8c5c");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::BarePieces));
    // A side with no legal move loses: gote's two men boxed in, not capturable.
    let p = men(&hasami(), &["1b", "2b", "3a", "9i"], &["1a", "2a"], "w");
    assert_eq!(p.legal_moves().len(), 0);
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Stalemate));
}

#[test]
fn threefold_repetition_draws() {
    let mut p = Position::start(hasami());
    for _ in 0..2 {
        for m in ["5i5h", "5a5b", "5h5i", "5b5a"] {
            assert_eq!(p.outcome(), None);
            play(&mut p, m);
        }
    }
    assert_eq!(p.outcome(), draw(EndReason::Repetition));
}

#[test]
fn dai_hasami_men_jump_one_adjacent_man() {
    let v = dai();
    // On an otherwise empty file: rook moves, and no jump with nothing to jump.
    let p = men(&v, &["5e", "9i"], &["1a"], "b");
    assert_eq!(dests(&p, "5e").len(), 16);
    // Over an own man and an enemy man, to the square just beyond; no capture by the jump.
    let mut p = men(&v, &["5e", "5d", "9i"], &["6e", "1a"], "b");
    let d = dests(&p, "5e");
    assert!(d.contains("5c") && d.contains("7e"), "{d:?}");
    assert!(!d.contains("5b") && !d.contains("8e"), "{d:?}");
    play(&mut p, "5e7e");
    assert!(has(&p, "6e", Color::Gote));
    // Blocked landing square, and no jump over two men.
    let p = men(&v, &["5e", "5d", "5c", "9i"], &["4e", "3e", "1a"], "b");
    let d = dests(&p, "5e");
    assert!(
        !d.contains("5b") && !d.contains("2e") && !d.contains("3e"),
        "{d:?}"
    );
    // A man not adjacent to the one in its way slides up to it and cannot jump.
    let p = men(&v, &["5g", "5d", "9i"], &["1a"], "b");
    assert!(!dests(&p, "5g").contains("5c"));
    // A jump ending next to enemies encloses like any move.
    let mut p = men(&v, &["5f", "5e", "5b"], &["5c", "9a", "1a"], "b");
    play(&mut p, "5f5d");
    assert!(!has(&p, "5c", Color::Gote), "{}", p.to_sfen());
}

#[test]
fn five_in_a_row_outside_the_own_ranks_wins() {
    let v = dai();
    let gote = ["9a", "8a", "9b"];
    // Sente's five on file 5, ranks c..g; gote to move cannot touch it.
    let p = men(&v, &["5c", "5d", "5e", "5f", "5g"], &gote, "w");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Connect));
    // On a rank too, and four are not enough.
    let p = men(&v, &["7d", "6d", "5d", "4d", "3d"], &gote, "w");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Connect));
    let p = men(&v, &["7d", "6d", "5d", "4d", "2d"], &gote, "w");
    assert_eq!(p.outcome(), None);
    // Diagonals do not count.
    let p = men(&v, &["7c", "6d", "5e", "4f", "3g"], &gote, "w");
    assert_eq!(p.outcome(), None);
    // A five touching sente's own two first ranks (h, i) does not count.
    let p = men(&v, &["5d", "5e", "5f", "5g", "5h"], &gote, "w");
    assert_eq!(p.outcome(), None);
    let p = men(&v, &["5e", "5f", "5g", "5h", "5i"], &gote, "w");
    assert_eq!(p.outcome(), None);
    // Gote's five in sente's half counts, on gote's own ranks a, b it does not.
    let s = ["9i", "8i", "9h"];
    let p = men(&v, &s, &["5c", "5d", "5e", "5f", "5g"], "b");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::Connect));
    let p = men(&v, &s, &["5a", "5b", "5c", "5d", "5e"], "b");
    assert_eq!(p.outcome(), None);
}

#[test]
fn a_five_that_can_be_broken_at_once_does_not_count_yet() {
    let v = dai();
    // Gote's 6e and 4a: 4a4e encloses sente's 5e, breaking the five.
    let p = men(
        &v,
        &["5c", "5d", "5e", "5f", "5g"],
        &["6e", "4a", "9a"],
        "w",
    );
    assert_eq!(p.outcome(), None);
    let mut q = p.clone();
    play(&mut q, "4a4e");
    assert!(!has(&q, "5e", Color::Sente));
    assert_eq!(q.outcome(), None);
    // If gote plays something else the five stands at sente's turn and wins.
    let mut q = p.clone();
    play(&mut q, "9a9b");
    assert_eq!(q.outcome(), win(Color::Sente, EndReason::Connect));
}

#[test]
fn dai_hasami_has_no_capture_all_but_one_goal() {
    let v = dai();
    assert_eq!(v.bare_pieces, 0);
    let p = men(&v, &["5e", "1i"], &["9a"], "b");
    assert_eq!(p.outcome(), None);
    // With no man left a side has no move, and loses.
    let p = men(&v, &["5e", "1i"], &[], "w");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Stalemate));
}

/// Random games: after each move, the incremental hash is the hash of the position read back
/// from its SFEN; taking every move back restores the position and hash exactly.
fn random_games(v: &Arc<Variant>, seed: u64) -> usize {
    let mut rng = SplitMix64(seed);
    let mut captures = 0;
    for _ in 0..20 {
        let mut p = Position::start(v.clone());
        let mut trail = vec![(p.to_sfen(), p.hash())];
        while p.outcome().is_none() && p.ply() < 200 {
            let moves = p.legal_moves();
            let mv = moves[(rng.next_u64() % moves.len() as u64) as usize];
            let before = count(&p, Color::Sente) + count(&p, Color::Gote);
            p.make_move(mv);
            captures += before - count(&p, Color::Sente) - count(&p, Color::Gote);
            let fresh = Position::from_sfen_composed(v, &p.to_sfen()).unwrap();
            assert_eq!(fresh.hash(), p.hash(), "{}", p.to_sfen());
            trail.push((p.to_sfen(), p.hash()));
        }
        trail.pop();
        while let Some((sfen, hash)) = trail.pop() {
            p.unmake_move();
            assert_eq!((p.to_sfen(), p.hash()), (sfen, hash));
        }
    }
    captures
}

#[test]
fn make_unmake_restore_position_and_hash() {
    assert!(random_games(&hasami(), 1) > 20);
    assert!(random_games(&dai(), 2) > 20);
}

#[test]
fn fairy_stockfish_export_refuses_custodian_capture() {
    for v in [hasami(), dai()] {
        let e = to_fsf_ini(&v).unwrap_err().to_string();
        assert!(e.contains("capture.custodian = true"), "{e}");
    }
    let e = to_fsf_ini(&dai()).unwrap_err().to_string();
    assert!(e.contains("end.connect = 5"), "{e}");
}
