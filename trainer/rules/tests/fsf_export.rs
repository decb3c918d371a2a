//! The Fairy-Stockfish export (`rules::fsf`) checked by the engine itself: every config in
//! `configs/variants` that exports is loaded into Fairy-Stockfish (Debian package
//! `fairy-stockfish`, 11.1) from the generated `variants.ini`, which its own `check` command must
//! accept without complaint, and its perft must equal ours from the start position and from
//! positions of seeded random playouts. Configs that do not export must name their rules.
//!
//! Without the engine the engine tests say so and pass, except under CI (`CI` set), where the
//! test command installs it and its absence is a failure.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rules::fsf::{to_fsf_fen, to_fsf_ini, FsfVariant};
use rules::{perft, Position, PromotionMode, Variant};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

mod common;
use common::{engine_or_skip, Engine};

/// The engine with the variant of `exported` (its ini written to `path`) selected.
fn start(bin: &Path, path: &Path, exported: &FsfVariant) -> Engine {
    let (mut e, _) = Engine::spawn(bin);
    e.send(&format!(
        "setoption name VariantPath value {}",
        path.display()
    ));
    e.send(&format!(
        "setoption name UCI_Variant value {}",
        exported.name
    ));
    e.send("isready");
    // An unknown UCI_Variant value is ignored silently; a selected one is announced.
    let announced = format!("info string variant {} ", exported.name);
    let selected = e
        .lines_until("readyok")
        .iter()
        .any(|l| l.starts_with(&announced));
    assert!(selected, "Fairy-Stockfish did not select {}", exported.name);
    e
}

/// The `info` lines of a fixed-depth search from `fen`.
fn search(e: &mut Engine, fen: &str, depth: u32) -> Vec<String> {
    e.send(&format!("position fen {fen}"));
    e.send(&format!("go depth {depth}"));
    e.lines_until("bestmove")
}

fn configs() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs/variants");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Writes the ini where the engine can read it; the file name is unique per test process and
/// `tag` (tests run in parallel).
fn write_ini(exported: &FsfVariant, tag: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "rules-fsf-export-{}-{tag}-{}.ini",
        std::process::id(),
        exported.name
    ));
    std::fs::write(&path, &exported.ini).unwrap();
    path
}

/// Our rules as Fairy-Stockfish plays them: with `shogiPawnDropMateIllegal` it generates a
/// mating pawn drop (and scores it as a loss), so its perft is ours without `drop.no_mate`.
fn as_fsf_counts(v: &Variant, exported: &FsfVariant) -> Arc<Variant> {
    let mut spec = v.spec.clone();
    if exported.ini.contains("\nshogiPawnDropMateIllegal = true\n") {
        for d in spec
            .pieces
            .iter_mut()
            .flatten()
            .filter_map(|p| p.drop.as_mut())
        {
            d.no_mate = Some(false);
        }
    }
    Arc::new(Variant::compile(spec).unwrap())
}

/// Fairy-Stockfish's own validation of the file (`fairy-stockfish check FILE`): it names
/// unknown keys and bad values on stderr.
fn engine_check(bin: &Path, path: &Path, exported: &FsfVariant) {
    let out = Command::new(bin)
        .arg("check")
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("run fairy-stockfish check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| *l != format!("Parsing variant: {}", exported.name))
        .collect();
    assert!(
        complaints.is_empty(),
        "fairy-stockfish check {}: {complaints:?}\n{}",
        path.display(),
        exported.ini
    );
}

/// Perft depth at the start position, depth and number of random positions.
type Depths = (u32, u32, usize);

/// Depths for the variant's board: deeper on the small boards (5x5 and less).
fn depths(v: &Variant) -> Depths {
    match v.num_squares() <= 25 {
        true => (5, 3, 60),
        false => (4, 3, 50),
    }
}

fn check_variant(bin: &Path, v: &Variant, exported: &FsfVariant, seed: u64, depths: Depths) {
    let path = write_ini(exported, "perft");
    engine_check(bin, &path, exported);
    let fsf_rules = as_fsf_counts(v, exported);
    let ours = Arc::new(v.clone());
    let mut engine = start(bin, &path, exported);
    let (start_depth, random_depth, positions) = depths;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut nodes = 0;
    for i in 0..=positions {
        // Position 0 is the start position; the others come from random playouts of our rules.
        let mut pos = Position::start(ours.clone());
        if i > 0 {
            for _ in 0..rng.random_range(1..100) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.make_move(moves[rng.random_range(0..moves.len())]);
            }
        }
        let sfen = pos.to_sfen();
        let fen = to_fsf_fen(&pos);
        let depth = if i == 0 { start_depth } else { random_depth };
        let mut counted = Position::from_sfen(&fsf_rules, &sfen).unwrap();
        let expected = perft(&mut counted, depth);
        let theirs = engine.perft(&fen, depth);
        nodes += theirs;
        assert_eq!(
            expected, theirs,
            "{}: perft {depth} differs from Fairy-Stockfish at {sfen} (fen {fen})",
            v.name
        );
    }
    drop(engine);
    let _ = std::fs::remove_file(&path);
    eprintln!(
        "{}: perft equals Fairy-Stockfish's at the start (depth {start_depth}) and at \
         {positions} random positions (depth {random_depth}), {nodes} nodes",
        v.name
    );
}

