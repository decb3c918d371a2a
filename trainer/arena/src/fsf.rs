//! Fairy-Stockfish's UCI dialect for shogi variants.
//!
//! Fairy-Stockfish (11.1, Debian 12) speaks UCI with its own coordinates for shogi variants:
//! files are letters `a..` from the left as seen by sente, ranks numbers `1..` from sente's side
//! (the bottom), so USI `7g7f` is `c3c4` and `2b3c+` is `h8g7+`; drops are `P@c4` (uppercase
//! letter for both sides); promotion is a trailing `+`. Its FEN is the SFEN board followed by
//! the hands in brackets, one letter per piece (`[PPp]`), then the side to move, where its `w`
//! is sente and `b` gote.
//!
//! Two-step moves (Chu shogi's Lion and the pieces with its power) have no notation in
//! Fairy-Stockfish, which has no such moves (its move holds one origin and one destination).
//! The one move it writes in two parts, a move that also places a wall (`UCI::move` in its
//! src/uci.cpp appends `,` TO WALL), names each part as a pair of squares, the second starting
//! where the first ended: `e2e4,e4d5`. A two-step move is written the same way, step by step,
//! `FROM VIA,VIA TO` (the multi-leg form of XBoard engines too): USI `7g6f5e` is `f6g7,g7h8`;
//! a capture without moving (igui, `7g6f7g`) and a pass (through an empty square, back to the
//! start) end where they began: `f6g7,g7f6`. Three squares run together (`f6g7h8`, the USI
//! shape) are read as well.
//!
//! A piece that turns over by itself (Kyoto shogi's, Micro shogi's on a capture) makes a
//! plain move in USI, but Fairy-Stockfish writes the turn: `+` when it turns promoted side up,
//! `-` when it turns back (`e1e2+`, `e2e3-`), and ignores the move without it. So moves are
//! written and read against the position they are played in ([`move_to_fsf_at`],
//! [`fsf_to_usi_at`]).

use rules::{Move, Position, Variant};
#[cfg(test)]
use std::sync::Arc;

/// Fairy-Stockfish's name of a square: file letter from the left (sente's view), rank number
/// from the bottom.
fn fsf_square(v: &Variant, sq: usize) -> String {
    let (x, y) = v.coords(sq);
    format!("{}{}", (b'a' + x as u8) as char, v.ranks as usize - y)
}

/// A move in Fairy-Stockfish's UCI notation (`c3c4`, `h8g7+`, `P@e2`; two steps `c3c4,c4c5`).
pub fn move_to_fsf(v: &Variant, mv: Move) -> String {
    match mv {
        Move::Normal { from, to, promote } => format!(
            "{}{}{}",
            fsf_square(v, from as usize),
            fsf_square(v, to as usize),
            if promote { "+" } else { "" }
        ),
        // Step by step, as Fairy-Stockfish writes a move in two parts (see the module).
        Move::Double { from, via, to } => {
            let via = fsf_square(v, via as usize);
            format!(
                "{}{via},{via}{}",
                fsf_square(v, from as usize),
                fsf_square(v, to as usize)
            )
        }
        Move::Line { from, to } => {
            let [a, b] = Move::line_vias(from, to).map(|s| fsf_square(v, s));
            format!(
                "{}{a},{a}{b},{b}{}",
                fsf_square(v, from as usize),
                fsf_square(v, to as usize)
            )
        }
        // Fairy-Stockfish has no compound moves (no variant with them is ever exported to
        // it): the squares the piece goes between stand for one.
        Move::Multi { from, to, .. } => format!(
            "{}{}",
            fsf_square(v, from as usize),
            fsf_square(v, to as usize)
        ),
        // A piece dropped promoted side up (Kyoto shogi) is `+P@c4`.
        Move::Drop { kind, to } => format!(
            "{}{}@{}",
            if v.kinds[kind as usize].promoted {
                "+"
            } else {
                ""
            },
            v.kinds[kind as usize].letter,
            fsf_square(v, to as usize)
        ),
    }
}

