//! Taikyoku shogi, tested by hand (configs/variants/taikyoku.toml has the readings): the start
//! position's moves, the sweeping range captures of its generals, the slides that pass over
//! up to three pieces, the jumps that slide on, the crown prince as a second royal piece, and a
//! deliberate break of the config for each. Squares are USI: file 36..1 from left to right,
//! rank a (gote's first rank) to z, then aa to aj (sente's first rank); sente moves towards
//! rank a. Letters: K king, C crown prince, P pawn, G great general, V^ vice general, E= free
//! eagle, D? deva (promotes to king of teachings), T' treacherous fox (to mountain crane).

use rules::{Color, EndReason, Position, Variant};
use std::sync::Arc;

mod support;
use support::*;

fn taikyoku() -> Arc<Variant> {
    builtin("taikyoku")
}

#[test]
fn start_position_move_count_by_hand() {
    // Each side has 402 pieces of 209 kinds; 404 kinds with the promoted forms.
    let v = taikyoku();
    let p = Position::start(v.clone());
    assert_eq!(v.kinds.len(), 404);
    assert_eq!(pieces_per_side(&p), (402, 402));
    // Sente's camp is ranks y to aj, packed; only these move:
    // - the pawns on rank z step up, but on the six files with a dog or go-between in front
    //   (31, 26, 22, 15, 11, 6): 30;
    // - the dogs on 31y, 22y, 15y, 6y step to the three squares ahead: 12; the go-betweens on
    //   26y and 11y step up: 2;
    // - the horned hawks on 25aa and 12aa jump two up, over their pawn, to rank y: 2;
    // - the roaring dog on 18aa jumps three up (18x) and three diagonally forward (15x, 21x);
    //   the lion dog on 19aa the same (19x, 16x, 22x); the great master on 19ab three up (19y)
    //   and diagonally (16y; 22y holds a dog): 3 + 3 + 2;
    // - the range-capturing generals sweep over their own pieces (all ranked below them) into
    //   the empty middle: the vice general on 18ag up both forward diagonals, over 7 and 8 own
    //   pieces, to the 10 empty squares of each (1p..10y, 27x..36o): 20; the fierce dragons on
    //   16ag and 21ag up their diagonals to 8 and 13 empty squares: 21 each; the great general
    //   on 19ag up its diagonals to 10 and 10, and up its file over 7 own pieces to the 14
    //   empty squares 19y..19l, then taking gote's 11 pieces 19k..19a, the vice general
    //   (rank 2) jumped too, until gote's crown prince on 19a, which it takes but cannot pass:
    //   45; the flying generals on 31ah and 6ah up their files to the 12 empty squares, then
    //   taking the 9 gote pieces up to the flying general on 31c (6c), which has their rank
    //   and is taken but not passed: 12 + 9 + 1 = 22 each; the angle generals on 32ah and 5ah
    //   up one diagonal, over 8 own pieces, to 14 empty squares and the 9 gote pieces 9k..1c
    //   (28k..36c): 23 each. Captures promote by themselves: one move each;
    // - the free eagle on 18ac jumps to the fourth square of its forward-right diagonal, over
    //   its three own pieces, and slides on: 14y..1l, 14 (forward-left, its jump lands on the
    //   dog on 22y).
    // 30 + 12 + 2 + 2 + 8 + 20 + 42 + 45 + 44 + 46 + 14 = 265.
    assert_eq!(p.legal_moves().len(), 265);
    let mut want = counts(&[
        ("31y", 3),
        ("22y", 3),
        ("15y", 3),
        ("6y", 3),
        ("26y", 1),
        ("11y", 1),
        ("25aa", 1),
        ("12aa", 1),
        ("18aa", 3),
        ("19aa", 3),
        ("19ab", 2),
        ("18ag", 20),
        ("16ag", 21),
        ("21ag", 21),
        ("19ag", 45),
        ("31ah", 22),
        ("6ah", 22),
        ("32ah", 23),
        ("5ah", 23),
        ("18ac", 14),
    ]);
    for f in (1..=36).filter(|f| ![31, 26, 22, 15, 11, 6].contains(f)) {
        want.insert(format!("{f}z"), 1);
    }
    assert_eq!(moves_by_origin(&p), want);
    assert_eq!(dests(&p, "19ab"), set(&["19y", "16y"]));
    let vice: Vec<String> = (1..=10)
        .map(|k| format!("{k}{}", (b'o' + k as u8) as char))
        .chain((27..=36).map(|f| {
            let r = 50 - f;
            format!("{f}{}", (b'a' + r as u8) as char)
        }))
        .collect();
    let vice: Vec<&str> = vice.iter().map(String::as_str).collect();
    assert_eq!(dests(&p, "18ag"), set(&vice));
    assert_eq!(name_at(&p, "19ag"), "great general");
    assert_eq!(name_at(&p, "19a"), "crown prince");
    assert_eq!(p.royal_count(Color::Sente), 2);
}