#[test]
fn exported_variants_match_fairy_stockfish_perft() {
    let Some(bin) = engine_or_skip() else { return };
    let mut exported = Vec::new();
    for (i, file) in configs().iter().enumerate() {
        let v = Variant::load(file).unwrap();
        match to_fsf_ini(&v) {
            Ok(out) => {
                check_variant(&bin, &v, &out, 100 + i as u64, depths(&v));
                exported.push(v.name.clone());
            }
            Err(e) => eprintln!("not exported: {e}"),
        }
    }
    assert_eq!(exported, EXPORTED, "the configs that export");
}

/// The configs that export to Fairy-Stockfish 11.1, in file order; every other config's
/// refusals are exactly those in `tests/data/fsf-export.txt` and the README's table says the
/// same (both checked below).
const EXPORTED: &[&str] = &["judkins", "kyoto", "micro", "minishogi", "shogi"];

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fsf-export.txt")
}

/// Each config's file stem and its refusals (empty when it exports), in file order.
fn actual_refusals() -> Vec<(String, Vec<String>)> {
    configs()
        .iter()
        .map(|file| {
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            let v = Variant::load(file).unwrap();
            let refusals = match to_fsf_ini(&v) {
                Ok(_) => Vec::new(),
                Err(e) => e.refusals,
            };
            (stem, refusals)
        })
        .collect()
}

fn render(all: &[(String, Vec<String>)]) -> String {
    let mut out = String::from(
        "# Every config in configs/variants and what the Fairy-Stockfish 11.1 export says of it:\n\
         # `exports`, or each rule it refuses. Checked exactly by trainer/rules/tests/fsf_export.rs;\n\
         # rewrite with UPDATE_GOLDEN=1 cargo test -p rules --test fsf_export, then read the diff.\n",
    );
    for (name, refusals) in all {
        out.push_str(&format!("\nvariant {name}\n"));
        if refusals.is_empty() {
            out.push_str("exports\n");
        }
        for r in refusals {
            out.push_str(&format!("refuses {r}\n"));
        }
    }
    out
}

/// The export of every config, refusal by refusal, equals the kept list: a rule that starts or
/// stops exporting, or a reworded reason, shows as a diff to review.
#[test]
fn every_config_exports_or_refuses_exactly_as_kept() {
    let all = actual_refusals();
    let text = render(&all);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(golden_path(), &text).unwrap();
    }
    let kept = std::fs::read_to_string(golden_path()).unwrap();
    for (a, b) in kept.lines().zip(text.lines()) {
        assert_eq!(a, b, "tests/data/fsf-export.txt differs from the export");
    }
    assert_eq!(
        kept, text,
        "tests/data/fsf-export.txt differs from the export"
    );
    let exporting: Vec<&str> = all
        .iter()
        .filter(|(_, r)| r.is_empty())
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(exporting, EXPORTED);
}

