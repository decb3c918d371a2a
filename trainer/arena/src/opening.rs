//! Openings from a file; the opening type and random openings are the lockstep driver's
//! ([`selfplay::Opening`]), shared by the referee.

use crate::error::ArenaError;
use rules::{Position, Variant};
use std::path::Path;
use std::sync::Arc;

pub use selfplay::{random_openings, Opening};

/// Parses a game line, the one syntax of positions in opening files, the USI `position`
/// command and position lists: `startpos`, `sfen <SFEN>` or a bare SFEN (nothing: the start
/// position), then optionally `moves` and moves in USI notation. The game may be over after
/// the moves (an opening must not be: see [`read_openings`]).
pub fn parse_game_line(line: &str, variant: &Arc<Variant>) -> Result<Opening, ArenaError> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let (setup, moves) = match tokens.iter().position(|&t| t == "moves") {
        Some(i) => (&tokens[..i], &tokens[i + 1..]),
        None => (&tokens[..], &tokens[tokens.len()..]),
    };
    let start = match setup {
        [] | ["startpos"] => Position::start(variant.clone()),
        ["startpos", extra, ..] => return Err(ArenaError::AfterStartpos(extra.to_string())),
        ["sfen"] => return Err(ArenaError::MissingSfen),
        ["sfen", fields @ ..] | fields => {
            let sfen = fields.join(" ");
            Position::from_sfen(variant, &sfen)
                .map_err(|reason| ArenaError::Sfen { sfen, reason })?
        }
    };
    let mut pos = start.clone();
    let mut played = Vec::with_capacity(moves.len());
    for (i, tok) in moves.iter().enumerate() {
        let mv = pos.parse_usi(tok).map_err(|reason| ArenaError::Move {
            number: i + 1,
            token: tok.to_string(),
            reason,
        })?;
        pos.make_move(mv);
        played.push(mv);
    }
    Ok(Opening {
        start,
        moves: played,
    })
}

/// Reads openings, one per line as in [`parse_game_line`] (the game must not be over after
/// them); empty lines and lines starting with `#` are skipped. Errors name the file and line;
/// a file without openings is an error.
pub fn read_openings(path: &Path, variant: &Arc<Variant>) -> Result<Vec<Opening>, ArenaError> {
    let text = std::fs::read_to_string(path).map_err(|reason| ArenaError::File {
        action: "reading",
        path: path.to_path_buf(),
        reason,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let o = parse_game_line(line, variant).map_err(|reason| ArenaError::OpeningLine {
            path: path.to_path_buf(),
            line: i + 1,
            reason: Box::new(reason),
        })?;
        if let Some(end) = o.position().outcome() {
            return Err(ArenaError::OpeningOver {
                path: path.to_path_buf(),
                line: i + 1,
                end: end.reason,
            });
        }
        out.push(o);
    }
    if out.is_empty() {
        return Err(ArenaError::NoOpenings {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minishogi() -> Arc<Variant> {
        Arc::new(Variant::builtin("minishogi").unwrap())
    }

    #[test]
    fn opening_files() {
        let v = minishogi();
        let dir = std::env::temp_dir().join(format!("arena-openings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("o.txt");
        std::fs::write(
            &p,
            "# comment\n\nstartpos\nstartpos moves 5d5c\nsfen rbsgk/4p/5/P4/KGSBR b - 1 moves 5d5c\n",
        )
        .unwrap();
        let o = read_openings(&p, &v).unwrap();
        assert_eq!(o.len(), 3);
        assert!(o[0].moves.is_empty());
        assert_eq!(o[1].moves.len(), 1);
        assert_eq!(o[2].position().to_sfen(), o[1].position().to_sfen());
        std::fs::write(&p, "startpos moves 9a9b\n").unwrap();
        let e = format!("{:#}", read_openings(&p, &v).unwrap_err());
        assert!(e.contains("o.txt:1"), "{e}");
        std::fs::write(&p, "# nothing\n").unwrap();
        assert!(read_openings(&p, &v).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn game_lines() {
        let v = minishogi();
        let sfen = "rbsgk/4p/5/P4/KGSBR b - 1";
        for line in ["", "startpos", &format!("sfen {sfen}"), sfen] {
            let o = parse_game_line(line, &v).unwrap();
            assert_eq!(
                o.start.to_sfen(),
                Position::start(v.clone()).to_sfen(),
                "{line}"
            );
            assert!(o.moves.is_empty());
        }
        let a = parse_game_line("startpos moves 5d5c 1b1c", &v).unwrap();
        let b = parse_game_line(&format!("{sfen} moves 5d5c 1b1c"), &v).unwrap();
        assert_eq!(a.moves.len(), 2);
        assert_eq!(a.position().to_sfen(), b.position().to_sfen());
        assert!(parse_game_line("moves 5d5c", &v).unwrap().moves.len() == 1);
        for (bad, why) in [
            ("startpos junk", "unexpected \"junk\" after startpos"),
            ("sfen", "missing the SFEN fields"),
            ("sfen garbage", "bad SFEN \"garbage\""),
            ("startpos moves 5d5c 9a9b", "move 2 \"9a9b\""),
        ] {
            let e = format!("{:#}", parse_game_line(bad, &v).unwrap_err());
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
