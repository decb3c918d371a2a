//! Property tests on untrusted text: random bytes and seeded mutations of valid SFEN, USI and
//! TOML texts must give `Ok` or a named error, never a panic; SFEN and USI errors name a token
//! taken from the input.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rules::betza;
use rules::{Error, Position, Variant, VariantSpec};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Once};

/// Every built-in variant.
fn variants() -> Vec<&'static str> {
    rules::VariantSpec::builtin_names()
}

fn var(name: &str) -> Arc<Variant> {
    Arc::new(Variant::builtin(name).unwrap_or_else(|e| panic!("built-in {name}: {e}")))
}

// ---------------------------------------------------------------------------------------------
// Panic capture: panics inside `guard` are recorded quietly (with their message) instead of
// flooding the output; panics elsewhere (test assertions) print as usual.
// ---------------------------------------------------------------------------------------------

thread_local! {
    static IN_GUARD: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_GUARD.with(|g| g.get()) {
                let msg = match (
                    info.payload().downcast_ref::<&str>(),
                    info.payload().downcast_ref::<String>(),
                ) {
                    (Some(s), _) => s.to_string(),
                    (_, Some(s)) => s.clone(),
                    _ => "<non-string panic>".to_string(),
                };
                let loc = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg} at {loc}"));
            } else {
                default(info);
            }
        }));
    });
}

/// Collected panics: (what was called, input, panic message).
#[derive(Default)]
struct Panics(Vec<(String, String, String)>);

impl Panics {
    fn guard<T>(&mut self, what: &str, input: &str, f: impl FnOnce() -> T) -> Option<T> {
        install_hook();
        IN_GUARD.with(|g| g.set(true));
        let r = catch_unwind(AssertUnwindSafe(f));
        IN_GUARD.with(|g| g.set(false));
        match r {
            Ok(v) => Some(v),
            Err(_) => {
                let msg = LAST_PANIC.with(|p| p.borrow().clone());
                self.0.push((what.to_string(), input.to_string(), msg));
                None
            }
        }
    }

    fn assert_none(&self) {
        if self.0.is_empty() {
            return;
        }
        let mut report = format!("{} inputs panicked; first ones:\n", self.0.len());
        for (what, input, msg) in self.0.iter().take(8) {
            report.push_str(&format!("  {what}({input:?}): {msg}\n"));
        }
        panic!("{report}");
    }
}

// ---------------------------------------------------------------------------------------------
// Random text and mutations
// ---------------------------------------------------------------------------------------------

/// Characters that matter to the parsers, plus a few that should not appear at all.
const ALPHABET: &[char] = &[
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i',
    'j', 'k', 'l', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'w', 'x', 'z', 'A', 'B', 'C', 'D', 'F',
    'G', 'H', 'K', 'L', 'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U', 'W', 'Z', '+', '*', '/', '-', ' ',
    ' ', '\t', '\n', '=', '"', '[', ']', '{', '}', ',', '.', '(', ')', '#', '\'', '!', 'é', '歩',
    '\0', '\u{7f}', '\u{feff}',
];

fn random_char(rng: &mut StdRng) -> char {
    ALPHABET[rng.random_range(0..ALPHABET.len())]
}

