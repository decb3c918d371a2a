//! The large variants against an independent implementation: the tables of the Shogi Variants
//! program, which follows the Shogi Association's rules (Debian's `shogivar-data`, installed
//! by the test command: `/usr/share/games/shogivar/*.dat`). For Tenjiku, Dai-dai, Maka dai-dai
//! and Tai shogi: every piece's squares on an empty board (from the centre, a royal piece in two
//! corners), every promotion, and the start position.
//!
//! A `.dat` table gives each piece a range per direction (forward, back, left, right, then the
//! forward and backward diagonals): 1 a step, 2, 3 or 5 that many squares, 64 a ride, 128 a
//! jump to the second square, 192 both, 320 a ride with range capture, 131 a jump to the
//! second square and on to the third, 1024 the knight's jump; the Lion's power is `L` (the
//! lion hawk's `D`), the emperor's `E`, the fire demon's area move and burning `F`, the
//! tetrarchs' `T`. Hooks (2048) and the Lion's two steps in one direction (512) are compared
//! by the hand tests instead (`powers.rs`, `tai.rs`, Chu's horned falcon and soaring eagle).

use rules::{Color, Kind, Position, Variant};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

mod support;
use support::*;

const DIR: &str = "/usr/share/games/shogivar";

struct SvPiece {
    name: String,
    promo: Option<usize>,
    dirs: [u32; 8],
    special: String,
}

struct Table {
    n: usize,
    pieces: BTreeMap<usize, SvPiece>,
    /// Piece ids by square, row by row from gote's side; negative for gote.
    setup: Vec<i64>,
}

fn load(file: &str) -> Option<Table> {
    let path = Path::new(DIR).join(file);
    let Ok(bytes) = std::fs::read(&path) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "{}: missing (apt-get install shogivar-data)",
            path.display()
        );
        eprintln!("{}: missing, skipped", path.display());
        return None;
    };
    let text = String::from_utf8_lossy(&bytes).replace('\r', "");
    let lines: Vec<&str> = text.lines().collect();
    let n: usize = lines[2].split(',').nth(1).unwrap().trim().parse().unwrap();
    let mut pieces = BTreeMap::new();
    let mut numbers = Vec::new();
    for line in &lines[3..] {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() >= 19 && f[1].parse::<i64>().is_err() {
            let num = |i: usize| f[i].parse::<usize>().unwrap();
            let mut dirs = [0; 8];
            for (d, v) in dirs.iter_mut().zip(&f[8..16]) {
                *d = v.parse().unwrap();
            }
            let promo = Some(num(5)).filter(|&p| p != 0);
            let special = f[16].to_string();
            pieces.insert(
                num(0),
                SvPiece {
                    name: f[1].to_lowercase(),
                    promo,
                    dirs,
                    special,
                },
            );
        } else {
            numbers.extend(f.iter().filter_map(|x| x.parse::<i64>().ok()));
        }
    }
    numbers.truncate(n * n);
    assert_eq!(numbers.len(), n * n, "{file}: setup");
    Some(Table {
        n,
        pieces,
        setup: numbers,
    })
}

/// Our name for a piece of the tables.
fn ours(name: &str, aliases: &[(&str, &str)]) -> String {
    let common = [
        ("kylin", "kirin"),
        ("side flyer", "side flier"),
        ("old kite hawk", "old kite"),
        ("prince", "crown prince"),
        ("tokin", "gold general"),
    ];
    aliases
        .iter()
        .chain(&common)
        .find(|(a, _)| *a == name)
        .map_or(name.to_string(), |(_, b)| b.to_string())
}

