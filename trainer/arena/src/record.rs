//! Game records: the `sfen .. moves .. result ..` line (every variant) and CSA (standard
//! shogi only).

use crate::error::ArenaError;
use crate::matches::{GameEnd, MatchGame};
use crate::player::Forfeit;
use rules::{Color, EndReason, Move, Position};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Game records in a directory: `games.txt` (one [`MatchGame::record_line`] per game) and,
/// for standard shogi, `game-NNNN.csa` per game (NNNN its [`MatchGame::index`]).
pub struct Recorder {
    dir: PathBuf,
    games: std::fs::File,
}

impl Recorder {
    /// Creates `dir` if needed and `dir/games.txt` (truncated).
    pub fn create(dir: &Path) -> Result<Recorder, ArenaError> {
        std::fs::create_dir_all(dir).map_err(file_error("creating", dir))?;
        let path = dir.join("games.txt");
        let games = std::fs::File::create(&path).map_err(file_error("creating", &path))?;
        Ok(Recorder {
            dir: dir.to_path_buf(),
            games,
        })
    }

    /// Appends a game (flushed at once).
    pub fn save(&mut self, g: &MatchGame) -> Result<(), ArenaError> {
        writeln!(self.games, "{}", g.record_line)
            .and_then(|()| self.games.flush())
            .map_err(file_error("writing", &self.dir.join("games.txt")))?;
        if let Some(csa) = to_csa(g) {
            let p = self.dir.join(format!("game-{:04}.csa", g.index));
            std::fs::write(&p, csa).map_err(file_error("writing", &p))?;
        }
        Ok(())
    }
}

/// The error of `action` (`creating`, `writing`) on `path`.
fn file_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ArenaError {
    let path = path.to_path_buf();
    move |reason| ArenaError::File {
        action,
        path,
        reason,
    }
}

/// `1-0` (sente won), `0-1` (gote won) or `1/2-1/2`.
pub fn result_text(w: Option<Color>) -> &'static str {
    match w {
        Some(Color::Sente) => "1-0",
        Some(Color::Gote) => "0-1",
        None => "1/2-1/2",
    }
}

/// The record line of a game: `sfen START moves M.. result R sente NAME gote NAME reason ..`,
/// `R` 1 (sente won), -1 (gote won) or 0.
pub(crate) fn record_line(
    start: &Position,
    moves: &[Move],
    winner: Option<Color>,
    names: [&str; 2],
    reason: &str,
) -> String {
    let v = start.variant();
    let moves: Vec<String> = moves.iter().map(|&m| v.move_to_usi(m)).collect();
    let r = match winner {
        Some(Color::Sente) => 1,
        Some(Color::Gote) => -1,
        None => 0,
    };
    format!(
        "sfen {} moves {} result {r} sente {} gote {} reason {}",
        start.to_sfen(),
        moves.join(" "),
        names[0],
        names[1],
        reason.replace('\n', " ")
    )
}

/// CSA name of a standard shogi piece.
fn csa_name(letter: char, promoted: bool) -> Option<&'static str> {
    Some(match (letter, promoted) {
        ('P', false) => "FU",
        ('L', false) => "KY",
        ('N', false) => "KE",
        ('S', false) => "GI",
        ('G', false) => "KI",
        ('B', false) => "KA",
        ('R', false) => "HI",
        ('K', false) => "OU",
        ('P', true) => "TO",
        ('L', true) => "NY",
        ('N', true) => "NK",
        ('S', true) => "NG",
        ('B', true) => "UM",
        ('R', true) => "RY",
        _ => return None,
    })
}

/// The CSA end-of-game line.
fn csa_end(end: GameEnd) -> &'static str {
    match end {
        GameEnd::Rules(EndReason::Checkmate) => "%TSUMI",
        GameEnd::Rules(EndReason::Repetition) => "%SENNICHITE",
        GameEnd::Rules(EndReason::MoveLimit) => "%JISHOGI",
        GameEnd::Rules(_) => "%CHUDAN",
        GameEnd::Forfeit(Forfeit::IllegalMove) => "%ILLEGAL_MOVE",
        GameEnd::Forfeit(Forfeit::Timeout) => "%TIME_UP",
        GameEnd::Forfeit(Forfeit::Resign) => "%TORYO",
        GameEnd::Forfeit(_) => "%CHUDAN",
    }
}