#[test]
fn the_great_general_sweeps_its_file_and_takes_the_crown_prince() {
    // From the start, 19ag19a: every piece on file 19 between goes, sente's 7 and gote's 12,
    // the crown prince included; gote keeps its king, so the game goes on. Undone exactly.
    let v = taikyoku();
    let mut p = Position::start(v.clone());
    let before = (p.to_sfen(), p.hash());
    play(&mut p, "19ag19a");
    for r in ["af", "aa", "z", "k", "d", "b"] {
        assert_eq!(name_at(&p, &format!("19{r}")), "-", "19{r}");
    }
    assert_eq!(name_at(&p, "19a"), "great general");
    assert_eq!(p.royal_count(Color::Gote), 1);
    assert_eq!(p.outcome(), None);
    p.unmake_move();
    assert_eq!((p.to_sfen(), p.hash()), before);
    // Break: without the sweep it still jumps to take the crown prince, but the pieces it
    // jumps stay.
    let plain = broken(
        "taikyoku",
        "range_capture = \"Q\"\nsweep = true\n",
        "range_capture = \"Q\"\n",
    );
    let mut p = Position::start(plain);
    play(&mut p, "19ag19a");
    assert_eq!(name_at(&p, "19af"), "deva");
    assert_eq!(name_at(&p, "19d"), "vice general");
}

#[test]
fn ranks_bound_the_sweep() {
    // Sente's vice general (rank 2) on 10j, gote's great general (rank 3) on 10f and pawn on
    // 10d: it may take the great general but not pass it. Sente's great general on 20j passes
    // gote's vice general on 20f to take the pawn on 20d, and lands on the empty 20e.
    let v = taikyoku();
    let pieces = [
        ("36aj", "K"),
        ("1a", "k"),
        ("10j", "V^"),
        ("10f", "g"),
        ("10d", "p"),
        ("20j", "G"),
        ("20f", "v^"),
        ("20d", "p"),
    ];
    let p = composed(&v, &pieces, "b -");
    let up = |from: &str, file: &str| -> Vec<String> {
        let mut out: Vec<String> = dests(&p, from)
            .into_iter()
            .map(|m| m.trim_end_matches('+').to_string())
            .filter(|m| m.starts_with(file) && m.len() == file.len() + 1)
            .filter(|m| m.as_bytes()[file.len()] < b'j')
            .collect();
        out.dedup();
        out
    };
    // The vice general range-captures only diagonally: up its file it is blocked (its D jump
    // reaches 10h).
    assert_eq!(up("10j", "10"), ["10h"]);
    assert_eq!(
        up("20j", "20"),
        ["20a", "20b", "20c", "20d", "20e", "20f", "20g", "20h", "20i"]
    );
    let mut p = p;
    play(&mut p, "20j20c");
    assert_eq!(name_at(&p, "20f"), "-");
    assert_eq!(name_at(&p, "20d"), "-");
    // Sente's vice general on 10j sweeps diagonally over gote's pawns (rank 0) but is stopped
    // by gote's great general, which it takes.
    let pieces = [
        ("36aj", "K"),
        ("1a", "k"),
        ("10j", "V^"),
        ("9i", "p"),
        ("8h", "p"),
        ("7g", "g"),
        ("6f", "p"),
    ];
    let p = composed(&v, &pieces, "b -");
    let reach = dests(&p, "10j");
    let diag: Vec<&str> = ["9i", "8h", "7g", "6f", "5e"]
        .into_iter()
        .filter(|sq| reach.contains(*sq))
        .collect();
    assert_eq!(diag, ["9i", "8h", "7g"]);
}

