//! Piece powers any variant can use, on small composed boards: hook moves (a ride turning 90
//! degrees once; Dai-dai shogi's hook mover and long-nosed goblin), the Lion power along a line
//! (the Lion Dog) and promotion by capture. Tenjiku shogi's powers are in tests/tenjiku.rs.
//! Squares are USI: file 5..1 (9..1 on the Lion Dog board) from left to right, rank a down.

use rules::{perft, Color, EndReason, Move, Position, Variant};
use std::sync::Arc;

mod support;
use support::*;

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Minishogi with a hook mover `H` (a rook whose ride may turn once) and a diagonal one `J`
/// (a bishop whose ride may turn once); `hooks` replaces their hook keys (a deliberate break).
fn hooked(hooks: (&str, &str)) -> Arc<Variant> {
    let text = format!(
        r#"
name = "hooks"
extends = "minishogi"
[[pieces]]
letter = "H"
name = "hook mover"
betza = "R"
{}
[[pieces]]
letter = "J"
name = "long-nosed goblin"
betza = "B"
{}
"#,
        hooks.0, hooks.1
    );
    load_text("hooks", &text).unwrap()
}

/// A variant from the text of a config file, written to a file first so that `extends`
/// resolves (to a built-in variant); `name` prefixes the file's name.
fn load_text(name: &str, text: &str) -> Result<Arc<Variant>, rules::Error> {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{name}-{}-{n}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let v = Variant::load(&path);
    let _ = std::fs::remove_file(&path);
    v.map(Arc::new)
}

fn with_hooks() -> Arc<Variant> {
    hooked(("hook = \"R\"", "hook = \"B\""))
}

fn position(v: &Arc<Variant>, pieces: &[(&str, &str)], side: &str) -> Position {
    composed(v, pieces, &format!("{side} -"))
}

#[test]
fn a_hook_mover_turns_once_at_an_empty_square() {
    // The hook mover on 3c, an own pawn above it (3b), gote pawns on 4c and 1b, the kings on
    // 5e and 1a. Down: 3d 3e, turning at 3d to 4d 5d and 2d 1d, at 3e to 4e (the king on 5e
    // stops it) and 2e 1e. Left: it takes 4c, and no turn there. Right: 2c 1c, turning at 2c up
    // to 2b 2a and down to 2d 2e, at 1c up to take 1b and down to 1d 1e. Up: nothing.
    let v = with_hooks();
    let p = position(
        &v,
        &[
            ("5e", "K"),
            ("3c", "H"),
            ("3b", "P"),
            ("4c", "p"),
            ("1b", "p"),
            ("1a", "k"),
        ],
        "b",
    );
    let want = [
        "3d", "3e", "4d", "5d", "2d", "1d", "4e", "2e", "1e", "4c", "2c", "1c", "2b", "2a", "1b",
    ];
    assert_eq!(dests(&p, "3c"), set(&want));
    assert_eq!(moves_with(&p, "3c").len(), want.len(), "each move once");
    // Break: without its hook only the rook's moves are left.
    let plain = hooked(("", "hook = \"B\""));
    let p = position(
        &plain,
        &[
            ("5e", "K"),
            ("3c", "H"),
            ("3b", "P"),
            ("4c", "p"),
            ("1b", "p"),
            ("1a", "k"),
        ],
        "b",
    );
    assert_eq!(dests(&p, "3c"), set(&["3d", "3e", "4c", "2c", "1c"]));
}

#[test]
fn a_diagonal_hook_turns_at_right_angles() {
    // The goblin on 3c with the kings on 5e and 4a (a square of the other colour). First legs:
    // 4d (5e is the own king), 2b 1a, 4b 5a, 2d 1e; turns at right angles: at 4d to 5c and 3e,
    // at 2b to 1c and 3a, at 4b to 5c and 3a, at 2d to 1c and 3e (the corners turn off the
    // board). That is every square of 3c's colour but 3c and the own king's: 11.
    let v = with_hooks();
    let p = position(&v, &[("5e", "K"), ("3c", "J"), ("4a", "k")], "b");
    let same_colour: Vec<String> = (1..=5)
        .flat_map(|f| "abcde".chars().map(move |r| (f, r)))
        .filter(|&(f, r)| (f + (r as usize - 'a' as usize)) % 2 == 1)
        .map(|(f, r)| format!("{f}{r}"))
        .filter(|s| s != "3c" && s != "5e")
        .collect();
    assert_eq!(same_colour.len(), 11);
    let want: Vec<&str> = same_colour.iter().map(String::as_str).collect();
    assert_eq!(dests(&p, "3c"), set(&want));
    // Break: without the hook, the bishop's diagonals only.
    let plain = hooked(("hook = \"R\"", ""));
    let p = position(&plain, &[("5e", "K"), ("3c", "J"), ("4a", "k")], "b");
    assert_eq!(
        dests(&p, "3c"),
        set(&["4d", "2b", "1a", "4b", "5a", "2d", "1e"])
    );
}