/// The suffix Fairy-Stockfish gives a move of `pos` in which the piece turns over by itself:
/// `+` promoted side up, `-` back; none for other moves.
fn flip_suffix(pos: &Position, mv: Move) -> &'static str {
    let v = pos.variant();
    let Move::Normal {
        from,
        to,
        promote: false,
    } = mv
    else {
        return "";
    };
    let p = pos.piece_at(from as usize);
    let flips = !v.flip_on_capture || !pos.piece_at(to as usize).is_empty();
    match (p.is_empty(), flips, v.flips_to(p.kind())) {
        (false, true, Some(_)) if v.kinds[p.kind() as usize].promoted => "-",
        (false, true, Some(_)) => "+",
        _ => "",
    }
}

/// A move of `pos` in Fairy-Stockfish's notation, with the turn of a flipping piece.
pub fn move_to_fsf_at(pos: &Position, mv: Move) -> String {
    format!("{}{}", move_to_fsf(pos.variant(), mv), flip_suffix(pos, mv))
}

/// A Fairy-Stockfish move of `pos` as USI text: as [`fsf_to_usi`], with the turn of a flipping
/// piece (`+`, `-`) dropped, since it is no choice in USI.
pub fn fsf_to_usi_at(pos: &Position, token: &str) -> Option<String> {
    let v = pos.variant();
    let usi = fsf_to_usi(v, token.strip_suffix('-').unwrap_or(token))?;
    let plain = usi.strip_suffix('+').unwrap_or(&usi);
    match v.parse_usi_syntax(plain) {
        Ok(mv) if !flip_suffix(pos, mv).is_empty() => Some(plain.to_string()),
        _ if token.ends_with('-') => None,
        _ => Some(usi),
    }
}

/// The `UCI_Variant` of our variant in Fairy-Stockfish: its built-in counterpart's name
/// (`kyotoshogi` for kyoto), else ours (an exported variant keeps our name).
pub fn fsf_variant_name(v: &Variant) -> &str {
    rules::fsf::builtin_counterpart(&v.name).unwrap_or(&v.name)
}

/// Parses a Fairy-Stockfish square (`a1`, `i9`, `j10`).
fn parse_fsf_square(v: &Variant, s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (&f, digits) = b.split_first()?;
    if !f.is_ascii_lowercase() || digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let x = (f - b'a') as usize;
    let r: usize = s[1..].parse().ok()?;
    if x >= v.files as usize || r == 0 || r > v.ranks as usize {
        return None;
    }
    Some(v.square(x, v.ranks as usize - r))
}

/// Parses squares written one after another (`c3c4`, `f6g7h8`, `a10b11`).
fn parse_fsf_squares(v: &Variant, s: &str) -> Option<Vec<usize>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let end = i + 1 + digits;
        out.push(parse_fsf_square(v, s.get(i..end)?)?);
        i = end;
    }
    Some(out)
}

/// Converts a Fairy-Stockfish UCI move to USI text (syntax only; legality is the referee's):
/// `c3c4`, `h8g7+`, `P@e2`, and two-step moves `f6g7,g7h8` or `f6g7h8` (see the module).
pub fn fsf_to_usi(v: &Variant, token: &str) -> Option<String> {
    if let Some((piece, sq)) = token.split_once('@') {
        let (plus, piece) = match piece.strip_prefix('+') {
            Some(p) => ("+", p),
            None => ("", piece),
        };
        let mut chars = piece.chars();
        let (Some(l), None) = (chars.next(), chars.next()) else {
            return None;
        };
        let to = parse_fsf_square(v, sq)?;
        return Some(format!(
            "{plus}{}*{}",
            l.to_ascii_uppercase(),
            v.square_name(to)
        ));
    }
    let name = |sq: usize| v.square_name(sq);
    if let Some((first, second)) = token.split_once(',') {
        // Two steps, each a pair of squares, the second from where the first ended.
        let (a, b) = (parse_fsf_squares(v, first)?, parse_fsf_squares(v, second)?);
        let (&[from, via], &[via2, to]) = (&a[..], &b[..]) else {
            return None;
        };
        return (via == via2).then(|| format!("{}{}{}", name(from), name(via), name(to)));
    }
    let (body, promote) = match token.strip_suffix('+') {
        Some(b) => (b, true),
        None => (token, false),
    };
    match parse_fsf_squares(v, body)?[..] {
        [from, to] => Some(format!(
            "{}{}{}",
            name(from),
            name(to),
            if promote { "+" } else { "" }
        )),
        // A two-step move never promotes.
        [from, via, to] if !promote => Some(format!("{}{}{}", name(from), name(via), name(to))),
        _ => None,
    }
}

