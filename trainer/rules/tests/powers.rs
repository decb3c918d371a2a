//! Piece powers any variant can use, on small composed boards: hook moves (a ride turning 90
//! degrees once; Dai-dai shogi's hook mover and long-nosed goblin). Tenjiku shogi's powers are
//! in tests/tenjiku.rs. Squares are USI: file 5..1 from left to right, rank a to e.

use rules::{Position, Variant};
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
    // Written to a file so that `extends` resolves (to the built-in minishogi).
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("hooks-{}-{n}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let v = Variant::load(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    Arc::new(v)
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