#[test]
fn a_hook_gives_check_around_a_corner() {
    // Gote's king on 2a is attacked by the hook mover on 3c through 2c: gote is in check, and
    // the same position with sente to move is refused (the side not to move in check).
    let v = with_hooks();
    let p = position(
        &v,
        &[("5e", "K"), ("3c", "H"), ("3b", "P"), ("2a", "k")],
        "w",
    );
    assert!(p.in_check());
    assert!(p.legal_moves().iter().all(|&m| {
        let mut q = p.clone();
        q.make_move(m);
        !q.is_attacked(
            q.king_square(rules::Color::Gote).unwrap(),
            rules::Color::Sente,
        )
    }));
    let sfen = p.to_sfen().replace(" w ", " b ");
    assert!(Position::from_sfen_composed(&v, &sfen).is_err());
    // Break: a rook alone does not reach 2a.
    let plain = hooked(("", "hook = \"B\""));
    let p = position(
        &plain,
        &[("5e", "K"), ("3c", "H"), ("3b", "P"), ("2a", "k")],
        "w",
    );
    assert!(!p.in_check());
}

/// The 9x9 Lion Dog test board (`tests/data/variants/lion-dogs.toml`), its text changed by
/// `edit` (a deliberate break), or the error its compiler gives.
fn lion_dogs_edited(edit: impl Fn(String) -> String) -> Result<Arc<Variant>, rules::Error> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/variants/lion-dogs.toml"
    );
    let text = edit(std::fs::read_to_string(path).unwrap());
    load_text("lion-dogs", &text)
}

fn lion_dogs() -> Arc<Variant> {
    lion_dogs_edited(|t| t).unwrap()
}

/// The 24 jumps of a piece on 5e of a 9x9 board to the first three squares of its eight lines.
fn jumps_from_5e() -> Vec<String> {
    let mut out = Vec::new();
    for (dx, dy) in [
        (0, 1),
        (0, -1),
        (1, 0),
        (-1, 0),
        (1, 1),
        (1, -1),
        (-1, 1),
        (-1, -1),
    ] {
        for k in 1..=3i32 {
            let (file, rank) = (5 - dx * k, 4 - dy * k);
            out.push(format!("{file}{}", (b'a' + rank as u8) as char));
        }
    }
    out
}

#[test]
fn a_lion_dog_alone_jumps_to_three_squares_of_each_line() {
    let v = lion_dogs();
    let p = position(&v, &[("9i", "K"), ("5e", "D"), ("1b", "k")], "b");
    let want = jumps_from_5e();
    assert_eq!(want.len(), 24);
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    assert_eq!(dests(&p, "5e"), set(&want));
    assert_eq!(
        moves_with(&p, "5e").len(),
        24,
        "no move of several steps without a capture"
    );
}