/// Fairy-Stockfish's FEN of a position: the rules crate's one writer of it.
pub use rules::fsf::to_fsf_fen;

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Position;

    #[test]
    fn fsf_notation() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let pos = Position::start(v.clone());
        assert_eq!(to_fsf_fen(&pos), "rbsgk/4p/5/P4/KGSBR[] w - - 0 1");
        // Sente's pawn 5d (x 0, y 3) is a2; the rook 1e is e1.
        assert_eq!(fsf_to_usi(&v, "a2a3").as_deref(), Some("5d5c"));
        assert_eq!(fsf_to_usi(&v, "e1e5+").as_deref(), Some("1e1a+"));
        assert_eq!(fsf_to_usi(&v, "P@c3").as_deref(), Some("P*3c"));
        assert_eq!(fsf_to_usi(&v, "f1f2"), None);
        assert_eq!(fsf_to_usi(&v, "a2"), None);
        let mv = pos.parse_usi("5d5c").unwrap();
        assert_eq!(move_to_fsf(&v, mv), "a2a3");
        let s = Arc::new(Variant::builtin("shogi").unwrap());
        assert_eq!(fsf_to_usi(&s, "c3c4").as_deref(), Some("7g7f"));
        assert_eq!(fsf_to_usi(&s, "h8g7+").as_deref(), Some("2b3c+"));
        let mut p = Position::start(s.clone());
        p.play_usi("7g7f 3c3d 8h2b+ 3a2b").unwrap();
        assert_eq!(
            to_fsf_fen(&p),
            "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL[Bb] w - - 0 1"
        );
        let drop = p.parse_usi("B*5e").unwrap();
        assert_eq!(move_to_fsf(&s, drop), "B@e5");
    }

    fn chu() -> Arc<Variant> {
        Arc::new(Variant::builtin("chu").unwrap())
    }

    /// Every legal move, written in Fairy-Stockfish's notation and read back, is the same move.
    /// Returns how many two-step moves (captures going on, captures without moving, passes)
    /// were checked.
    fn round_trip_all(p: &Position) -> [usize; 3] {
        let v = p.variant();
        let mut doubles = [0; 3];
        for mv in p.legal_moves() {
            let fsf = move_to_fsf(v, mv);
            let usi = fsf_to_usi(v, &fsf).unwrap_or_else(|| panic!("{fsf} is not read back"));
            let back = p
                .parse_usi(&usi)
                .unwrap_or_else(|e| panic!("{fsf} read as {usi}: {e}"));
            assert_eq!(back, mv, "{} -> {fsf} -> {usi}", p.move_to_usi(mv));
            if let Move::Double { from, via, to } = mv {
                let i = match (from == to, p.piece_at(via as usize).is_empty()) {
                    (false, _) => 0,
                    (true, false) => 1,
                    (true, true) => 2,
                };
                doubles[i] += 1;
            }
        }
        doubles
    }

    #[test]
    fn two_step_moves_round_trip() {
        let v = chu();
        let composed = [
            // Sente's Lion next to a pawn; gote's promoted kirin (a Lion) among pawns.
            "k11/12/12/12/12/6p5/5N6/12/12/12/12/11K b - 1",
            "11k/12/12/12/6+o5/5PP5/6P5/12/12/12/12/K11 w - 1",
            // Horned Falcons, Soaring Eagles and Lions of both sides, on and near the edges.
            "3l8/11p/10p1/3n5+D2/2i1f7/3N5G2/9+H2/2t2P1i4/2p3+D5/2+H9/12/12 b - 1",
            // Sente's Horned Falcon below two pawns, gote's Soaring Eagle above a pawn.
            "p5k5/p11/+H11/12/12/12/12/12/12/11+d/10P1/6K5 b - 1",
            "p5k5/p11/+H11/12/12/12/12/12/12/11+d/10P1/6K5 w - 1",
        ];
        let mut total = [0; 3];
        let mut add = |p: &Position| {
            for (t, n) in total.iter_mut().zip(round_trip_all(p)) {
                *t += n;
            }
        };
        for sfen in composed {
            let p = Position::from_sfen_composed(&v, sfen).unwrap_or_else(|e| panic!("{e}"));
            assert!(round_trip_all(&p).iter().sum::<usize>() > 0, "{sfen}");
            add(&p);
        }
        // And the positions of a game of pseudo-random moves from the start.
        let mut p = Position::start(v.clone());
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            add(&p);
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            p.make_move(moves[(seed >> 33) as usize % moves.len()]);
        }
        let [onward, igui, pass] = total;
        assert!(onward > 100 && igui > 20 && pass > 100, "{total:?}");
    }

    /// Fairy-Stockfish's notation as its src/uci.cpp writes it: `UCI::square` names files
    /// `a..` from sente's left and ranks `1..` from the bottom, ranks from 10 on with two
    /// digits (`'0' + (rank + 1) / 10`, then `'0' + (rank + 1) % 10`); a move in two parts
    /// is `FROM TO` then `,` and its second pair of squares (`move += "," + ...`).
    #[test]
    fn chu_moves_in_fairy_stockfish_notation() {
        let v = chu();
        let p = Position::from_sfen_composed(&v, "k11/12/12/12/12/6p5/5N6/12/12/12/12/11K b - 1")
            .unwrap();
        let fsf = |usi: &str| move_to_fsf(&v, p.parse_usi(usi).unwrap());
        // Corners and two-digit ranks: 1a is l12, 12l a1; 12a is a12, 1l l1.
        let k = |usi: &str| {
            let q = Position::from_sfen_composed(&v, "12/k11/12/12/12/12/12/12/12/12/11K/12 b - 1")
                .unwrap();
            move_to_fsf(&v, q.parse_usi(usi).unwrap())
        };
        assert_eq!(k("1k1l"), "l2l1");
        assert_eq!(k("1k2j"), "l2k3");
        assert_eq!(fsf_to_usi(&v, "a12a11").as_deref(), Some("12a12b"));
        assert_eq!(fsf_to_usi(&v, "l10k9").as_deref(), Some("1c2d"));
        assert_eq!(fsf_to_usi(&v, "a1l12").as_deref(), Some("12l1a"));
        // The Lion on 7g (f6), a pawn on 6f (g7).
        assert_eq!(fsf("7g7f"), "f6f7");
        assert_eq!(fsf("7g7e"), "f6f8");
        assert_eq!(fsf("7g6f"), "f6g7");
        assert_eq!(fsf("7g6f5e"), "f6g7,g7h8");
        assert_eq!(fsf("7g6f7g"), "f6g7,g7f6");
        assert_eq!(fsf("7g8g7g"), "f6e6,e6f6");
        assert_eq!(fsf_to_usi(&v, "f6g7,g7h8").as_deref(), Some("7g6f5e"));
        assert_eq!(fsf_to_usi(&v, "f6g7,g7f6").as_deref(), Some("7g6f7g"));
        assert_eq!(fsf_to_usi(&v, "f6e6,e6f6").as_deref(), Some("7g8g7g"));
        // Three squares run together, as USI writes them.
        assert_eq!(fsf_to_usi(&v, "f6g7h8").as_deref(), Some("7g6f5e"));
        assert_eq!(fsf_to_usi(&v, "a10b11c12").as_deref(), Some("12c11b10a"));
        // The second step must start where the first ended; no promotion; nothing more.
        for bad in [
            "f6g7,g8h8",
            "f6g7,g7h8+",
            "f6g7h8+",
            "f6g7,g7",
            "f6,g7h8",
            "f6g7,g7h8,h8h9",
            "f6g7h8i9",
            "f6g7,",
            "f6g13",
            "m1a1",
            "f6g7x",
            "f\u{e9}6g7",
        ] {
            assert_eq!(fsf_to_usi(&v, bad), None, "{bad}");
        }
        // Fairy-Stockfish's own pass (a move onto its own square) names no square passed
        // through: the referee refuses it, naming the reason.
        let usi = fsf_to_usi(&v, "f6f6").unwrap();
        let e = p.parse_usi(&usi).unwrap_err().to_string();
        assert!(e.contains("7g7g") && e.contains("same square"), "{e}");
    }

    /// Debian's Fairy-Stockfish (`$FAIRY_STOCKFISH`, or on the path, or /usr/games): `None`
    /// outside CI when it is not installed (the test command installs it).
    fn native_engine() -> Option<std::path::PathBuf> {
        let found = std::env::var_os("FAIRY_STOCKFISH")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                    .chain([std::path::PathBuf::from("/usr/games")])
                    .map(|d| d.join("fairy-stockfish"))
                    .find(|p| p.is_file())
            });
        if found.is_none() && std::env::var_os("CI").is_some() {
            panic!("fairy-stockfish is not installed (the test command installs it)");
        }
        found
    }

    /// The moves Fairy-Stockfish lists (`go perft 1`) in each of `fens`.
    fn fsf_moves(bin: &std::path::Path, variant: &str, fens: &[String]) -> Vec<Vec<String>> {
        use std::io::Write;
        let mut script = format!("uci\nsetoption name UCI_Variant value {variant}\n");
        for f in fens {
            script.push_str(&format!("position fen {f}\ngo perft 1\n"));
        }
        script.push_str("quit\n");
        let mut child = std::process::Command::new(bin)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        let mut lists = vec![Vec::new()];
        for line in out.lines() {
            if line.starts_with("Nodes searched") {
                lists.push(Vec::new());
            } else if let Some((mv, "1")) = line.split_once(": ") {
                lists.last_mut().unwrap().push(mv.to_string());
            }
        }
        lists.pop();
        lists
    }

    /// Kyoto and Micro shogi, whose pieces turn over by themselves: in random positions the
    /// moves we write are exactly those Debian's Fairy-Stockfish lists (its `+` and `-` turns
    /// included), and each reads back as our move.
    #[test]
    fn flipping_moves_are_written_as_fairy_stockfish_lists_them() {
        let Some(bin) = native_engine() else {
            eprintln!("skipped: fairy-stockfish not installed");
            return;
        };
        for (ours, theirs) in [("kyoto", "kyotoshogi"), ("micro", "micro")] {
            let v = Arc::new(Variant::builtin(ours).unwrap());
            assert_eq!(fsf_variant_name(&v), theirs);
            let mut rng = rules::SplitMix64(11);
            let mut positions = Vec::new();
            for _ in 0..40 {
                let mut p = Position::start(v.clone());
                for _ in 0..rng.next_u64() % 30 {
                    let ms = p.legal_moves();
                    if ms.is_empty() || p.outcome().is_some() {
                        break;
                    }
                    p.make_move(ms[(rng.next_u64() % ms.len() as u64) as usize]);
                }
                if p.outcome().is_none() {
                    positions.push(p);
                }
            }
            let fens: Vec<String> = positions.iter().map(to_fsf_fen).collect();
            let lists = fsf_moves(&bin, theirs, &fens);
            assert_eq!(lists.len(), positions.len(), "{ours}");
            let mut turns = 0;
            for (p, theirs) in positions.iter().zip(lists) {
                let legal = p.legal_moves();
                let mut mine: Vec<String> = legal.iter().map(|&m| move_to_fsf_at(p, m)).collect();
                let mut theirs = theirs;
                mine.sort();
                theirs.sort();
                assert_eq!(mine, theirs, "{ours} {}", p.to_sfen());
                for &m in &legal {
                    let text = move_to_fsf_at(p, m);
                    turns += usize::from(text.ends_with('+') || text.ends_with('-'));
                    assert_eq!(fsf_to_usi_at(p, &text), Some(p.move_to_usi(m)), "{text}");
                }
            }
            assert!(turns > 20, "{ours}: {turns} turning moves");
        }
    }
}