#[test]
fn the_triple_slashed_arrow_passes_up_to_three_pieces() {
    // The king of teachings (a promoted deva, +D?) on 18r; up its file sente's pawn on 18q,
    // gote's on 18p, sente's on 18o, gote's on 18n and 18m. It takes 18p over one piece and
    // 18n over three, but not 18m (four) nor its own pawns.
    let v = taikyoku();
    let pieces = [
        ("36aj", "K"),
        ("1a", "k"),
        ("18r", "+D?"),
        ("18q", "P"),
        ("18p", "p"),
        ("18o", "P"),
        ("18n", "p"),
        ("18m", "p"),
    ];
    let p = composed(&v, &pieces, "b -");
    let up: Vec<String> = moves_with(&p, "18r")
        .into_iter()
        .filter(|m| m.starts_with("18r18") && !m.ends_with('+'))
        .filter(|m| m.len() == 6 && m.as_bytes()[5] < b'r')
        .collect();
    assert_eq!(up, ["18r18n", "18r18p"]);
    // Break: a king of teachings that jumps at most two pieces no longer reaches 18n.
    let two = broken("taikyoku", "betza = \"Q(paf)3Q\"", "betza = \"Q(paf)2Q\"");
    let p = composed(&two, &pieces, "b -");
    assert!(!moves_with(&p, "18r").contains("18r18n"));
}

#[test]
fn jumps_that_slide_on_differ_between_the_crane_and_the_eagle() {
    // Up file 18 from 18r: sente's pawns on 18q, 18p and 18o, then empty. The mountain crane
    // (a promoted treacherous fox, +T') jumps over the three and slides on from 18n; the free
    // eagle (E=) jumps over two at most, so none of its moves goes up the file.
    let v = taikyoku();
    let crane = [
        ("36aj", "K"),
        ("1a", "k"),
        ("18r", "+T'"),
        ("18q", "P"),
        ("18p", "P"),
        ("18o", "P"),
    ];
    let p = composed(&v, &crane, "b -");
    let up = |p: &Position| -> usize {
        moves_with(p, "18r")
            .iter()
            .filter(|m| m.starts_with("18r18") && m.len() == 6 && m.as_bytes()[5] < b'o')
            .count()
    };
    // 18n..18a: 14 squares.
    assert_eq!(up(&p), 14);
    let mut eagle = crane;
    eagle[2] = ("18r", "E=");
    let p = composed(&v, &eagle, "b -");
    assert_eq!(up(&p), 0);
    // Up its forward-right diagonal, over sente's pawns on 17q, 16p and 15o, the eagle jumps to
    // the fourth square and slides on: 14n..5e, 10 squares; not with the jumps over one or two
    // squares only (a break of its `"3:fB"`).
    let diagonal = [
        ("36aj", "K"),
        ("1a", "k"),
        ("18r", "E="),
        ("17q", "P"),
        ("16p", "P"),
        ("15o", "P"),
    ];
    let up_right = |p: &Position| -> usize {
        (5..=14)
            .filter(|&f| {
                let to = format!("{f}{}", (b'a' + (f as u8 - 1)) as char);
                dests(p, "18r").contains(&to)
            })
            .count()
    };
    assert_eq!(up_right(&composed(&v, &diagonal, "b -")), 10);
    let near = broken(
        "taikyoku",
        "skip_over = [1, 2, \"3:fB\"]",
        "skip_over = [1, 2]",
    );
    assert_eq!(up_right(&composed(&near, &diagonal, "b -")), 0);
    // The eagle takes an adjacent piece without moving (igui): 18r18q18r when 18q is gote's.
    let mut igui = eagle;
    igui[3] = ("18q", "p");
    let p = composed(&v, &igui, "b -");
    assert!(moves(&p).contains("18r18q18r"));
}