/// A random string: half of the time from the alphabet, otherwise arbitrary bytes read as
/// (lossy) UTF-8.
fn random_text(rng: &mut StdRng, max_len: usize) -> String {
    let len = rng.random_range(0..=max_len);
    if rng.random_bool(0.5) {
        (0..len).map(|_| random_char(rng)).collect()
    } else {
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// One to three character edits: delete, duplicate, swap, replace, insert.
fn mutate_chars(rng: &mut StdRng, s: &str) -> String {
    let mut c: Vec<char> = s.chars().collect();
    for _ in 0..rng.random_range(1..=3) {
        if c.is_empty() {
            c.push(random_char(rng));
            continue;
        }
        let i = rng.random_range(0..c.len());
        match rng.random_range(0..5) {
            0 => {
                c.remove(i);
            }
            1 => c.insert(i, c[i]),
            2 => {
                let j = rng.random_range(0..c.len());
                c.swap(i, j);
            }
            3 => c[i] = random_char(rng),
            _ => c.insert(i, random_char(rng)),
        }
    }
    c.into_iter().collect()
}

/// Splits into tokens: runs of characters other than the separators, and single separators.
fn tokenize<'a>(s: &'a str, seps: &[char]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, ch) in s.char_indices() {
        if seps.contains(&ch) {
            if start < i {
                out.push(&s[start..i]);
            }
            out.push(&s[i..i + ch.len_utf8()]);
            start = i + ch.len_utf8();
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// One to three token edits: delete, duplicate, swap, replace from `pool`.
fn mutate_tokens(rng: &mut StdRng, s: &str, seps: &[char], pool: &[String]) -> String {
    let mut t: Vec<String> = tokenize(s, seps).into_iter().map(str::to_string).collect();
    for _ in 0..rng.random_range(1..=3) {
        if t.is_empty() {
            t.push(pool[rng.random_range(0..pool.len())].clone());
            continue;
        }
        let i = rng.random_range(0..t.len());
        match rng.random_range(0..4) {
            0 => {
                t.remove(i);
            }
            1 => {
                let x = t[i].clone();
                t.insert(i, x);
            }
            2 => {
                let j = rng.random_range(0..t.len());
                t.swap(i, j);
            }
            _ => t[i] = pool[rng.random_range(0..pool.len())].clone(),
        }
    }
    t.concat()
}

fn mutate(rng: &mut StdRng, s: &str, seps: &[char], pool: &[String]) -> String {
    let mut out = s.to_string();
    for _ in 0..rng.random_range(1..=2) {
        out = if rng.random_bool(0.5) {
            mutate_chars(rng, &out)
        } else {
            mutate_tokens(rng, &out, seps, pool)
        };
    }
    out
}

/// Positions reached by short random playouts from the start (valid SFENs to mutate).
fn sample_positions(
    rng: &mut StdRng,
    v: &Arc<Variant>,
    games: usize,
    plies: usize,
) -> Vec<Position> {
    let mut out = Vec::new();
    for _ in 0..games {
        let mut p = Position::start(v.clone());
        for _ in 0..plies {
            out.push(p.clone());
            let ms = p.legal_moves();
            if ms.is_empty() {
                break;
            }
            p.make_move(ms[rng.random_range(0..ms.len())]);
        }
        out.push(p);
    }
    out
}

/// Everything one may do with a parsed position; none of it may panic.
fn exercise(rng: &mut StdRng, p: &mut Position) {
    let s = p.to_sfen();
    let q = Position::from_sfen(p.variant(), &s)
        .unwrap_or_else(|e| panic!("to_sfen output {s:?} does not parse: {e}"));
    assert_eq!(q.to_sfen(), s, "SFEN round trip");
    assert_eq!(q.hash(), p.hash(), "hash of re-parsed {s}");
    let _ = p.outcome();
    for _ in 0..4 {
        let ms = p.legal_moves();
        if ms.is_empty() {
            break;
        }
        let m = ms[rng.random_range(0..ms.len())];
        let usi = p.move_to_usi(m);
        assert_eq!(p.parse_usi(&usi), Ok(m), "{usi} in {}", p.to_sfen());
        p.make_move(m);
        let _ = p.outcome();
        let _ = p.in_check();
    }
    while p.ply() > 0 {
        p.unmake_move();
    }
}

fn check_sfen_error(e: &Error, input: &str) -> Result<(), String> {
    match e {
        Error::Sfen { token, reason } => {
            if !input.contains(token.as_str()) {
                return Err(format!(
                    "token {token:?} is not part of the input {input:?}"
                ));
            }
            if reason.is_empty() {
                return Err(format!("empty reason for {input:?}"));
            }
            Ok(())
        }
        e => Err(format!("expected an SFEN error for {input:?}, got {e:?}")),
    }
}

fn check_usi_error(e: &Error, input: &str) -> Result<(), String> {
    match e {
        Error::Usi { token, reason } => {
            if !input.contains(token.as_str()) {
                return Err(format!(
                    "token {token:?} is not part of the input {input:?}"
                ));
            }
            if reason.is_empty() {
                return Err(format!("empty reason for {input:?}"));
            }
            Ok(())
        }
        e => Err(format!("expected a USI error for {input:?}, got {e:?}")),
    }
}

// ---------------------------------------------------------------------------------------------
// SFEN
// ---------------------------------------------------------------------------------------------

fn fuzz_sfen_inputs(inputs: impl Iterator<Item = (Arc<Variant>, String)>, seed: u64) -> usize {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut panics = Panics::default();
    let mut bad = Vec::new();
    let mut ok = 0;
    for (v, input) in inputs {
        let what = format!("Position::from_sfen[{}]", v.name);
        match panics.guard(&what, &input, || Position::from_sfen(&v, &input)) {
            Some(Ok(mut p)) => {
                ok += 1;
                let what = format!("exercise[{}]", v.name);
                panics.guard(&what, &input, || exercise(&mut rng, &mut p));
            }
            Some(Err(e)) => {
                if let Err(msg) = check_sfen_error(&e, &input) {
                    bad.push(msg);
                }
            }
            None => {}
        }
    }
    panics.assert_none();
    assert!(
        bad.is_empty(),
        "{} bad errors, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    ok
}

#[test]
fn sfen_random_bytes_never_panic() {
    let vs: Vec<Arc<Variant>> = variants().iter().map(|n| var(n)).collect();
    let mut rng = StdRng::seed_from_u64(1);
    let inputs: Vec<(Arc<Variant>, String)> = (0..20_000)
        .map(|_| {
            let v = vs[rng.random_range(0..vs.len())].clone();
            (v, random_text(&mut rng, 40))
        })
        .collect();
    fuzz_sfen_inputs(inputs.into_iter(), 2);
}

/// Mutations of valid SFENs (start positions and random playout positions of all variants).
fn sfen_mutation_inputs(seed: u64, ascii_only: bool) -> Vec<(Arc<Variant>, String)> {
    let vs: Vec<Arc<Variant>> = variants().iter().map(|n| var(n)).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut valid: Vec<(Arc<Variant>, String)> = Vec::new();
    for v in &vs {
        for p in sample_positions(&mut rng, v, 4, 40) {
            valid.push((v.clone(), p.to_sfen()));
        }
    }
    let mut pool: Vec<String> = Vec::new();
    for (_, s) in &valid {
        for t in tokenize(s, &[' ', '/']) {
            if !pool.iter().any(|p| p == t) {
                pool.push(t.to_string());
            }
        }
    }
    for extra in [
        "10",
        "0",
        "00",
        "+",
        "++P",
        "+K",
        "+k",
        "x",
        "-",
        "b",
        "w",
        "B",
        "63P",
        "64P",
        "0P",
        "P0",
        "99999999999999999999",
        "P+",
        "*",
        "é",
        "歩",
        "//",
        "1",
        "15",
        "16",
        "256",
        "kK",
        "KK",
        "2k",
        "1000000",
        "-1",
        "+1",
        "+é",
        "p*5e",
        "\t",
    ] {
        pool.push(extra.to_string());
    }
    (0..20_000)
        .map(|_| {
            let (v, s) = &valid[rng.random_range(0..valid.len())];
            // Sometimes feed a position to another variant.
            let v = if rng.random_bool(0.1) {
                vs[rng.random_range(0..vs.len())].clone()
            } else {
                v.clone()
            };
            let mut input = mutate(&mut rng, s, &[' ', '/'], &pool);
            if ascii_only {
                input.retain(|c| c.is_ascii());
            }
            (v, input)
        })
        .collect()
}

#[test]
fn sfen_mutations_never_panic_and_name_the_token() {
    let inputs = sfen_mutation_inputs(3, true);
    let ok = fuzz_sfen_inputs(inputs.into_iter(), 4);
    eprintln!("{ok} of 20000 mutated SFENs parsed");
    // The mutations keep a fair share of inputs valid, so the Ok path is exercised too.
    assert!(ok > 300, "only {ok} mutated SFENs parsed");
}

#[test]
fn sfen_non_ascii_mutations_never_panic() {
    let inputs = sfen_mutation_inputs(3, false);
    let ok = fuzz_sfen_inputs(inputs.into_iter(), 4);
    assert!(ok > 300, "only {ok} mutated SFENs parsed");
}

#[test]
fn sfen_non_ascii_in_hand_is_an_error_not_a_panic() {
    // A multi-byte character in the hand field.
    let v = var("shogi");
    let board = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL";
    for hand in ["é", "2é", "Pé", "歩", "P歩2"] {
        let input = format!("{board} b {hand} 1");
        let r = catch_unwind(|| Position::from_sfen(&v, &input));
        match r {
            Ok(Err(e)) => check_sfen_error(&e, &input).unwrap(),
            Ok(Ok(p)) => panic!("{input:?} parsed as {}", p.to_sfen()),
            Err(_) => panic!("from_sfen panicked on {input:?}"),
        }
    }
}

#[test]
fn sfen_specific_errors() {
    let v = var("shogi");
    let start = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL";
    let err = |s: &str| -> (String, String) {
        match Position::from_sfen(&v, s) {
            Err(Error::Sfen { token, reason }) => (token, reason),
            other => panic!("{s:?}: expected an SFEN error, got {other:?}"),
        }
    };
    // Bad side to move.
    let (tok, why) = err(&format!("{start} x - 1"));
    assert_eq!(tok, "x");
    assert!(why.contains("side to move"), "{why}");
    let msg = Position::from_sfen(&v, &format!("{start} x - 1"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("\"x\""), "{msg}");
    // Unknown piece letter.
    let (tok, why) = err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5Z1/LNSGKGSNL b - 1");
    assert_eq!(tok, "Z");
    assert!(why.contains("no such piece"), "{why}");
    // A promoted form that does not exist (gold, king).
    let (tok, _) = err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNS+GKGSNL b - 1");
    assert_eq!(tok, "+G");
    // Wrong rank count.
    let eight = "lnsgkgsnl/1r5b1/ppppppppp/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL";
    let (tok, why) = err(&format!("{eight} b - 1"));
    assert_eq!(tok, eight);
    assert!(why.contains("8 ranks"), "{why}");
    // Rank too long / too short.
    let (tok, why) = err("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R2/LNSGKGSNL b - 1");
    assert_eq!(tok, "1B5R2");
    assert!(why.contains("files"), "{why}");
    let (tok, _) = err("lnsgkgsnl/1r5b1/ppppppppp/9/9/8/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1");
    assert_eq!(tok, "8");
    let (tok, _) = err("lnsgkgsnl/1r5b1/ppppppppp/9/9/10/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1");
    assert_eq!(tok, "10");
    // Bad hands.
    let (tok, _) = err(&format!("{start} b K 1"));
    assert_eq!(tok, "K");
    let (tok, _) = err(&format!("{start} b 0P 1"));
    assert_eq!(tok, "0P");
    // 18 pawns on the board + 238 in hand: more than 255 of one kind.
    let (tok, _) = err(&format!("{start} b 238P 1"));
    assert_eq!(tok, "238P");
    let (tok, _) = err(&format!("{start} b 2 1"));
    assert_eq!(tok, "2");
    let (tok, _) = err(&format!("{start} b P+ 1"));
    assert!("P+".contains(&tok), "{tok}");
    // Bad move number, extra field.
    let (tok, _) = err(&format!("{start} b - 0"));
    assert_eq!(tok, "0");
    let (tok, _) = err(&format!("{start} b - x"));
    assert_eq!(tok, "x");
    let (tok, why) = err(&format!("{start} b - 1 extra"));
    assert_eq!(tok, "extra");
    assert!(why.contains("extra"), "{why}");
    // Empty input, two kings, side not to move in check.
    let (_, why) = err("   ");
    assert!(why.contains("empty"), "{why}");
    let (tok, _) = err("4k4/9/9/9/9/9/9/9/3KK4 b - 1");
    assert_eq!(tok, "K");
    let (_, why) = err("4k4/4R4/9/9/9/9/9/9/4K4 b - 1");
    assert!(why.contains("check"), "{why}");
    // A piece of another variant.
    let (tok, _) = err("4k4/9/9/9/9/9/9/9/3QK4 b - 1");
    assert_eq!(tok, "Q");
}

// ---------------------------------------------------------------------------------------------
// USI
// ---------------------------------------------------------------------------------------------

#[test]
fn usi_random_and_mutated_never_panic_and_name_the_token() {
    let mut rng = StdRng::seed_from_u64(5);
    let mut panics = Panics::default();
    let mut bad = Vec::new();
    let mut ok = 0;
    let mut checked = 0;
    for name in variants() {
        let v = var(name);
        let positions = sample_positions(&mut rng, &v, 3, 30);
        let mut valid: Vec<String> = Vec::new();
        for p in &positions {
            for m in p.legal_moves() {
                valid.push(p.move_to_usi(m));
            }
        }
        let mut pool: Vec<String> = vec![
            "10".into(),
            "0".into(),
            "+".into(),
            "*".into(),
            "P*".into(),
            "a".into(),
            "j".into(),
            "z".into(),
            "15o".into(),
            "16a".into(),
            "é".into(),
            "".into(),
        ];
        for u in valid.iter().take(200) {
            for t in tokenize(u, &['*', '+']) {
                pool.push(t.to_string());
            }
        }
        for i in 0..5_000 {
            let input = match i % 3 {
                0 => random_text(&mut rng, 12),
                _ => {
                    let s = &valid[rng.random_range(0..valid.len())];
                    mutate(&mut rng, s, &['*', '+'], &pool)
                }
            };
            let p = &positions[rng.random_range(0..positions.len())];
            checked += 1;
            let what = format!("Position::parse_usi[{name}]");
            if let Some(r) = panics.guard(&what, &input, || p.parse_usi(&input)) {
                match r {
                    Ok(m) => {
                        ok += 1;
                        if !p.legal_moves().contains(&m) {
                            bad.push(format!(
                                "{input:?} accepted but not legal in {}",
                                p.to_sfen()
                            ));
                        }
                    }
                    Err(e) => {
                        if let Err(msg) = check_usi_error(&e, &input) {
                            bad.push(msg);
                        }
                    }
                }
            }
            let what = format!("Variant::parse_usi_syntax[{name}]");
            if let Some(Err(e)) = panics.guard(&what, &input, || v.parse_usi_syntax(&input)) {
                if let Err(msg) = check_usi_error(&e, &input) {
                    bad.push(msg);
                }
            }
            let what = format!("Variant::parse_square[{name}]");
            if let Some(Some(sq)) = panics.guard(&what, &input, || v.parse_square(&input)) {
                if sq >= v.num_squares() || v.square_name(sq) != input {
                    bad.push(format!("parse_square({input:?}) = {sq}"));
                }
            }
            // play_usi with several tokens.
            let line = format!("{input} {input}");
            let mut q = p.clone();
            let what = format!("Position::play_usi[{name}]");
            if let Some(Err(e)) = panics.guard(&what, &line, || q.play_usi(&line)) {
                if let Err(msg) = check_usi_error(&e, &line) {
                    bad.push(msg);
                }
            }
        }
    }
    panics.assert_none();
    assert!(
        bad.is_empty(),
        "{} bad results, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    eprintln!("{ok} of {checked} USI inputs were legal moves");
    assert_eq!(checked, 5_000 * variants().len());
    assert!(ok > 100, "only {ok} mutated USI moves were legal");
}

#[test]
fn usi_specific_errors() {
    let v = var("shogi");
    let p = Position::start(v.clone());
    let err = |s: &str| -> String {
        match p.parse_usi(s) {
            Err(Error::Usi { token, reason }) => {
                assert_eq!(token, s);
                reason
            }
            other => panic!("{s:?}: expected a USI error, got {other:?}"),
        }
    };
    assert!(err("").contains("empty"));
    assert!(err("7g7f7e").contains("square"));
    assert!(err("0g7f").contains("square") || err("0g7f").contains("FROM"));
    assert!(err("10a9a").contains("square"));
    assert!(err("7g7g").contains("same square"));
    assert!(err("7j7f").contains("square"));
    assert!(err("K*5e").contains("dropped"));
    assert!(err("X*5e").contains("dropped"));
    assert!(err("P*5e").contains("no P in hand"));
    assert!(err("5e5d").contains("no piece"));
    assert!(err("3c3d").contains("not the mover"));
    assert!(err("7g7f+").contains("cannot promote"));
    assert!(err("7g7e").contains("illegal"));
    assert!(err("7g7f歩").contains("non-ASCII"));
    // The same through play_usi: the failing token is named, earlier moves stay played.
    let mut q = p.clone();
    match q.play_usi("7g7f 3c3d 2h2h") {
        Err(Error::Usi { token, .. }) => assert_eq!(token, "2h2h"),
        other => panic!("{other:?}"),
    }
    assert_eq!(q.ply(), 2);
    // Hand shogi: an onager drop that does not check.
    let hand = var("hand");
    let h = Position::start(hand);
    match h.parse_usi("O*5e") {
        Err(Error::Usi { token, reason }) => {
            assert_eq!(token, "O*5e");
            assert!(reason.contains("illegal drop"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// TOML and Betza
// ---------------------------------------------------------------------------------------------

fn builtin_text(name: &str) -> String {
    let path = format!(
        "{}/../../configs/variants/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Replaces the value after `=` on a random assignment line.
fn mutate_value(rng: &mut StdRng, text: &str, values: &[String]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let assigns: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(" = ") && !l.trim_start().starts_with('#'))
        .map(|(i, _)| i)
        .collect();
    if assigns.is_empty() {
        return text.to_string();
    }
    let i = assigns[rng.random_range(0..assigns.len())];
    let key = lines[i].split(" = ").next().unwrap().to_string();
    lines[i] = format!("{key} = {}", values[rng.random_range(0..values.len())]);
    lines.join("\n")
}

fn random_betza(rng: &mut StdRng) -> String {
    const B: &[&str] = &[
        "W", "F", "D", "A", "N", "H", "C", "Z", "G", "K", "R", "B", "Q", "f", "b", "s", "v", "l",
        "r", "h", "m", "c", "p", "(paf)", "(", ")", "0", "1", "2", "3", "4", "9", "NN", "ff", "fs",
        "X", "(paf)9", "(paf)0",
    ];
    (0..rng.random_range(0..6))
        .map(|_| B[rng.random_range(0..B.len())])
        .collect()
}

#[test]
fn toml_mutations_never_panic() {
    let mut rng = StdRng::seed_from_u64(9);
    let mut panics = Panics::default();
    let mut bad = Vec::new();
    let mut compiled = 0;
    let mut values: Vec<String> = [
        "0",
        "1",
        "2",
        "3",
        "5",
        "9",
        "10",
        "15",
        "16",
        "255",
        "256",
        "-1",
        "99999999999",
        "true",
        "false",
        "\"x\"",
        "\"\"",
        "\"loss\"",
        "\"draw\"",
        "\"win\"",
        "\"single\"",
        "\"consecutive-wins:0\"",
        "\"consecutive-wins:2\"",
        "[1, 2]",
        "[0]",
        "[255]",
        "[]",
        "{ nifu = true }",
        "{ must_check = true }",
        "{ in_zone = false }",
        "{ allowed = false }",
        "{ no_mate = true, nifu = true }",
        "{ max_per_file = 2 }",
        "{ max_per_file = 0 }",
        "{ name = \"x\", betza = \"K\" }",
        "\"forced\"",
        "\"optional\"",
        "\"none\"",
        "[\"P\"]",
        "[\"K\"]",
        "\"9/9/9/9/9/9/9/9/9 b - 1\"",
        "\"k/K b - 1\"",
        "\"1k/K1 b - 1\"",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..30 {
        values.push(format!("{:?}", random_betza(&mut rng)));
    }
    let texts: Vec<(String, String)> = variants()
        .iter()
        .map(|n| (n.to_string(), builtin_text(n)))
        .collect();
    let line_pool: Vec<String> = texts
        .iter()
        .flat_map(|(_, t)| t.lines().map(|l| format!("{l}\n")).collect::<Vec<_>>())
        .collect();
    let total = 10_000;
    for i in 0..total {
        let (name, base) = &texts[rng.random_range(0..texts.len())];
        let text = match i % 4 {
            0 => mutate_chars(&mut rng, base),
            1 => mutate_tokens(&mut rng, base, &['\n'], &line_pool),
            2 => mutate_value(&mut rng, base, &values),
            _ => {
                let t = mutate_value(&mut rng, base, &values);
                mutate_value(&mut rng, &t, &values)
            }
        };
        let file = format!("{name}-mutant-{i}.toml");
        let Some(spec) = panics.guard("VariantSpec::from_toml", &text, || {
            VariantSpec::from_toml(&text, &file)
        }) else {
            continue;
        };
        let spec = match spec {
            Ok(s) => s,
            Err(Error::Config { file: f, .. }) => {
                if f != file {
                    bad.push(format!("error names file {f:?}, not {file:?}"));
                }
                continue;
            }
            Err(e) => {
                bad.push(format!("from_toml gave a non-config error {e:?}"));
                continue;
            }
        };
        let Some(v) = panics.guard("Variant::compile", &text, || Variant::compile(spec)) else {
            continue;
        };
        match v {
            Ok(v) => {
                compiled += 1;
                let v = Arc::new(v);
                panics.guard("play compiled mutant", &text, || {
                    let mut r = StdRng::seed_from_u64(i as u64);
                    let mut p = Position::start(v.clone());
                    exercise(&mut r, &mut p);
                    for _ in 0..12 {
                        let ms = p.legal_moves();
                        if ms.is_empty() {
                            break;
                        }
                        p.make_move(ms[r.random_range(0..ms.len())]);
                    }
                    let _ = p.outcome();
                    let s = p.to_sfen();
                    Position::from_sfen(&v, &s).unwrap();
                });
            }
            Err(Error::Config { .. }) => {}
            Err(e) => bad.push(format!("compile gave a non-config error {e:?}")),
        }
    }
    panics.assert_none();
    assert!(
        bad.is_empty(),
        "{} bad results, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    eprintln!("{compiled} of {total} TOML mutants compiled");
    assert!(
        compiled > 1000,
        "only {compiled} of {total} mutants compiled"
    );
}

#[test]
fn toml_random_text_never_panics() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut panics = Panics::default();
    for _ in 0..20_000 {
        let text = random_text(&mut rng, 60);
        if let Some(Ok(spec)) = panics.guard("VariantSpec::from_toml", &text, || {
            VariantSpec::from_toml(&text, "r")
        }) {
            panics.guard("Variant::compile", &text, || Variant::compile(spec));
        }
    }
    panics.assert_none();
}

#[test]
fn betza_random_strings_never_panic() {
    let mut rng = StdRng::seed_from_u64(13);
    let mut panics = Panics::default();
    let base = VariantSpec::builtin("minishogi").unwrap();
    for i in 0..10_000 {
        let b = if i % 2 == 0 {
            random_betza(&mut rng)
        } else {
            random_text(&mut rng, 8)
        };
        panics.guard("betza::parse", &b, || betza::parse(&b));
        // The same text as the gold's move and as the promoted silver's move.
        let mut spec = base.clone();
        let pieces = spec.pieces.as_mut().unwrap();
        let gi = pieces.iter().position(|p| p.letter == "G").unwrap();
        let si = pieces.iter().position(|p| p.letter == "S").unwrap();
        if i % 3 == 0 {
            pieces[si].promoted.as_mut().unwrap().betza = b.clone();
        } else {
            pieces[gi].betza = b.clone();
        }
        let r = panics.guard("Variant::compile(betza)", &b, || Variant::compile(spec));
        if let Some(Ok(v)) = r {
            let v = Arc::new(v);
            panics.guard("play with betza", &b, || {
                let mut p = Position::start(v.clone());
                let mut r = StdRng::seed_from_u64(i);
                for _ in 0..10 {
                    let ms = p.legal_moves();
                    if ms.is_empty() {
                        break;
                    }
                    p.make_move(ms[r.random_range(0..ms.len())]);
                }
                while p.ply() > 0 {
                    p.unmake_move();
                }
                assert_eq!(p.to_sfen(), v.start_sfen);
            });
        }
    }
    panics.assert_none();
}

#[test]
fn config_specific_errors() {
    let shogi = builtin_text("shogi");
    // An unknown key is named.
    let text = format!("bogus_key = 1\n{shogi}");
    let e = VariantSpec::from_toml(&text, "x.toml").unwrap_err();
    assert!(matches!(e, Error::Config { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("bogus_key"), "{msg}");
    assert!(msg.contains("x.toml"), "{msg}");
    // An unknown key inside a table is named as well.
    let text = shogi.replace("[promotion]\n", "[promotion]\nzone_deepness = 2\n");
    let msg = VariantSpec::from_toml(&text, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("zone_deepness"), "{msg}");
    // A bad Betza string names pieces[i].betza.
    let mut spec = VariantSpec::builtin("shogi").unwrap();
    let i = spec
        .pieces
        .as_ref()
        .unwrap()
        .iter()
        .position(|p| p.letter == "G")
        .unwrap();
    spec.pieces.as_mut().unwrap()[i].betza = "WfF?".into();
    match Variant::compile(spec) {
        Err(Error::Config { key, reason, .. }) => {
            assert_eq!(key, format!("pieces[{i}].betza"));
            assert!(!reason.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // In a promoted form: pieces[i].promoted.betza.
    let mut spec = VariantSpec::builtin("shogi").unwrap();
    let i = spec
        .pieces
        .as_ref()
        .unwrap()
        .iter()
        .position(|p| p.letter == "R")
        .unwrap();
    spec.pieces.as_mut().unwrap()[i]
        .promoted
        .as_mut()
        .unwrap()
        .betza = "(paf)9cR".into();
    match Variant::compile(spec) {
        Err(Error::Config { key, .. }) => assert_eq!(key, format!("pieces[{i}].promoted.betza")),
        other => panic!("{other:?}"),
    }
    // Other keys by name.
    let cases: &[(&str, &str, &str)] = &[
        ("files = 9", "files = 0", "files"),
        ("files = 9", "files = 37", "files"),
        ("ranks = 9", "ranks = 99", "ranks"),
        ("zone_depth = 3", "zone_depth = 10", "promotion.zone_depth"),
        (
            "stalemate = \"loss\"",
            "stalemate = \"maybe\"",
            "end.stalemate",
        ),
        (
            "perpetual_check = \"loss\"",
            "perpetual_check = \"win\"",
            "end.perpetual_check",
        ),
        ("repetition = 4", "repetition = 1", "end.repetition"),
        (
            "repetition = 4",
            "repetition = 4\nrepetition_result = \"lose\"",
            "end.repetition_result",
        ),
        (
            "nifu = true, no_mate",
            "nifu = true, max_per_file = 2, no_mate",
            "pieces[7].drop.max_per_file",
        ),
        (
            "nifu = true, no_mate",
            "max_per_file = 0, no_mate",
            "pieces[7].drop.max_per_file",
        ),
        ("letter = \"K\"", "letter = \"KK\"", "pieces[0].letter"),
        ("letter = \"R\"", "letter = \"K\"", "pieces[1].letter"),
    ];
    for (from, to, key) in cases {
        assert!(shogi.contains(from), "{from}");
        let text = shogi.replacen(from, to, 1);
        // A word outside its key's set is refused as the file is read, the rest on compiling.
        match VariantSpec::from_toml(&text, "x.toml").and_then(Variant::compile) {
            Err(Error::Config { key: k, .. }) => assert_eq!(&k, key, "{to}"),
            other => panic!("{to}: {other:?}"),
        }
    }
    // A start position that does not fit the board names `start`.
    let text = shogi.replacen("1B5R1", "1B5R2", 1);
    let spec = VariantSpec::from_toml(&text, "x.toml").unwrap();
    match Variant::compile(spec) {
        Err(Error::Config { key, reason, .. }) => {
            assert_eq!(key, "start");
            assert!(reason.contains("1B5R2"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Bad TOML syntax is a config error, not a panic.
    let e = VariantSpec::from_toml("files = = 9", "y.toml").unwrap_err();
    assert!(matches!(e, Error::Config { .. }));
    // Unknown built-in.
    match Variant::builtin("chess") {
        Err(Error::Config { reason, .. }) => assert!(reason.contains("shogi"), "{reason}"),
        other => panic!("{other:?}"),
    }
}