#[test]
fn a_lion_dog_takes_on_its_way_along_one_line() {
    // Gote pawns on 5d and 5c, 5b empty. Beyond the 24 jumps (two of them captures), forward:
    // take 5d and go on to 5c (taking it), take 5d and come back (igui), take 5c and come
    // back to 5d (taking it), take 5d and jump 5c to 5b, jump 5d to take 5c and step to 5b,
    // take both on the way to 5b: 6 more. No line turns, nothing goes behind 5e.
    let v = lion_dogs();
    let p = position(
        &v,
        &[
            ("9i", "K"),
            ("5e", "D"),
            ("5d", "p"),
            ("5c", "p"),
            ("1b", "k"),
        ],
        "b",
    );
    let mut want: Vec<String> = jumps_from_5e().iter().map(|t| format!("5e{t}")).collect();
    want.extend(
        ["5e5d5c", "5e5d5e", "5e5c5d", "5e5d5b", "5e5c5b", "5e5d5c5b"]
            .iter()
            .map(|s| s.to_string()),
    );
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    assert_eq!(moves_with(&p, "5e"), set(&want));
    assert_eq!(p.legal_moves().len(), 30 + 3, "and the king's three");
    for usi in ["5e5d5c5b", "5e5c5d", "5e5d5b"] {
        assert_legal(&p, usi);
    }
    assert!(matches!(p.parse_usi("5e5d5c5b"), Ok(Move::Line { .. })));
    // Four squares that are not a line's ends and the two between it: refused.
    assert!(p.parse_usi("5e5d5b5a").is_err());
    assert!(p.parse_usi("5e4d3c2b").is_err());
    // A friendly piece on 5d: no jump there and no way through it to take 5c and come back;
    // 5c is taken by the jump, then on to 5b (5e5c5b): 24 in all.
    let p = position(
        &v,
        &[
            ("9i", "K"),
            ("5e", "D"),
            ("5d", "P"),
            ("5c", "p"),
            ("1b", "k"),
        ],
        "b",
    );
    assert_eq!(moves_with(&p, "5e").len(), 24);
    assert_legal(&p, "5e5c5b");
    assert_illegal(&p, "5e5c5d");
    // At the edge: on 5b with a pawn on 5a, the line is one square long: take it and stay.
    let p = position(
        &v,
        &[("9i", "K"), ("5b", "D"), ("5a", "p"), ("1e", "k")],
        "b",
    );
    let forward: Vec<String> = moves_with(&p, "5b")
        .into_iter()
        .filter(|m| m[2..].starts_with("5a") || m == "5b5a5b")
        .collect();
    assert_eq!(forward, vec!["5b5a".to_string(), "5b5a5b".to_string()]);
}

#[test]
fn a_three_step_move_takes_both_pieces_and_undoes() {
    let v = lion_dogs();
    let mut p = position(
        &v,
        &[
            ("9i", "K"),
            ("5e", "D"),
            ("5d", "p"),
            ("5c", "p"),
            ("1b", "k"),
        ],
        "b",
    );
    let (before, hash) = (p.to_sfen(), p.hash());
    play(&mut p, "5e5d5c5b");
    // Both pawns gone; the Lion Dog took, so it promoted (promotion by capture).
    let want = position(&v, &[("9i", "K"), ("5b", "+D"), ("1b", "k")], "w");
    let board = |s: String| s.rsplit_once(' ').unwrap().0.to_string();
    assert_eq!(board(p.to_sfen()), board(want.to_sfen()));
    p.unmake_move();
    assert_eq!((p.to_sfen(), p.hash()), (before, hash));
}

#[test]
fn a_furious_fiend_makes_each_move_once() {
    // The Lion's two steps and the Lion Dog's line share two moves per line (take the first
    // square and go on to the second, or come back): each is generated once.
    let v = lion_dogs();
    let p = position(
        &v,
        &[
            ("9i", "K"),
            ("5e", "F"),
            ("5d", "p"),
            ("5c", "p"),
            ("4d", "p"),
            ("1b", "k"),
        ],
        "b",
    );
    let all: Vec<String> = p.legal_moves().iter().map(|&m| p.move_to_usi(m)).collect();
    let unique: std::collections::BTreeSet<&String> = all.iter().collect();
    assert_eq!(all.len(), unique.len(), "{all:?}");
    for usi in ["5e5d5c", "5e5d5e", "5e5c5d", "5e5d5c5b", "5e4d3c", "5e5d4d"] {
        assert_legal(&p, usi);
    }
}

#[test]
fn promotion_by_capture_happens_anywhere_and_only_on_a_capture() {
    let v = lion_dogs();
    let mut p = position(
        &v,
        &[
            ("9i", "K"),
            ("5f", "P"),
            ("5e", "p"),
            ("1f", "P"),
            ("1b", "k"),
        ],
        "b",
    );
    // No `+` moves: promotion is not a choice.
    assert!(moves(&p).iter().all(|m| !m.ends_with('+')));
    assert_illegal(&p, "5f5e+");
    play(&mut p, "1f1e");
    assert_eq!(
        p.piece_at(v.parse_square("1e").unwrap()).kind(),
        1,
        "a plain move: a pawn"
    );
    play(&mut p, "1b2b 5f5e");
    let gold = v.kinds.iter().position(|k| k.name == "gold").unwrap();
    assert_eq!(
        p.piece_at(v.parse_square("5e").unwrap()).kind() as usize,
        gold
    );
    // A capture without moving (igui) promotes too.
    let mut p = position(
        &v,
        &[("9i", "K"), ("5e", "D"), ("5d", "p"), ("1b", "k")],
        "b",
    );
    play(&mut p, "5e5d5e");
    assert!(v.kinds[p.piece_at(v.parse_square("5e").unwrap()).kind() as usize].promoted);
}

