//! A human plays our engine in a terminal (`trainer play`).
//!
//! The board is drawn from sente's side with file numbers on top and rank letters on the right;
//! sente's pieces are uppercase, gote's lowercase, promoted pieces carry `+`, empty squares are
//! `.`; hands are listed above (gote) and below (sente). Moves are typed in USI (`7g7f`,
//! `P*5e`, `8h2b+`); `moves` lists the legal ones, `quit` ends. Under a consecutive-wins match
//! rule (hand shogi) hands are played with alternating first player until one side has won the
//! required number in a row (a draw breaks the streak; drawn after [`MAX_HANDS`] hands).

use crate::error::ArenaError;
use crate::matches::{hand_color, Streak};
use crate::searcher::Searcher;
use crate::tally::Score;
use rules::{Color, MatchRule, Move, Outcome, Position};
use std::io::{BufRead, Write};

/// Hands after which a consecutive-wins match is drawn.
pub const MAX_HANDS: u32 = 10;

/// The board as text (see the module documentation).
pub fn render(pos: &Position) -> String {
    let v = pos.variant();
    let (files, ranks) = (v.files as usize, v.ranks as usize);
    let mut s = String::new();
    s.push_str(&format!("gote hand:  {}\n", hand_text(pos, Color::Gote)));
    for x in 0..files {
        s.push_str(&format!("{:>4}", files - x));
    }
    s.push('\n');
    for y in 0..ranks {
        for x in 0..files {
            let p = pos.piece_at(v.square(x, y));
            let t = if p.is_empty() {
                ".".to_string()
            } else {
                v.kind_token_for(p.color(), p.kind())
            };
            s.push_str(&format!("{t:>4}"));
        }
        s.push_str(&format!("   {}\n", (b'a' + y as u8) as char));
    }
    s.push_str(&format!("sente hand: {}\n", hand_text(pos, Color::Sente)));
    s
}

fn hand_text(pos: &Position, c: Color) -> String {
    let v = pos.variant();
    let mut parts = Vec::new();
    for &k in &v.hand_kinds {
        let n = pos.hand_count(c, k);
        if n > 0 {
            let l = v.kinds[k as usize].letter.cased(c);
            parts.push(if n > 1 { format!("{l}x{n}") } else { l });
        }
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}

fn side_name(c: Color) -> &'static str {
    match c {
        Color::Sente => "sente",
        Color::Gote => "gote",
    }
}