/// The game as a CSA record (standard shogi only: None for other variants).
pub fn to_csa(g: &MatchGame) -> Option<String> {
    let v = g.start.variant().clone();
    if v.name != "shogi" || v.files != 9 || v.ranks != 9 {
        return None;
    }
    let kname = |k: rules::Kind| {
        let info = &v.kinds[k as usize];
        csa_name(info.letter.unmarked()?, info.promoted)
    };
    let sign = |c: Color| if c == Color::Sente { '+' } else { '-' };
    let mut s = String::from("V2.2\n");
    s.push_str(&format!("N+{}\nN-{}\n", g.sente, g.gote));
    s.push_str(&format!("'sfen {}\n", g.start.to_sfen()));
    let pos0 = &g.start;
    for y in 0..9 {
        s.push_str(&format!("P{}", y + 1));
        for x in 0..9 {
            let p = pos0.piece_at(v.square(x, y));
            if p.is_empty() {
                s.push_str(" * ");
            } else {
                s.push(sign(p.color()));
                s.push_str(kname(p.kind())?);
            }
        }
        s.push('\n');
    }
    for c in Color::ALL {
        s.push_str(&format!("P{}", sign(c)));
        for &k in &v.hand_kinds {
            for _ in 0..pos0.hand_count(c, k) {
                s.push_str("00");
                s.push_str(kname(k)?);
            }
        }
        s.push('\n');
    }
    s.push(sign(pos0.side_to_move()));
    s.push('\n');
    let mut pos = pos0.clone();
    let sq = |q: usize| format!("{}{}", v.file_number(q), v.coords(q).1 + 1);
    for &mv in &g.moves {
        let side = sign(pos.side_to_move());
        let line = match mv {
            Move::Normal { from, to, promote } => {
                let k = pos.piece_at(from as usize).kind();
                let k = if promote {
                    v.kinds[k as usize].promotes_to?
                } else {
                    k
                };
                format!(
                    "{side}{}{}{}",
                    sq(from as usize),
                    sq(to as usize),
                    kname(k)?
                )
            }
            Move::Drop { kind, to } => format!("{side}00{}{}", sq(to as usize), kname(kind)?),
            // CSA has no moves of several steps.
            Move::Double { .. } | Move::Line { .. } | Move::Multi { .. } => return None,
        };
        s.push_str(&line);
        s.push('\n');
        pos.make_move(mv);
    }
    s.push_str(csa_end(g.end));
    s.push('\n');
    s.push_str(&format!("'result {} {}\n", result_text(g.winner), g.reason));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matches::Game;
    use rules::Variant;
    use std::sync::Arc;

    fn game(variant: &str, moves: &[&str], end: GameEnd) -> MatchGame {
        let v = Arc::new(Variant::builtin(variant).unwrap());
        let start = Position::start(v);
        let mut pos = start.clone();
        let mut mv = Vec::new();
        for t in moves {
            let m = pos.parse_usi(t).unwrap();
            pos.make_move(m);
            mv.push(m);
        }
        let g = Game {
            start,
            moves: mv,
            winner: Some(Color::Sente),
            end,
            reason: "B resigns".into(),
        };
        MatchGame::new(1, 1, 1, Color::Sente, ["a", "b"], g)
    }

    #[test]
    fn csa_of_a_short_game() {
        let g = game(
            "shogi",
            &["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"],
            GameEnd::Forfeit(Forfeit::Resign),
        );
        let csa = to_csa(&g).unwrap();
        assert!(csa.starts_with("V2.2\nN+a\nN-b\n"), "{csa}");
        assert!(csa.contains("P1-KY-KE-GI-KI-OU-KI-GI-KE-KY\n"), "{csa}");
        assert!(csa.contains("P2 * -HI *  *  *  *  * -KA * \n"), "{csa}");
        assert!(
            csa.contains("+7776FU\n-3334FU\n+8822UM\n-3122GI\n+0045KA\n%TORYO\n"),
            "{csa}"
        );
        assert!(csa.ends_with("'result 1-0 B resigns\n"), "{csa}");
        assert_eq!(
            g.record_line,
            "sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 7g7f \
             3c3d 8h2b+ 3a2b B*4e result 1 sente a gote b reason B resigns"
        );
    }

    #[test]
    fn csa_only_for_standard_shogi() {
        let g = game("minishogi", &["5d5c"], GameEnd::Rules(EndReason::Checkmate));
        assert!(to_csa(&g).is_none());
        assert_eq!(csa_end(GameEnd::Forfeit(Forfeit::Timeout)), "%TIME_UP");
        assert_eq!(csa_end(GameEnd::Forfeit(Forfeit::Crash)), "%CHUDAN");
        assert_eq!(
            csa_end(GameEnd::Rules(EndReason::Repetition)),
            "%SENNICHITE"
        );
        assert_eq!(result_text(None), "1/2-1/2");
    }

    #[test]
    fn recorder_writes_lines_and_csa() {
        let dir = std::env::temp_dir().join(format!("arena-records-{}", std::process::id()));
        let mut r = Recorder::create(&dir).unwrap();
        let g = game("shogi", &["7g7f"], GameEnd::Forfeit(Forfeit::Resign));
        r.save(&g).unwrap();
        r.save(&game("minishogi", &[], GameEnd::Forfeit(Forfeit::Crash)))
            .unwrap();
        let text = std::fs::read_to_string(dir.join("games.txt")).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.starts_with(&g.record_line));
        assert!(dir.join("game-0001.csa").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