#[test]
fn broken_lion_line_and_capture_promotion_configs_are_refused() {
    let err = |edit: &dyn Fn(String) -> String| match lion_dogs_edited(edit) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("the broken config loaded"),
    };
    // The line needs the jumps in betza.
    let e = err(&|t| t.replacen("betza = \"KADGH\"", "betza = \"KAD\"", 1));
    assert!(
        e.contains("pieces[2].lion_line") && e.contains("3 steps"),
        "{e}"
    );
    // Two or three steps only.
    let e = err(&|t| t.replacen("lion_line = \"Q3\"", "lion_line = \"Q4\"", 1));
    assert!(
        e.contains("pieces[2].lion_line") && e.contains("range 4"),
        "{e}"
    );
    let e = err(&|t| t.replacen("lion_line = \"Q3\"", "lion_line = \"Q\"", 1));
    assert!(e.contains("pieces[2].lion_line"), "{e}");
    // Promotion by capture has no zone.
    let e = err(&|t| t.replace("moves = \"capture\"", "moves = \"capture\"\nzone_depth = 3"));
    assert!(e.contains("promotion.zone_depth"), "{e}");
    // Without the line power, the Lion Dog only jumps: the test board's captures on the way
    // are gone (the break a test must catch).
    let plain = lion_dogs_edited(|t| t.replacen("lion_line = \"Q3\"\n", "", 1)).unwrap();
    let p = position(
        &plain,
        &[
            ("9i", "K"),
            ("5e", "D"),
            ("5d", "p"),
            ("5c", "p"),
            ("1b", "k"),
        ],
        "b",
    );
    assert_eq!(moves_with(&p, "5e").len(), 24);
}

#[test]
fn a_jump_along_a_ride_is_generated_once() {
    // The test board's promoted Lion Dog rides as a queen and jumps to the second and third
    // squares of each line (`QADGH`): on 5e of an empty board its jumps are the ride's own
    // squares, 32 moves each once. With its own pawns on 5d and 5c the ride up stops, and the
    // jump over both reaches 5b: 32 - 4 + 1.
    let v = lion_dogs();
    let p = position(&v, &[("9h", "K"), ("5e", "+D"), ("1b", "k")], "b");
    let all: Vec<String> = p.legal_moves().iter().map(|&m| p.move_to_usi(m)).collect();
    let from_5e = all.iter().filter(|m| m.starts_with("5e")).count();
    assert_eq!(from_5e, 32, "{all:?}");
    assert_eq!(moves_with(&p, "5e").len(), 32, "each once");
    let p = position(
        &v,
        &[
            ("9h", "K"),
            ("5e", "+D"),
            ("5d", "P"),
            ("5c", "P"),
            ("1b", "k"),
        ],
        "b",
    );
    assert_eq!(moves_with(&p, "5e").len(), 29);
    assert_legal(&p, "5e5b");
    assert_illegal(&p, "5e5a");
}

/// The Lion Dog test board with a contagious deva `E` (its promoted form the teaching king,
/// the test board's `QADGH` Lion Dog), `contagious` set as given.
fn with_deva(contagious: &str) -> Result<Arc<Variant>, rules::Error> {
    lion_dogs_edited(|t| {
        format!(
            "{t}\n[[pieces]]\nletter = \"E\"\nname = \"deva\"\nbetza = \"fFsW\"\n{contagious}\n\
             promoted = {{ name = \"teaching king\", betza = \"QADGH\", lion_line = \"Q3\" }}\n"
        )
    })
}