#[test]
fn the_crown_prince_is_a_second_royal_piece_and_promotes_to_a_king() {
    // Gote's great general takes sente's king on 18aj: sente still has its crown prince, and
    // loses when that is taken too. A crown prince that captures becomes a second king.
    let v = taikyoku();
    let pieces = [("18aj", "K"), ("1ai", "C"), ("18a", "g"), ("36a", "k")];
    let mut p = composed(&v, &pieces, "w -");
    play(&mut p, "18a18aj");
    assert_eq!(p.royal_count(Color::Sente), 1);
    assert_eq!(p.outcome(), None);
    play(&mut p, "1ai2ai 18aj2aj");
    play(&mut p, "2ai3ai 2aj3ai");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
    let mut p = composed(
        &v,
        &[("36aj", "K"), ("5l", "C"), ("5k", "p"), ("36a", "k")],
        "b -",
    );
    play(&mut p, "5l5k");
    assert_eq!(name_at(&p, "5k"), "king");
    assert_eq!(p.royal_count(Color::Sente), 2);
    // Promotion by capture only: a plain move does not promote, and no move chooses to.
    let p = composed(&v, &[("36aj", "K"), ("5l", "C"), ("36a", "k")], "b -");
    assert!(moves(&p).iter().all(|m| !m.ends_with('+')));
    let mut p = p;
    play(&mut p, "5l5k");
    assert_eq!(name_at(&p, "5k"), "crown prince");
    // Break: a crown prince that is not royal, and the king's capture ends the game.
    let plain = broken(
        "taikyoku",
        "name = \"crown prince\"\n# Royal like the king; promotes to a second king.\nbetza = \"K\"\nroyal = true\n",
        "name = \"crown prince\"\nbetza = \"K\"\n",
    );
    let mut p = composed(&plain, &pieces, "w -");
    play(&mut p, "18a18aj");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
}

#[test]
fn a_leap_along_a_ride_is_one_move() {
    // The phoenix master (P!, BvRsR3fG) alone on 18s: its bishop's rides (18 + 17 + 17 + 17
    // squares), its vertical rides (18 up, 17 down) and three squares each way sideways: 110
    // moves. Its forward jumps to the third diagonal square land on squares of its rides:
    // with the path empty, each is one move, not two.
    let v = taikyoku();
    let p = composed(&v, &[("36aj", "K"), ("1a", "k"), ("18s", "P!")], "b -");
    let from = v.parse_square("18s").unwrap();
    let mine: Vec<_> = p
        .legal_moves()
        .into_iter()
        .filter(|m| m.from() == Some(from))
        .collect();
    assert_eq!(mine.len(), 110);
    let unique: std::collections::BTreeSet<String> =
        mine.iter().map(|&m| p.move_to_usi(m)).collect();
    assert_eq!(unique.len(), 110);
    // With a piece on the first square of its forward-left diagonal, the jump over it is the
    // only way to the third square: still one move there.
    let p = composed(
        &v,
        &[("36aj", "K"), ("1a", "k"), ("18s", "P!"), ("19r", "P")],
        "b -",
    );
    let to_21p = p
        .legal_moves()
        .into_iter()
        .filter(|&m| p.move_to_usi(m) == "18s21p")
        .count();
    assert_eq!(to_21p, 1);
}