/// The README's export table names every config once, says `yes` exactly for those that
/// export, and gives refused rules exactly for those that do not.
#[test]
fn readme_export_table_matches_the_export() {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in readme.lines() {
        if line.starts_with("| variant | exports | refused rules |") {
            in_table = true;
            continue;
        }
        if in_table && !line.starts_with('|') {
            break;
        }
        if in_table && !line.starts_with("|---") {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            for name in cells[1].split(',') {
                rows.push((
                    name.trim().trim_matches('`').to_string(),
                    cells[2] == "yes",
                    !cells[3].is_empty(),
                ));
            }
        }
    }
    let mut names: Vec<&str> = rows.iter().map(|(n, _, _)| n.as_str()).collect();
    names.sort();
    let all = actual_refusals();
    let mut want: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    want.sort();
    assert_eq!(names, want, "README export table: one row per config");
    for (name, yes, reasons) in &rows {
        let exports = all.iter().any(|(n, r)| n == name && r.is_empty());
        assert_eq!(*yes, exports, "README export table: {name}");
        assert_eq!(
            *reasons, !exports,
            "README export table: {name}'s refused rules"
        );
    }
}

/// Variants no config has yet, built from minishogi's config, for the keys the configs leave at
/// one value: drop regions, forced promotion, no drops.
#[test]
fn composed_variants_match_fairy_stockfish_perft() {
    let Some(bin) = engine_or_skip() else { return };
    let base = rules::VariantSpec::builtin("minishogi").unwrap();
    let mut composed = Vec::new();
    let mut spec = base.clone();
    spec.name = Some("minishogi-no-zone-drops".into());
    for p in spec.pieces.iter_mut().flatten().filter(|p| !p.royal) {
        p.drop.get_or_insert_with(Default::default).in_zone = Some(false);
    }
    composed.push(spec);
    let mut spec = base.clone();
    spec.name = Some("minishogi-forced".into());
    for p in spec
        .pieces
        .iter_mut()
        .flatten()
        .filter(|p| p.promoted.is_some())
    {
        p.promotion = Some(PromotionMode::Forced);
    }
    composed.push(spec);
    let mut spec = base.clone();
    spec.name = Some("minishogi-no-drops".into());
    spec.drops.get_or_insert_with(Default::default).enabled = Some(false);
    composed.push(spec);
    for (i, spec) in composed.into_iter().enumerate() {
        let v = Variant::compile(spec).unwrap();
        let out = to_fsf_ini(&v).unwrap_or_else(|e| panic!("{e}"));
        check_variant(&bin, &v, &out, 200 + i as u64, depths(&v));
    }
}