#[test]
fn a_contagious_piece_makes_its_captor_its_promoted_form() {
    let v = with_deva("contagious = true").unwrap();
    let name = |p: &Position, sq: &str| {
        let piece = p.piece_at(v.parse_square(sq).unwrap());
        v.kinds[piece.kind() as usize].name.clone()
    };
    // What the piece `taker` on 5e is after the move `usi` takes `victim` on 5d.
    let after = |taker: &str, victim: &str, usi: &str| {
        let pieces = [("9i", "K"), ("5e", taker), ("5d", victim), ("1a", "k")];
        let mut p = position(&v, &pieces, "b");
        play(&mut p, usi);
        name(&p, &usi[usi.len() - 2..])
    };
    // A pawn that takes the deva becomes a teaching king, not a gold; so does a lion dog
    // taking it on the way (igui), and a pawn taking a teaching king.
    assert_eq!(after("P", "e", "5e5d"), "teaching king");
    assert_eq!(after("D", "e", "5e5d5e"), "teaching king");
    assert_eq!(after("P", "+e", "5e5d"), "teaching king");
    // A king stays a king; undoing restores the taker.
    let mut p = position(&v, &[("5e", "K"), ("5d", "e"), ("1a", "k")], "b");
    play(&mut p, "5e5d");
    assert_eq!(name(&p, "5d"), "king");
    p.unmake_move();
    assert_eq!(
        (name(&p, "5e"), name(&p, "5d")),
        ("king".into(), "deva".into())
    );
    // Break: without the key the pawn promotes as on any capture, to a gold.
    let plain = with_deva("").unwrap();
    let mut p = position(
        &plain,
        &[("9i", "K"), ("5e", "P"), ("5d", "e"), ("1a", "k")],
        "b",
    );
    play(&mut p, "5e5d");
    let piece = p.piece_at(plain.parse_square("5d").unwrap());
    assert_eq!(plain.kinds[piece.kind() as usize].name, "gold");
    // A contagious piece needs a promoted form.
    let e = lion_dogs_edited(|t| {
        format!("{t}\n[[pieces]]\nletter = \"E\"\nbetza = \"fFsW\"\ncontagious = true\n")
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("pieces[4].contagious") && e.contains("promoted form"),
        "{e}"
    );
}

/// The Lion Dog test board with an emperor `M` (steps that never capture, and
/// `leap_anywhere` as given).
fn with_emperor(anywhere: &str) -> Arc<Variant> {
    lion_dogs_edited(|t| {
        format!("{t}\n[[pieces]]\nletter = \"M\"\nname = \"emperor\"\nbetza = \"mK\"\n{anywhere}\n")
    })
    .unwrap()
}

#[test]
fn an_emperor_leaps_anywhere_but_takes_only_unprotected_pieces() {
    let v = with_emperor("leap_anywhere = true");
    // Sente's emperor on 5e, kings on 9i and 1a, gote's gold (`+p`) on 2a guarding its king: every
    // empty square of the 81, none of the two gote pieces (each guards the other).
    let base = [("9i", "K"), ("5e", "M"), ("1a", "k"), ("2a", "+p")];
    let p = position(&v, &base, "b");
    assert_eq!(moves_with(&p, "5e").len(), 81 - 4);
    assert_illegal(&p, "5e2a");
    // A lone gote pawn on 5a is taken; one on 3b, next to the gold, is protected.
    let p = position(
        &v,
        &[base.as_slice(), &[("5a", "p"), ("3b", "p")]].concat(),
        "b",
    );
    assert_legal(&p, "5e5a");
    assert_illegal(&p, "5e3b");
    // Protection counts with the emperor gone from its square: gote's queen-riding lion dog
    // (`+d`) on 5a sees down file 5 once the emperor leaves 5e, so the pawn on 5h is
    // protected, the one on 4h not.
    let p = position(
        &v,
        &[base.as_slice(), &[("5a", "+d"), ("5h", "p"), ("4h", "p")]].concat(),
        "b",
    );
    assert_illegal(&p, "5e5h");
    assert_legal(&p, "5e4h");
    // Two emperors: gote's on 9a would take sente's on 5c unless a sente piece guards it
    // there, so the pawn on 5c is protected until a sente gold (`+P`) stands on 5d; sente's emperor
    // takes gote's, which nothing guards.
    let two = [base.as_slice(), &[("9a", "m"), ("5c", "p")]].concat();
    let p = position(&v, &two, "b");
    assert_illegal(&p, "5e5c");
    assert_legal(&p, "5e9a");
    let p = position(&v, &[two.as_slice(), &[("5d", "+P")]].concat(), "b");
    assert_legal(&p, "5e5c");
    // An unguarded king is in check from the emperor; guarded, it is not.
    let p = position(&v, &[("9i", "K"), ("5e", "M"), ("1a", "k")], "w");
    assert!(p.in_check());
    let p = position(&v, &base, "w");
    assert!(!p.in_check());
    // Break: without the key the emperor only steps.
    let stepper = with_emperor("");
    let p = position(&stepper, &base, "b");
    assert_eq!(moves_with(&p, "5e").len(), 8);
}

/// The Lion Dog test board with a gold `G` that does not promote and a silver `S` whose
/// promotion (by capture) is `promotes`: a `promotes_to` line or a `promoted` form.
fn with_silver(promotes: &str) -> Result<Arc<Variant>, rules::Error> {
    lion_dogs_edited(|t| {
        format!(
            "{t}\n[[pieces]]\nletter = \"G\"\nname = \"gold general\"\nbetza = \"WfF\"\n\n\
             [[pieces]]\nletter = \"S\"\nname = \"silver general\"\nbetza = \"FfW\"\n{promotes}\n"
        )
    })
}

#[test]
fn a_piece_promotes_into_an_existing_kind() {
    let v = with_silver("promotes_to = \"G\"").unwrap();
    let pieces = [("9i", "K"), ("5e", "S"), ("5d", "p"), ("1a", "k")];
    let mut p = position(&v, &pieces, "b");
    // The silver takes and is a gold general, written `G`, with no kind of its own: the board's
    // kinds are the 4 pieces and 2 promoted forms of the test board, plus G and S.
    assert_eq!(v.kinds.len(), 8);
    play(&mut p, "5e5d");
    let piece = p.piece_at(v.parse_square("5d").unwrap());
    assert_eq!(v.kinds[piece.kind() as usize].name, "gold general");
    assert!(p.to_sfen().starts_with("8k/9/9/4G4/"), "{}", p.to_sfen());
    // Undo gives the silver back; a plain move does not promote.
    p.unmake_move();
    assert_eq!(p.to_sfen(), position(&v, &pieces, "b").to_sfen());
    play(&mut p, "5e4d");
    let piece = p.piece_at(v.parse_square("4d").unwrap());
    assert_eq!(v.kinds[piece.kind() as usize].name, "silver general");
    // There is no promoted silver to write.
    let e = Position::from_sfen(&v, "8k/9/9/9/4+S4/9/9/9/K8 b - 1").unwrap_err();
    assert!(e.to_string().contains("+S"), "{e}");
    // Break: a promoted form of its own is one kind more, and not the gold.
    let own = with_silver("promoted = { name = \"gold general\", betza = \"WfF\" }").unwrap();
    assert_eq!(own.kinds.len(), 9);
    // Refused: both keys, an unknown letter, a target that promotes itself (the pawn), and
    // promotion in a zone instead of by capture.
    for (text, why) in [
        (
            "promotes_to = \"G\"\npromoted = { name = \"x\", betza = \"K\" }",
            "not both",
        ),
        ("promotes_to = \"Z\"", "not the letter of a piece"),
        ("promotes_to = \"P\"", "promote again"),
    ] {
        let e = with_silver(text).unwrap_err().to_string();
        assert!(
            e.contains("pieces[5].promotes_to") && e.contains(why),
            "{text}: {e}"
        );
    }
    let e = lion_dogs_edited(|t| {
        format!(
            "{}\n[[pieces]]\nletter = \"G\"\nbetza = \"WfF\"\n\n[[pieces]]\nletter = \"S\"\n\
             betza = \"FfW\"\npromotes_to = \"G\"\n",
            t.replace("[promotion]\nmoves = \"capture\"\n", "")
        )
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("promotion by capture"), "{e}");
}

#[test]
fn a_side_may_start_with_two_royal_kinds() {
    // A crown prince `J` that starts on the board (Tai shogi's emperor and prince), kings
    // captured (royal capture): sente loses nothing with its king, and loses with the prince.
    let prince = |royal: &str| {
        lion_dogs_edited(|t| {
            format!(
                "{t}\n[[pieces]]\nletter = \"J\"\nname = \"prince\"\nbetza = \"K\"\n{royal}\n\n\
                 [end]\nroyal_capture = true\n"
            )
        })
        .unwrap()
    };
    let v = prince("royal = true");
    let pieces = [("9i", "K"), ("1i", "J"), ("9a", "+d"), ("1a", "k")];
    let mut p = position(&v, &pieces, "w");
    assert_eq!(p.royal_count(Color::Sente), 2);
    play(&mut p, "9a9i");
    assert_eq!(p.outcome(), None);
    play(&mut p, "1i2i 9i2i");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
    // Break: a prince that is not royal, and the king's capture ends the game.
    let v = prince("");
    let mut p = position(&v, &pieces, "w");
    play(&mut p, "9a9i");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
}

/// Shogi with a mountain crane `C` (a queen that may also jump over one, two or three squares
/// and ride on: `skip_over = [1, 2, 3]`) and a king of teachings `T` (jumps to the third
/// square and rides on: `skip_over = [2]`); `crane` and `teacher` are their skip keys.
fn jumping_riders(crane: &str, teacher: &str) -> Result<Arc<Variant>, rules::Error> {
    let text = format!(
        r#"
name = "jumping-riders"
extends = "shogi"
[[pieces]]
letter = "C"
name = "mountain crane"
betza = "Q"
{crane}
[[pieces]]
letter = "T"
name = "king of teachings"
betza = "HG"
{teacher}
"#
    );
    load_text("jumping", &text)
}

const CRANE: &str = "skip_first = \"Q\"\nskip_over = [1, 2, 3]";
const TEACHER: &str = "skip_first = \"Q\"\nskip_over = [2]";

#[test]
fn rides_that_jump_over_several_squares() {
    let v = jumping_riders(CRANE, TEACHER).unwrap();
    // The crane on 5e. Up: its own pawn on 5d blocks the queen's ride; the jump over one
    // square takes gote's pawn on 5c, over two lands on 5b and rides on to 5a, over three
    // lands on 5a. Left: gote pawns on 6e..9e, each taken by the ride or one of the jumps.
    // Down: own pawns on 5f, 5g, 5h: only the jump over three reaches 5i. Up-right: own pawn
    // on 2b: the ride and the jump over one reach 4d and 3c, the jump over three 1a. Right and
    // the three other diagonals are empty: four squares each.
    let pieces = [
        ("9h", "K"),
        ("1b", "k"),
        ("5e", "C"),
        ("5d", "P"),
        ("5c", "p"),
        ("6e", "p"),
        ("7e", "p"),
        ("8e", "p"),
        ("9e", "p"),
        ("5f", "P"),
        ("5g", "P"),
        ("5h", "P"),
        ("2b", "P"),
    ];
    let p = position(&v, &pieces, "b");
    let want = set(&[
        "5c", "5b", "5a", "6e", "7e", "8e", "9e", "5i", "4d", "3c", "1a", "4e", "3e", "2e", "1e",
        "6d", "7c", "8b", "9a", "4f", "3g", "2h", "1i", "6f", "7g", "8h", "9i",
    ]);
    assert_eq!(want.len(), 27);
    let got: std::collections::BTreeSet<String> = dests(&p, "5e")
        .into_iter()
        .map(|m| m.trim_end_matches('+').to_string())
        .collect();
    assert_eq!(got, want);
    // The king of teachings in the crane's place: only the jumps to the third square (5b; it
    // takes 8e, which ends the move; 5h and 2b are its own pawns; 2e, 8h, 2h, 8b) and the
    // rides on from there (5a; 1e; 9i; 1i; 9a), plus its leaps H and G, which land on the
    // same squares.
    let mut teacher = pieces;
    teacher[2] = ("5e", "T");
    let p = position(&v, &teacher, "b");
    let got: std::collections::BTreeSet<String> = dests(&p, "5e")
        .into_iter()
        .map(|m| m.trim_end_matches('+').to_string())
        .collect();
    assert_eq!(
        got,
        set(&["5b", "5a", "8e", "2e", "1e", "8b", "9a", "8h", "9i", "2h", "1i"])
    );
}

#[test]
fn a_jump_over_three_squares_gives_check() {
    // Gote's king on 5a, three pieces between it and the crane on 5e (sente's pawns on 5d and
    // 5c, gote's gold on 5b): in check only with the jump over three squares.
    let pieces = [
        ("9i", "K"),
        ("5a", "k"),
        ("5e", "C"),
        ("5d", "P"),
        ("5c", "P"),
        ("5b", "g"),
    ];
    let v = jumping_riders(CRANE, TEACHER).unwrap();
    assert!(position(&v, &pieces, "w").in_check());
    let v = jumping_riders("skip_first = \"Q\"\nskip_over = [1, 2]", TEACHER).unwrap();
    assert!(!position(&v, &pieces, "w").in_check());
    // And without skip_over, the tetrarchs' jump over one square only.
    let v = jumping_riders("skip_first = \"Q\"", TEACHER).unwrap();
    assert!(!position(&v, &pieces, "w").in_check());
}

#[test]
fn broken_skip_over_keys_are_refused() {
    for (keys, reason) in [
        ("skip_over = [1, 2]", "needs skip_first"),
        ("skip_first = \"Q\"\nskip_over = [0]", "0 squares"),
        ("skip_first = \"Q\"\nskip_over = [35]", "35 squares"),
        ("skip_first = \"Q\"\nskip_over = []", "at least one"),
        ("skip_first = \"Q\"\nskip_over = [1, \"fB\"]", "a colon"),
        ("skip_first = \"Q\"\nskip_over = [\"0:fB\"]", "0 squares"),
        ("skip_first = \"Q\"\nskip_over = [\"2:N\"]", "only plain"),
    ] {
        let e = jumping_riders(keys, TEACHER).unwrap_err().to_string();
        assert!(e.contains("skip_over") && e.contains(reason), "{keys}: {e}");
    }
}

/// Shogi without drops, won by capturing the king, with a great general `Q` (a queen of rank
/// 2 that range-captures along its lines; `sweep` its extra keys) and gote's vice general
/// `V` (a rank-1 range-capturing bishop); `rules` replaces the drop and end rules.
fn sweepers(sweep: &str, rules: &str) -> Result<Arc<Variant>, rules::Error> {
    let text = format!(
        r#"
name = "sweepers"
extends = "shogi"
{rules}
[[pieces]]
letter = "Q"
name = "great general"
betza = "Q"
rank = 2
range_capture = "Q"
{sweep}
[[pieces]]
letter = "V"
name = "vice general"
betza = "B"
rank = 1
range_capture = "B"
"#
    );
    load_text("sweepers", &text)
}

const NO_DROPS: &str = "[drops]\nenabled = false\n[end]\nroyal_capture = true";

#[test]
fn a_sweep_takes_every_piece_it_jumps() {
    // The great general on 5e. Up: its own pawn on 5d, gote's pawn on 5c, 5b empty, gote's
    // silver on 5a. Jumping 5d it takes 5c, and sweeping on it ends on 5b or takes 5a. Right:
    // gote's vice general on 4e (rank 1, jumped) and great general on 3e (rank 2, taken but
    // not jumped), so never 2e.
    let pieces = [
        ("8i", "K"),
        ("1b", "k"),
        ("5e", "Q"),
        ("5d", "P"),
        ("5c", "p"),
        ("5a", "s"),
        ("4e", "v"),
        ("3e", "q"),
    ];
    let v = sweepers("sweep = true", NO_DROPS).unwrap();
    let mut p = position(&v, &pieces, "b");
    let before = (p.to_sfen(), p.hash());
    let up: Vec<String> = ["5d", "5c", "5b", "5a", "4e", "3e", "2e"]
        .iter()
        .filter(|sq| {
            dests(&p, "5e")
                .iter()
                .any(|m| m.trim_end_matches('+') == **sq)
        })
        .map(|s| s.to_string())
        .collect();
    assert_eq!(up, ["5c", "5b", "5a", "4e", "3e"]);
    // Ending on 5a takes the silver and both pieces jumped, its own pawn too; undone exactly.
    play(&mut p, "5e5a");
    for sq in ["5e", "5d", "5c", "5b"] {
        assert_eq!(name_at(&p, sq), "-", "{sq}");
    }
    assert_eq!(name_at(&p, "5a"), "great general");
    p.unmake_move();
    assert_eq!((p.to_sfen(), p.hash()), before);
    // Ending on the empty 5b takes 5d and 5c; a plain ride (left) takes nothing.
    play(&mut p, "5e5b");
    assert_eq!(
        ["5d", "5c", "5a"].map(|sq| name_at(&p, sq)),
        ["-", "-", "silver"]
    );
    p.unmake_move();
    play(&mut p, "5e9e");
    assert_eq!(name_at(&p, "5d"), "pawn");
    p.unmake_move();
    assert_eq!(perft(&mut p, 2), perft(&mut position(&v, &pieces, "b"), 2));

    // Without the sweep, the range capture jumps 5d and 5c to take 5a, never to end on 5b,
    // and leaves the pieces it jumps.
    let v = sweepers("", NO_DROPS).unwrap();
    let mut p = position(&v, &pieces, "b");
    assert!(!dests(&p, "5e").iter().any(|m| m.starts_with("5e5b")));
    play(&mut p, "5e5a");
    assert_eq!(name_at(&p, "5d"), "pawn");
    assert_eq!(name_at(&p, "5c"), "pawn");
}

#[test]
fn broken_sweep_configs_are_refused() {
    let with_drops = "[end]\nroyal_capture = true";
    let checked = "[drops]\nenabled = false";
    for (sweep, rules, reason) in [
        ("sweep = true", with_drops, "drops"),
        ("sweep = true", checked, "royal_capture"),
    ] {
        let e = sweepers(sweep, rules).unwrap_err().to_string();
        assert!(e.contains("sweep") && e.contains(reason), "{rules}: {e}");
    }
    let text =
        "[drops]\nenabled = false\n[end]\nroyal_capture = true\n[[pieces]]\nletter = \"W\"\n\
                name = \"sweeper\"\nbetza = \"R\"\nsweep = true";
    let e = sweepers("", text).unwrap_err().to_string();
    assert!(e.contains("sweep") && e.contains("range_capture"), "{e}");
}
