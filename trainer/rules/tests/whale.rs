//! Whale shogi, tested by hand from its rule texts (see configs/variants/whale.toml): no engine
//! we can run plays it. Squares are USI: file 6..1 from left to right, rank a (gote's back rank,
//! sente's last) to f.

use rules::{Color, Position, Variant};
use std::collections::BTreeSet;
use std::sync::Arc;

mod support;
use support::*;

fn whale() -> Arc<Variant> {
    Arc::new(Variant::builtin("whale").expect("built-in whale"))
}

fn pos(sfen: &str) -> Position {
    Position::from_sfen_composed(&whale(), sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

#[test]
fn start_position_has_seven_moves() {
    // Six dolphin steps and the narwhal's jump to 2d; every other piece is boxed in by its own.
    let p = Position::start(whale());
    let moves: BTreeSet<String> = p.legal_moves().iter().map(|&m| p.move_to_usi(m)).collect();
    let mut want = set(&["6e6d", "5e5d", "4e4d", "3e3d", "2e2d", "1e1d", "2f2d"]);
    assert_eq!(moves, want);
    // Gote's start is the same turned round.
    let p = pos("bnpwgh/dddddd/6/6/DDDDDD/HGWPNB w - 1");
    let moves: BTreeSet<String> = p.legal_moves().iter().map(|&m| p.move_to_usi(m)).collect();
    want = set(&["6b6c", "5b5c", "4b4c", "3b3c", "2b2c", "1b1c", "5a5c"]);
    assert_eq!(moves, want);
}

#[test]
fn each_piece_moves_as_its_text_says() {
    // One sente piece on 4c (file 4, rank c), kings out of the way on 6f and 1a.
    let cases: &[(&str, &[&str])] = &[
        // Humpback: the four diagonals and straight back.
        ("H", &["5b", "3b", "5d", "3d", "4d"]),
        // Grey whale: forward as a rook, backwards diagonally as a bishop.
        ("G", &["4b", "4a", "5d", "6e", "3d", "2e", "1f"]),
        // Narwhal: left, right, back, or two forward.
        ("N", &["5c", "3c", "4d", "4a"]),
        // Blue whale: forward, the forward diagonals, straight back.
        ("B", &["4b", "5b", "3b", "4d"]),
        // Porpoise: left or right.
        ("P", &["5c", "3c"]),
        // Killer whale: a rook plus a diagonal step.
        (
            "K",
            &[
                "4b", "4a", "4d", "4e", "4f", "5c", "6c", "3c", "2c", "1c", "5b", "3b", "5d", "3d",
            ],
        ),
        // Dolphin, off the last rank: one step forward.
        ("D", &["4b"]),
    ];
    for (piece, dests) in cases {
        let p = pos(&format!("5w/6/2{piece}3/6/6/W5 b - 1"));
        let want: BTreeSet<String> = dests.iter().map(|d| format!("4c{d}")).collect();
        assert_eq!(moves_with(&p, "4c"), want, "{piece}");
    }
}

#[test]
fn a_dolphin_on_its_last_rank_slides_back_diagonally() {
    // Sente dolphin on 3a (its last rank), gote white whale on 1d, sente's on 6f.
    let p = pos("3D2/6/6/5w/6/W5 b - 1");
    assert_eq!(
        moves_with(&p, "3a"),
        set(&["3a4b", "3a5c", "3a6d", "3a2b", "3a1c"])
    );
    // It gives check along that diagonal (gote's white whale on 1c).
    let p = pos("3D2/6/5w/6/6/W5 w - 1");
    assert!(p.in_check());
    assert!(p.is_attacked(whale().parse_square("1c").unwrap(), Color::Sente));
    // Gote's dolphin on its last rank (f) mirrors it.
    let p = pos("W5/6/6/6/5w/2d3 w - 1");
    assert_eq!(
        moves_with(&p, "4f"),
        set(&["4f3e", "4f2d", "4f1c", "4f5e", "4f6d"])
    );
    // After stepping back it is an ordinary dolphin again.
    let mut p = pos("3D2/6/6/5w/6/W5 b - 1");
    p.play_usi("3a5c 1d1e").unwrap();
    assert_eq!(moves_with(&p, "5c"), set(&["5c5b"]));
}

#[test]
fn at_most_two_own_dolphins_on_a_file_for_moves_and_drops() {
    // Sente dolphins on 4c and 4d (two on file 4) and 3a; gote's dolphin on 2d does not count.
    let p = pos("3D2/6/2D3/2D1d1/5w/W5 b D 1");
    // The slide back may pass 4b but not stop there: three on file 4.
    assert_eq!(moves_with(&p, "3a"), set(&["3a5c", "3a6d", "3a2b", "3a1c"]));
    // Moving within a file is always allowed.
    assert_eq!(moves_with(&p, "4c"), set(&["4c4b"]));
    // Drops: not on file 4 (two already), not on the last rank (a).
    let drops: BTreeSet<String> = moves_with(&p, "D*");
    assert!(drops.iter().all(|d| !d.starts_with("D*4")), "{drops:?}");
    assert!(drops.iter().all(|d| !d.ends_with('a')), "{drops:?}");
    assert!(
        drops.contains("D*2e") && drops.contains("D*3b"),
        "{drops:?}"
    );
}

#[test]
fn a_captured_porpoise_becomes_a_killer_whale_in_hand() {
    // Sente's grey whale on 4c takes gote's porpoise on 4a.
    let mut p = pos("2p2w/6/2G3/6/6/W5 b - 1");
    p.play_usi("4c4a").unwrap();
    assert_eq!(p.to_sfen(), "2G2w/6/6/6/6/W5 w K 2");
    // The killer whale is dropped as such.
    p.play_usi("1a1b K*4e").unwrap();
    assert_eq!(p.to_sfen(), "2G3/5w/6/6/2K3/W5 w - 4");
    // Once captured it stays a killer whale (gote takes sente's with its own).
    let mut q = pos("5w/4k1/6/6/6/W5 b K 1");
    q.play_usi("K*2c 2b2c").unwrap();
    assert_eq!(q.to_sfen(), "5w/6/4k1/6/6/W5 b k 3");
    // A porpoise is never in hand.
    let e = Position::from_sfen_composed(&whale(), "5w/6/6/6/6/W5 b P 1").unwrap_err();
    assert!(e.to_string().contains('P'), "{e}");
    // Counted with the killer whales: two porpoises and two killer whales cannot arise in a
    // game (only composed positions may have them).
    let e = Position::from_sfen(&whale(), "p4w/6/6/6/6/W4P b 2K 1").unwrap_err();
    assert!(e.to_string().contains("4 pieces of kind K"), "{e}");
    assert!(Position::from_sfen(&whale(), "p4w/6/6/6/6/W5 b K 1").is_ok());
}

#[test]
fn a_dolphin_drop_may_not_mate() {
    // Gote's white whale on 6a, walled in by its own porpoise on 5a and humpback on 5b,
    // neither of which reaches 6b; a sente dolphin dropped on 6b, protected by the killer whale
    // on 5c, would mate: illegal. Elsewhere the drop is fine.
    let p = pos("wp4/1h4/1K4/6/6/5W b D 1");
    assert!(!moves_with(&p, "D*").contains("D*6b"));
    assert!(moves_with(&p, "D*").contains("D*4d"));
}
