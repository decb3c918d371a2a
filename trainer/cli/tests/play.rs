//! `trainer play` driven through stdin.

use std::io::Write;
use std::process::{Command, Stdio};

fn play(args: &[&str], input: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("play")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start trainer play");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "trainer play failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn scripted_game_with_an_illegal_move_and_quit() {
    let out = play(
        &["--variant", "minishogi", "--nodes", "8"],
        "5d5c\n9a9b\n5e4d\nmoves\nquit\n",
    );
    // The board: file numbers, rank letters, gote lowercase, hands.
    assert!(out.contains("   5   4   3   2   1\n"), "{out}");
    assert!(out.contains("   r   b   s   g   k   a\n"), "{out}");
    assert!(out.contains("sente hand: -"), "{out}");
    assert!(out.contains("you play 5d5c"), "{out}");
    assert_eq!(out.matches("engine (gote) plays").count(), 2, "{out}");
    // The rules' error names the token; the same move number is asked again.
    assert!(
        out.contains("illegal: bad USI move \"9a9b\": \"9a\" is not a square of this board"),
        "{out}"
    );
    assert!(out.contains("you play 5e4d"), "{out}");
    assert!(out.contains("legal: "), "{out}");
    assert!(out.trim_end().ends_with("quit"), "{out}");
    assert!(!out.contains("result:"), "{out}");
}

#[test]
fn game_to_the_end_shows_the_result() {
    // Sente mates with G*1b (the pawn on 1c guards the gold).
    let out = play(
        &[
            "--variant",
            "minishogi",
            "--sfen",
            "4k/5/4P/5/K4 b G 1",
            "--nodes",
            "4",
        ],
        "G*1c\nG*1b\n",
    );
    assert!(out.contains("illegal"), "{out}");
    assert!(
        out.contains("result: sente wins by checkmate (you win)"),
        "{out}"
    );

    // As gote, end of input quits cleanly.
    let out = play(
        &["--variant", "minishogi", "--human", "gote", "--nodes", "4"],
        "",
    );
    assert!(out.contains("engine (sente) plays"), "{out}");
    assert!(out.contains("end of input"), "{out}");
}