/// The table's squares for a piece alone on the centre of an `n`x`n` board, an own royal piece
/// in the bottom right corner and an enemy one in the top right; None for hooks and the
/// emperor.
fn table_offsets(p: &SvPiece, n: i32) -> Option<BTreeSet<(i32, i32)>> {
    const D: [(i32, i32); 8] = [
        (0, -1),
        (0, 1),
        (-1, 0),
        (1, 0),
        (-1, -1),
        (1, -1),
        (-1, 1),
        (1, 1),
    ];
    let c = n / 2;
    let mut out = BTreeSet::new();
    for (&(dx, dy), &code) in D.iter().zip(&p.dirs) {
        let range = match code {
            0 => continue,
            1 | 2 | 3 | 5 => code as i32,
            64 | 192 | 320 => n,
            128 => 0,
            131 => {
                // Over the first square, then up to the third (Tenjiku's tetrarchs).
                out.extend((2..=3).map(|k| (k * dx, k * dy)));
                continue;
            }
            1024 => {
                out.extend([(-1, -2), (1, -2)]);
                continue;
            }
            _ => return None,
        };
        if code & 128 != 0 {
            out.insert((2 * dx, 2 * dy));
        }
        for k in 1..=range {
            let (x, y) = (c + k * dx, c + k * dy);
            if !(0..n).contains(&x) || !(0..n).contains(&y) || (x, y) == (n - 1, n - 1) {
                break;
            }
            out.insert((x - c, y - c));
            if (x, y) == (n - 1, 0) {
                break;
            }
        }
    }
    let box_of = |r: i32| {
        (-r..=r)
            .flat_map(move |x| (-r..=r).map(move |y| (x, y)))
            .filter(|&d| d != (0, 0))
    };
    match p.special.as_str() {
        // The Lion's power (the lion hawk's `D` too): every square within two.
        "L" | "D" => out.extend(box_of(2)),
        // The fire demon's area move of three king steps; the vice general has it too
        // (`Tenjiku.rul`, "Area moves"), which its table row does not say.
        "F" => out.extend(box_of(3)),
        "G" if p.name == "vice general" => out.extend(box_of(3)),
        // The tetrarchs never move to an adjacent square (`Tenjiku.rul`): their ranges start
        // on the second square.
        "T" => out.retain(|&(x, y)| x.abs() > 1 || y.abs() > 1),
        "E" => return None,
        _ => {}
    }
    Some(out)
}

/// Our squares for kind `k` placed as in [`table_offsets`]; None when it cannot stand there
/// with the royal pieces (a royal kind of a one-royal variant).
fn our_offsets(v: &Arc<Variant>, k: Kind) -> Option<BTreeSet<(i32, i32)>> {
    let n = v.files as i32;
    let c = n / 2;
    let sq = |x: i32, y: i32| format!("{}{}", n - x, (b'a' + y as u8) as char);
    let royal = (0..v.kinds.len() as Kind).find(|&r| v.kinds[r as usize].royal)?;
    let pieces = [
        (sq(c, c), v.kind_token(k)),
        (sq(n - 1, n - 1), v.kind_token(royal)),
        (sq(n - 1, 0), v.kind_token_for(Color::Gote, royal)),
    ];
    let pieces: Vec<(&str, &str)> = pieces
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let p = try_composed(v, &pieces, "b -").ok()?;
    let from = sq(c, c);
    let mut out = BTreeSet::new();
    for m in moves_with(&p, &from) {
        let to = m[from.len()..].trim_end_matches('+');
        let Some(split) = to.find(|ch: char| ch.is_ascii_lowercase()) else {
            continue;
        };
        if split + 1 != to.len() {
            continue; // a move of several steps
        }
        let file: i32 = to[..split].parse().unwrap();
        let rank = (to.as_bytes()[split] - b'a') as i32;
        out.insert((n - file - c, rank - c));
    }
    Some(out)
}

/// Squares one side has and the other lacks: (ours only, table only).
type Difference = (BTreeSet<(i32, i32)>, BTreeSet<(i32, i32)>);

/// A kind whose moves follow another reading than the table's, with the exact difference
/// for an `n`x`n` board.
type Reading<'a> = (&'a str, &'a dyn Fn(i32) -> Difference);