/// How a hand ended: the human's score (1, 0, -1), or None when the human quit.
fn play_hand(
    start: &Position,
    human: Color,
    engine: &mut Searcher,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<Option<i32>, ArenaError> {
    let mut pos = start.clone();
    writeln!(out, "you play {}\n", side_name(human))?;
    writeln!(out, "{}", render(&pos))?;
    loop {
        if let Some(o) = pos.outcome() {
            let score = o.score_for(human);
            write_result(out, &o, score)?;
            return Ok(Some(score));
        }
        let side = pos.side_to_move();
        if side == human {
            match human_turn(&pos, input, out)? {
                HumanTurn::Move(mv) => {
                    pos.make_move(mv);
                    writeln!(out, "you play {}\n", pos.variant().move_to_usi(mv))?;
                    writeln!(out, "{}", render(&pos))?;
                }
                HumanTurn::Again => {}
                HumanTurn::Quit => return Ok(None),
            }
        } else {
            let mv = engine.choose(&pos, None)?;
            writeln!(
                out,
                "engine ({}) plays {}\n",
                side_name(side),
                pos.move_to_usi(mv)
            )?;
            pos.make_move(mv);
            writeln!(out, "{}", render(&pos))?;
        }
    }
}

/// The result line of a finished hand; `score` is the human's.
fn write_result(out: &mut dyn Write, o: &Outcome, score: i32) -> std::io::Result<()> {
    writeln!(
        out,
        "result: {} by {} ({})",
        match o.winner {
            Some(c) => format!("{} wins", side_name(c)),
            None => "draw".to_string(),
        },
        o.reason.name(),
        match score {
            1 => "you win",
            0 => "draw",
            _ => "you lose",
        }
    )?;
    Ok(())
}

/// What one prompt of the human gave.
enum HumanTurn {
    /// A legal move.
    Move(Move),
    /// Nothing to play (an empty line, a help request, an illegal move): prompt again.
    Again,
    /// `quit`, or the end of the input.
    Quit,
}

/// Prompts the human for a move in `pos` and reads one line.
fn human_turn(
    pos: &Position,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> std::io::Result<HumanTurn> {
    let side = pos.side_to_move();
    write!(out, "move {} ({}, you): ", pos.ply() + 1, side_name(side))?;
    out.flush()?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        writeln!(out, "\nend of input: quitting")?;
        return Ok(HumanTurn::Quit);
    }
    let cmd = line.trim();
    match cmd {
        "" => return Ok(HumanTurn::Again),
        "quit" | "exit" => {
            writeln!(out, "quit")?;
            return Ok(HumanTurn::Quit);
        }
        "moves" | "help" => {
            let mut legal: Vec<String> = pos
                .legal_moves()
                .into_iter()
                .map(|m| pos.move_to_usi(m))
                .collect();
            legal.sort();
            writeln!(
                out,
                "type a move in USI (7g7f, P*5e, 8h2b+), `moves` or `quit`; legal: {}",
                legal.join(" ")
            )?;
            return Ok(HumanTurn::Again);
        }
        _ => {}
    }
    match pos.parse_usi(cmd) {
        Ok(mv) => Ok(HumanTurn::Move(mv)),
        Err(e) => {
            writeln!(out, "illegal: {e}; try again (`moves` lists them)")?;
            Ok(HumanTurn::Again)
        }
    }
}

/// Plays a session from `start` (a game, or a match of hands under a consecutive-wins rule)
/// between the human, reading moves from `input`, and `engine`; `human` is the human's side
/// (in the first hand). Everything is written to `out`. Ends early when the human quits or the
/// input ends.
pub fn play_human(
    start: &Position,
    human: Color,
    engine: &mut Searcher,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), ArenaError> {
    let first = human;
    match start.variant().match_rule {
        MatchRule::Single => {
            play_hand(start, first, engine, input, out)?;
        }
        MatchRule::ConsecutiveWins(n) => {
            writeln!(
                out,
                "match: the first to win {n} hands in a row wins (drawn after {MAX_HANDS} hands)"
            )?;
            // The human's streak, under the arena's rule (a draw breaks it).
            let mut streak = Streak::default();
            let mut decided = false;
            for h in 1..=MAX_HANDS {
                writeln!(out, "\nhand {h}")?;
                let human = hand_color(first, u64::from(h - 1));
                let Some(s) = play_hand(start, human, engine, input, out)? else {
                    return Ok(());
                };
                let s = match s {
                    1 => Score::Win,
                    0 => Score::Draw,
                    _ => Score::Loss,
                };
                if let Some(r) = streak.add(s, n) {
                    writeln!(
                        out,
                        "match result: {}",
                        if r == Score::Win {
                            "you win"
                        } else {
                            "you lose"
                        }
                    )?;
                    decided = true;
                    break;
                }
            }
            if !decided {
                writeln!(out, "match result: drawn after {MAX_HANDS} hands")?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;
    use std::sync::Arc;

    #[test]
    fn board_text() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let t = render(&Position::start(v));
        assert!(t.contains("   5   4   3   2   1\n"), "{t}");
        assert!(t.contains("   r   b   s   g   k   a\n"), "{t}");
        assert!(t.contains("   K   G   S   B   R   e\n"), "{t}");
        assert!(t.contains("gote hand:  -"), "{t}");
    }

    #[test]
    fn a_session_over_pipes() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let mut engine = Searcher::uniform(&v, 2);
        let mut input: &[u8] = b"9a9b\nmoves\n5d5c\nquit\n";
        let mut out = Vec::new();
        let start = Position::start(v);
        play_human(&start, Color::Sente, &mut engine, &mut input, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("illegal: "), "{out}");
        assert!(out.contains("legal: "), "{out}");
        assert!(out.contains("you play 5d5c"), "{out}");
        assert!(out.contains("engine (gote) plays"), "{out}");
        assert!(out.ends_with("quit\n"), "{out}");
    }

    /// Hand shogi's match rule in a session: hands alternate the human's side, and a win and a
    /// loss in turn never make two in a row, so the match is drawn after [`MAX_HANDS`] hands.
    #[test]
    fn hand_shogi_sessions_alternate_sides_under_the_match_rule() {
        let v = Arc::new(Variant::builtin("hand").unwrap());
        // Sente to move is mated (golds on 1h and 2g): gote wins every hand at once.
        let start = Position::from_sfen(&v, "k8/9/9/9/9/9/7g1/8g/8K b - 1").unwrap();
        assert!(start
            .outcome()
            .is_some_and(|o| o.winner == Some(Color::Gote)));
        let mut engine = Searcher::uniform(&v, 2);
        let mut input: &[u8] = b"";
        let mut out = Vec::new();
        play_human(&start, Color::Sente, &mut engine, &mut input, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let sides: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix("you play "))
            .collect();
        let want: Vec<&str> = (0..MAX_HANDS)
            .map(|h| if h % 2 == 0 { "sente" } else { "gote" })
            .collect();
        assert_eq!(sides, want, "{out}");
        assert_eq!(out.matches("(you lose)").count(), 5, "{out}");
        assert_eq!(out.matches("(you win)").count(), 5, "{out}");
        assert!(
            out.ends_with(&format!("match result: drawn after {MAX_HANDS} hands\n")),
            "{out}"
        );
        assert!(!out.contains("engine ("), "{out}");
    }
}