/// Each piece type the exporter maps to moves as in Fairy-Stockfish: minishogi with its silver
/// replaced by a non-promoting piece of that movement. Types minishogi already has are refused
/// as duplicates and covered by the configs.
#[test]
fn every_mapped_piece_type_moves_as_in_fairy_stockfish() {
    let Some(bin) = engine_or_skip() else { return };
    // The Betza of Fairy-Stockfish 11.1's step-and-slide types (src/piece.cpp), as rules::fsf
    // maps them.
    let types = [
        "K", "N", "B", "R", "Q", "F", "A", "FA", "FfW", "RNF", "RF", "BN", "RN", "QN", "mNcB",
        "mBcN", "mNcR", "mRcN", "fW", "fR", "ffN", "ffNsW", "WfF", "BW", "mfWfF", "mRcpR", "fsW",
        "W", "KN",
    ];
    let mut checked = 0;
    for (i, betza) in types.into_iter().enumerate() {
        let mut spec = rules::VariantSpec::builtin("minishogi").unwrap();
        spec.name = Some(format!("minishogi-S-{betza}"));
        for p in spec.pieces.iter_mut().flatten().filter(|p| p.letter == "S") {
            p.betza = betza.to_string();
            p.promoted = None;
        }
        let v = Variant::compile(spec).unwrap();
        match to_fsf_ini(&v) {
            Ok(out) => {
                check_variant(&bin, &v, &out, 300 + i as u64, (4, 3, 15));
                checked += 1;
            }
            Err(e) if e.refusals.iter().all(|r| r.contains(" both move as ")) => {
                eprintln!("{betza}: minishogi has this piece type already");
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(checked >= 20, "only {checked} piece types checked");
}

/// The refusals of the configs Fairy-Stockfish 11.1 cannot play name each rule in the way.
#[test]
fn unexportable_variants_name_their_rules() {
    let expected: &[(&str, &[&str])] = &[
        (
            "cannon-shosu",
            &[
                "piece A (silver cannon): betza \"mBcpB\" jumps over a piece",
                "piece D (dog): betza \"bFfW\"",
                "piece +C (rook general): betza \"R(paf)2cR\" jumps over up to 2 pieces",
                "piece +A (bishop general): betza \"B(paf)2cB\" jumps over up to 2 pieces",
                "piece +G (drunk elephant): betza \"FfsW\"",
                "piece +L (vertical mover): betza \"WvR\"",
                "piece +D (side mover): betza \"WsR\"",
                "promoted form +S (promoted silver) moves as Fairy-Stockfish's gold",
            ],
        ),
        (
            "hand",
            &[
                "piece T (tycoon): betza \"B3\" slides at most 3 squares",
                "piece U (shogun): betza \"R3\"",
                "piece D (pard): betza \"AD\"",
                "piece O (onager): betza \"D\"",
                "drops of O (onager) must give check",
                "drops of H (hasty) must give check",
                "drops of P (soldier) may not go to a file holding an own unpromoted P",
                "drops of N (knight) are kept off some ranks (drop.in_zone = false)",
                "piece L (lance) may move unpromoted to a square where it can never move again",
            ],
        ),
        (
            "sho",
            &[
                "promoted form +E (crown prince) is royal",
                "piece E (drunk elephant): betza \"FsfW\"",
            ],
        ),
        (
            "cannon",
            &[
                "piece A (silver cannon): betza \"pR\"",
                "piece C (copper cannon): betza \"mBcpB\"",
                "piece I (iron cannon): betza \"pB\"",
                "piece +U (flying silver): betza \"mRpRmFpB2\"",
            ],
        ),
    ];
    for &(name, reasons) in expected {
        let v = Variant::builtin(name).unwrap();
        let err = to_fsf_ini(&v).expect_err(name);
        let text = err.to_string();
        for r in reasons {
            assert!(
                err.refusals.iter().any(|x| x.contains(r)),
                "{name}: no refusal containing {r:?} in\n{text}"
            );
        }
    }
    for name in ["shogi", "minishogi"] {
        let v = Variant::builtin(name).unwrap();
        if let Err(e) = to_fsf_ini(&v) {
            panic!("{e}");
        }
    }
}

/// `drop.no_mate` maps to `shogiPawnDropMateIllegal`, which Fairy-Stockfish applies as a game
/// result: in a position whose only mate is a pawn drop it must not find a mate in one, and
/// without the key it does.
#[test]
fn pawn_drop_mate_is_not_a_mate_in_fairy_stockfish() {
    let Some(bin) = engine_or_skip() else { return };
    let v = Variant::builtin("shogi").unwrap();
    let exported = to_fsf_ini(&v).unwrap();
    // Gote's king on 1a; P*1b checks it, the knight on 2d guards the pawn and the gold on 3b
    // covers 2a and 2b. No other sente move mates, and gote's pawn on 9e keeps a quiet sente
    // move from stalemating gote (a loss for gote too).
    let sfen = "8k/6G2/9/7N1/p8/9/9/9/4K4 b P 1";
    let pos = Position::from_sfen(&Arc::new(v), sfen).unwrap();
    let fen = to_fsf_fen(&pos);
    let mate_in_one = |ini: &FsfVariant, tag: &str| {
        let path = write_ini(ini, tag);
        let mut engine = start(&bin, &path, ini);
        let info = search(&mut engine, &fen, 3);
        drop(engine);
        let _ = std::fs::remove_file(&path);
        info.iter().any(|l| l.contains(" score mate 1 "))
    };
    assert!(
        !mate_in_one(&exported, "mate"),
        "{fen}: Fairy-Stockfish mates by a pawn drop"
    );
    let without = FsfVariant {
        name: exported.name.clone(),
        ini: exported.ini.replace(
            "\nshogiPawnDropMateIllegal = true\n",
            "\nshogiPawnDropMateIllegal = false\n",
        ),
    };
    assert!(
        mate_in_one(&without, "mate-off"),
        "{fen}: the position has no pawn-drop mate"
    );
}
