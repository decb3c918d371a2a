//! Mirror symmetry: `Variant::mirror_symmetric` says which variants look the same with left
//! and right swapped, and for those the mirror image of a position (`Position::mirrored_sfen`)
//! has exactly the mirrored legal moves, check and outcome, which is what lets training data
//! be mirrored. Tori shogi's quails (and a deliberately one-sided piece) are not symmetric,
//! and their mirrored positions show it.

use rules::{Position, SplitMix64, Variant, VariantSpec};
use std::sync::Arc;

/// `count` positions of seeded random playouts, restarting at a game's end or after 200 plies.
fn random_positions(v: &Arc<Variant>, seed: u64, count: usize) -> Vec<Position> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(count);
    let mut pos = Position::start(v.clone());
    while out.len() < count {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.outcome().is_some() || pos.ply() >= 200 {
            pos = Position::start(v.clone());
            continue;
        }
        pos.make_move(moves[rng.below(moves.len())]);
        out.push(pos.clone());
    }
    out
}

/// Whether every sampled position's mirror image has the mirrored moves, check and outcome
/// (the first difference is returned).
fn mirror_difference(v: &Arc<Variant>, seed: u64, count: usize) -> Option<String> {
    for played in random_positions(v, seed, count) {
        // Rebuilt from SFEN, so that both have the same (empty) history.
        let pos = Position::from_sfen(v, &played.to_sfen()).unwrap();
        let mirror = Position::from_sfen(v, &played.mirrored_sfen()).unwrap();
        let mut want: Vec<String> = pos
            .legal_moves()
            .into_iter()
            .map(|m| mirror.move_to_usi(v.mirror_move(m)))
            .collect();
        let mut have: Vec<String> = mirror
            .legal_moves()
            .into_iter()
            .map(|m| mirror.move_to_usi(m))
            .collect();
        want.sort();
        have.sort();
        if want != have || pos.in_check() != mirror.in_check() || pos.outcome() != mirror.outcome()
        {
            return Some(format!(
                "{} against its mirror {}",
                pos.to_sfen(),
                mirror.to_sfen()
            ));
        }
    }
    None
}

#[test]
fn mirror_symmetric_variants_have_the_mirrored_moves() {
    let mut symmetric = Vec::new();
    for name in VariantSpec::builtin_names() {
        let v = Arc::new(Variant::builtin(name).unwrap());
        if !v.mirror_symmetric() {
            continue;
        }
        symmetric.push(name);
        // Few positions of the large boards: their move lists are long.
        let count = if v.num_squares() > 100 { 40 } else { 300 };
        if let Some(d) = mirror_difference(&v, 11, count) {
            panic!("{name}: {d}");
        }
    }
    for name in ["shogi", "minishogi", "judkins", "kyoto", "chu", "hand"] {
        assert!(symmetric.contains(&name), "{name}: {symmetric:?}");
    }
}

#[test]
fn tori_shogi_is_not_symmetric_and_its_mirrored_positions_show_it() {
    let v = Arc::new(Variant::builtin("tori").unwrap());
    assert!(!v.mirror_symmetric());
    assert!(mirror_difference(&v, 11, 300).is_some());
}

#[test]
fn a_one_sided_piece_breaks_the_symmetry() {
    // Minishogi's silver given one more step, to its left only (a deliberate break).
    let mut spec = VariantSpec::builtin("minishogi").unwrap();
    let silver = spec
        .pieces
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p.letter == "S")
        .unwrap();
    silver.betza = format!("{}lW", silver.betza);
    let v = Arc::new(Variant::compile(spec).unwrap());
    assert!(!v.mirror_symmetric());
    assert!(mirror_difference(&v, 11, 300).is_some());
    assert!(Variant::builtin("minishogi").unwrap().mirror_symmetric());
}

#[test]
fn the_mirrored_sfen_swaps_the_files() {
    let v = Arc::new(Variant::builtin("minishogi").unwrap());
    let pos = Position::start(v.clone());
    assert_eq!(pos.mirrored_sfen(), "kgsbr/p4/5/4P/RBSGK b - 1");
    let back = Position::from_sfen(&v, &pos.mirrored_sfen()).unwrap();
    assert_eq!(back.mirrored_sfen(), pos.to_sfen());
}