/// Compares a variant with its table: moves, promotions and the start position. `aliases`:
/// the table's names that are ours under another name; `readings`: kinds that differ from the
/// table on purpose, each by exactly the squares given. Returns how many kinds were compared
/// by their moves.
fn compare(
    variant: &str,
    file: &str,
    aliases: &[(&str, &str)],
    readings: &[Reading],
) -> Option<usize> {
    let t = load(file)?;
    let v = builtin(variant);
    assert_eq!(t.n, v.files as usize, "{variant}: board");
    // A name listed twice (Tenjiku's table has unpromoted and promoted entries of one piece):
    // the entry that promotes, else the first.
    let mut by_name: BTreeMap<String, &SvPiece> = BTreeMap::new();
    for p in t.pieces.values() {
        let e = by_name.entry(ours(&p.name, aliases)).or_insert(p);
        if e.promo.is_none() && p.promo.is_some() {
            *e = p;
        }
    }
    let mut compared = 0;
    let mut problems = Vec::new();
    for k in 0..v.kinds.len() as Kind {
        let info = &v.kinds[k as usize];
        let Some(p) = by_name.get(&info.name) else {
            problems.push(format!("{}: not in {file}", info.name));
            continue;
        };
        if let (Some(want), Some(got)) = (table_offsets(p, t.n as i32), our_offsets(&v, k)) {
            compared += 1;
            if let Some((_, reading)) = readings.iter().find(|(n, _)| *n == info.name) {
                let extra: BTreeSet<_> = got.difference(&want).copied().collect();
                let missing: BTreeSet<_> = want.difference(&got).copied().collect();
                assert_eq!(
                    (extra, missing),
                    reading(t.n as i32),
                    "{variant}: {}, the known difference from {file}",
                    info.name
                );
            } else if want != got {
                let extra: Vec<_> = got.difference(&want).collect();
                let missing: Vec<_> = want.difference(&got).collect();
                problems.push(format!(
                    "{}: moves differ: ours only {extra:?}, table only {missing:?}",
                    info.name
                ));
            }
        }
        if !info.promoted {
            let theirs = p.promo.map(|id| ours(&t.pieces[&id].name, aliases));
            let mine = info.promotes_to.map(|q| v.kinds[q as usize].name.clone());
            if theirs != mine {
                problems.push(format!(
                    "{}: promotes to {mine:?}, table {theirs:?}",
                    info.name
                ));
            }
        }
    }
    let start = Position::start(v.clone());
    for (i, &id) in t.setup.iter().enumerate() {
        let (x, y) = (i % t.n, i / t.n);
        let piece = start.piece_at(v.square(x, y));
        let want = (id != 0).then(|| {
            let colour = if id < 0 { Color::Gote } else { Color::Sente };
            (
                colour,
                ours(&t.pieces[&(id.unsigned_abs() as usize)].name, aliases),
            )
        });
        let got = (!piece.is_empty())
            .then(|| (piece.color(), v.kinds[piece.kind() as usize].name.clone()));
        if want != got {
            problems.push(format!("start ({x}, {y}): ours {got:?}, table {want:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{variant} against {file}:\n{}",
        problems.join("\n")
    );
    Some(compared)
}

/// The squares `from..=to` steps along each of `dirs` from the centre of an `n`x`n` board,
/// stopping before the bottom right corner (the own king's square).
fn line(n: i32, dirs: &[(i32, i32)], from: i32) -> BTreeSet<(i32, i32)> {
    let c = n / 2;
    let mut out = BTreeSet::new();
    for &(dx, dy) in dirs {
        for k in from.. {
            let (x, y) = (c + k * dx, c + k * dy);
            if !(0..n).contains(&x) || !(0..n).contains(&y) || (x, y) == (n - 1, n - 1) {
                break;
            }
            out.insert((k * dx, k * dy));
        }
    }
    out
}

#[test]
fn tenjiku_matches_the_shogi_variants_tables() {
    // Where the Shogi Association's program reads Tenjiku otherwise than HaChu and the
    // English descriptions our config follows (`configs/variants/tenjiku.toml`): the fire
    // demon ranges sideways there and vertically here; the tetrarchs also range vertically
    // from the second square (the program: diagonally and sideways only).
    let outside_area = |s: BTreeSet<(i32, i32)>| {
        s.into_iter()
            .filter(|&(x, y)| x.abs() > 3 || y.abs() > 3)
            .collect()
    };
    let fire_demon = |n| -> Difference {
        (
            outside_area(line(n, &[(1, 0), (-1, 0)], 1)),
            outside_area(line(n, &[(0, 1), (0, -1)], 1)),
        )
    };
    let tetrarchs = |n| -> Difference { (line(n, &[(0, 1), (0, -1)], 2), BTreeSet::new()) };
    let readings: [Reading; 2] = [
        ("fire demon", &fire_demon),
        ("heavenly tetrarchs", &tetrarchs),
    ];
    if let Some(n) = compare(
        "tenjiku",
        "Tenjiku.dat",
        &[("free king", "queen")],
        &readings,
    ) {
        // All 66 kinds but the horned falcon and soaring eagle, each unpromoted and promoted
        // (two steps along one line: Chu's hand tests).
        assert_eq!(n, 62);
    }
}

#[test]
fn dai_dai_matches_the_shogi_variants_tables() {
    let aliases = [
        ("free tapir", "free dream-eater"),
        ("side chariot", "racing chariot"),
    ];
    if let Some(n) = compare("dai-dai", "DaiDai.dat", &aliases, &[]) {
        // All 85 kinds but the king (one royal kind) and the four hook movers.
        assert_eq!(n, 80);
    }
}

#[test]
fn maka_dai_dai_matches_the_shogi_variants_tables() {
    if let Some(n) = compare("maka-dai-dai", "Maka.dat", &[], &[]) {
        // All 97 kinds but the emperor and the two hook movers.
        assert_eq!(n, 94);
    }
}

#[test]
fn tai_matches_the_shogi_variants_tables() {
    if let Some(n) = compare("tai", "Tai.dat", &[], &[]) {
        // All 105 kinds but the emperor, the five hook movers and the horned falcon and
        // soaring eagle.
        assert_eq!(n, 97);
    }
}
