//! `trainer arena` end to end: our engine over the USI pipe, the hand-shogi match rule, the
//! referee against misbehaving engines, Fairy-Stockfish over UCI, and balanced opening books
//! (`trainer openings`).

use std::path::PathBuf;
use std::process::Command;

/// Runs `trainer arena ARGS`; returns stdout (panics with both streams on failure).
fn arena(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("arena")
        .args(args)
        .output()
        .expect("run trainer arena");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "trainer arena {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
}

/// The (n, W, D, L) of a table row (`games`, `hands` or `matches`).
fn row(out: &str, label: &str) -> (u64, u64, u64, u64) {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label))
        .unwrap_or_else(|| panic!("no {label} row in\n{out}"));
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(4)
        .map(|t| t.parse().unwrap_or_else(|_| panic!("bad row {line:?}")))
        .collect();
    let r = (v[0], v[1], v[2], v[3]);
    assert_eq!(r.0, r.1 + r.2 + r.3, "{line}");
    assert!(line.contains('%') && line.contains('['), "{line}");
    r
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arena-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A USI "engine" in sh that answers every `go` with `reply` (an sh command).
fn fake_usi(on_go: &str) -> String {
    format!(
        "engine:while read l; do case \"$l\" in usi) echo 'id name fake'; echo usiok;; \
         isready) echo readyok;; go*) {on_go};; quit) exit 0;; esac; done"
    )
}

#[test]
fn our_usi_engine_against_mcts() {
    let dir = temp_dir("usi");
    let engine = format!(
        "engine:{} usi --variant minishogi",
        env!("CARGO_BIN_EXE_trainer")
    );
    let out = arena(&[
        "--variant",
        "minishogi",
        "--player",
        &engine,
        "--player",
        "mcts",
        "--games",
        "4",
        "--nodes",
        "8",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(row(&out, "games").0, 4, "{out}");
    assert!(
        !out.contains("illegal") && !out.contains("timeout"),
        "{out}"
    );
    let games = std::fs::read_to_string(dir.join("games.txt")).unwrap();
    let lines: Vec<&str> = games.lines().collect();
    assert_eq!(lines.len(), 4, "{games}");
    for l in lines {
        assert!(l.starts_with("sfen ") && l.contains(" moves ") && l.contains(" result "));
    }
    // Minishogi is not standard shogi: no CSA files.
    assert!(!dir.join("game-0001.csa").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hand_shogi_matches() {
    let out = arena(&[
        "--variant",
        "hand",
        "--player",
        "mcts",
        "--player",
        "mcts",
        "--games",
        "2",
        "--nodes",
        "8",
        "--max-hands",
        "4",
        "--random-plies",
        "8",
    ]);
    let hands = row(&out, "hands");
    let matches = row(&out, "matches");
    assert_eq!(matches.0, 2, "{out}");
    let hand_lines = out
        .lines()
        .filter(|l| l.starts_with("match ") && l.contains(" hand "))
        .count() as u64;
    assert_eq!(hands.0, hand_lines, "{out}");
    assert!((2..=8).contains(&hands.0), "{out}");
    // A won match needs at least two hand wins, a lost one two hand losses.
    assert!(
        hands.1 >= 2 * matches.1 && hands.3 >= 2 * matches.3,
        "{out}"
    );
    assert!(
        hands.0 >= 2 * (matches.1 + matches.3) + 4 * matches.2,
        "{out}"
    );

    // Against an engine that only plays illegal moves, every match is two hands won in a row.
    let out = arena(&[
        "--variant",
        "hand",
        "--player",
        "mcts",
        "--player",
        &fake_usi("echo 'bestmove 9a9b'"),
        "--games",
        "3",
        "--nodes",
        "4",
    ]);
    assert_eq!(row(&out, "hands"), (6, 6, 0, 0), "{out}");
    assert_eq!(row(&out, "matches"), (3, 3, 0, 0), "{out}");
}

#[test]
fn referee_scores_misbehaviour_as_losses() {
    // Illegal moves: each is a loss, the match goes on.
    let out = arena(&[
        "--variant",
        "minishogi",
        "--player",
        "mcts",
        "--player",
        &fake_usi("echo 'bestmove 9a9b'"),
        "--games",
        "3",
        "--nodes",
        "4",
    ]);
    assert_eq!(row(&out, "games"), (3, 3, 0, 0), "{out}");
    assert_eq!(out.matches("illegal move by").count(), 3, "{out}");
    assert!(out.contains("\"9a9b\""), "{out}");

    // A crash (the engine exits on `go`) and malformed replies: losses, the engine restarts.
    let out = arena(&[
        "--variant",
        "minishogi",
        "--player",
        &fake_usi("exit 3"),
        "--player",
        &fake_usi("echo 'bestmove'"),
        "--games",
        "2",
    ]);
    let r = row(&out, "games");
    assert_eq!(r.0, 2, "{out}");
    assert!(out.contains("crash"), "{out}");
    assert!(out.contains("malformed"), "{out}");
    assert!(out.contains("restarted"), "{out}");

    // A timeout: no answer within movetime + margin.
    let out = arena(&[
        "--variant",
        "minishogi",
        "--player",
        "mcts",
        "--player",
        &fake_usi("true"),
        "--games",
        "2",
        "--movetime",
        "50",
        "--margin",
        "200",
        "--nodes",
        "4",
    ]);
    assert_eq!(row(&out, "games"), (2, 2, 0, 0), "{out}");
    assert_eq!(out.matches("timeout").count(), 2, "{out}");
}

/// An engine that prints a line that is not UTF-8 and a 1 MB line before each answer plays
/// on: its games end by its resignation (no crash, no restart) and the odd lines are noted.
#[test]
fn odd_engine_output_is_read_lossily_and_noted() {
    let out = arena(&[
        "--variant",
        "minishogi",
        "--player",
        "mcts",
        "--player",
        &fake_usi(
            "head -c 1000000 /dev/zero | tr '\\000' x; echo; printf 'info string \\377\\n'; \
             echo 'bestmove resign'",
        ),
        "--games",
        "2",
        "--nodes",
        "4",
    ]);
    assert_eq!(row(&out, "games"), (2, 2, 0, 0), "{out}");
    assert_eq!(out.matches("resigns").count(), 2, "{out}");
    assert!(
        !out.contains("crash") && !out.contains("restarted"),
        "{out}"
    );
    assert_eq!(out.matches("cut to 65536").count(), 2, "{out}");
    assert_eq!(out.matches("is not UTF-8").count(), 2, "{out}");
}

#[test]
fn sprt_stops_early() {
    let out = arena(&[
        "--variant",
        "minishogi",
        "--player",
        "mcts",
        "--player",
        &fake_usi("echo 'bestmove 9a9b'"),
        "--games",
        "200",
        "--nodes",
        "2",
        "--sprt",
        "0,50",
    ]);
    let r = row(&out, "games");
    assert!(r.0 < 200, "{out}");
    assert!(out.contains("H1 accepted") && out.contains("LLR"), "{out}");
}

#[test]
fn shogi_games_are_saved_as_csa() {
    let dir = temp_dir("csa");
    arena(&[
        "--variant",
        "shogi",
        "--player",
        "mcts",
        "--player",
        &fake_usi("echo 'bestmove resign'"),
        "--games",
        "2",
        "--nodes",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    for i in 1..=2 {
        let csa = std::fs::read_to_string(dir.join(format!("game-{i:04}.csa"))).unwrap();
        assert!(csa.starts_with("V2.2\n"), "{csa}");
        assert!(csa.contains("P1-KY-KE-GI-KI-OU-KI-GI-KE-KY"), "{csa}");
        assert!(csa.contains("%TORYO"), "{csa}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn find_fairy_stockfish() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/games")])
        .map(|d| d.join("fairy-stockfish"))
        .find(|p| p.is_file())
}

/// Fairy-Stockfish's path; without it a test says why and passes, except under CI.
fn fairy_stockfish_or_skip() -> Option<PathBuf> {
    let fsf = find_fairy_stockfish();
    if fsf.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("fairy-stockfish is not installed (scripts/test.sh installs it)");
        }
        eprintln!("skipped: fairy-stockfish not installed (apt-get install fairy-stockfish)");
    }
    fsf
}

#[test]
fn against_fairy_stockfish_over_uci() {
    let Some(fsf) = fairy_stockfish_or_skip() else {
        return;
    };
    let dir = temp_dir("fsf");
    let out = arena(&[
        "--variant",
        "minishogi",
        "--player",
        "mcts",
        "--player",
        &format!("engine:{}", fsf.display()),
        "--protocol-b",
        "uci",
        "--option-b",
        "Threads=1",
        "--movetime",
        "50",
        "--margin",
        "3000",
        "--nodes",
        "16",
        "--games",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(row(&out, "games").0, 2, "{out}");
    // Fairy-Stockfish's moves all passed the referee (converted from its notation).
    assert!(
        !out.contains("illegal") && !out.contains("malformed") && !out.contains("timeout"),
        "{out}"
    );
    let games = std::fs::read_to_string(dir.join("games.txt")).unwrap();
    assert_eq!(games.lines().count(), 2, "{games}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A script's run that succeeded and printed each of `lines`.
fn printed(out: &std::process::Output, lines: &[&str]) {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in lines {
        assert!(text.contains(line), "no {line:?} in\n{text}");
    }
}

/// A script's run that refused `missing` by name, without a traceback.
fn refused_missing(out: &std::process::Output, missing: &std::path::Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("{}: No such file", missing.display())) && !err.contains("Traceback"),
        "{err}"
    );
}

/// `scripts/opening-split.py` (BENCHMARKS.md, "What the 400 games measure"): each game lands in
/// the band of Fairy-Stockfish's evaluation of its opening from our side, with our score.
#[test]
fn opening_split_sorts_our_games_by_the_opening_s_evaluation() {
    let Some(fsf) = fairy_stockfish_or_skip() else {
        return;
    };
    let dir = temp_dir("split");
    std::fs::create_dir_all(&dir).unwrap();
    // Gote without its rook and bishop: sente is far ahead. We are sente in the first game
    // (sente wins) and gote in the second (sente wins again); the third line is not a record.
    let start = "2sgk/4p/5/P4/KGSBR b - 1";
    let games = format!(
        "sfen {start} moves 1e1d result 1 sente engine:trainer usi --model m gote engine:fsf reason checkmate\n\
         sfen {start} moves 1e1d result 1 sente engine:fsf gote engine:trainer usi --model m reason checkmate\n\
         not a game\n"
    );
    let file = dir.join("games.txt");
    std::fs::write(&file, games).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("scripts/opening-split.py"))
        .arg(&file)
        .args(["--plies", "1", "--movetime", "100", "--engine"])
        .arg(&fsf)
        .output()
        .expect("run python3 scripts/opening-split.py");
    printed(
        &out,
        &[
            "2 games, score 1 (50.0%)",
            "opening [300, +inf) cp for us: 1 games, score 1 (100.0%)",
            "opening [-inf, -300) cp for us: 1 games, score 0 (0.0%)",
            "1 openings evaluated at 100 ms; 1 lines skipped",
        ],
    );
    // A missing file is refused by name, without a traceback.
    let missing = dir.join("missing.txt");
    let out = Command::new("python3")
        .arg(root.join("scripts/opening-split.py"))
        .arg(&missing)
        .arg("--engine")
        .arg(&fsf)
        .output()
        .expect("run python3 scripts/opening-split.py");
    refused_missing(&out, &missing);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `scripts/book-pair.py` (BENCHMARKS.md, the two-hour pairs over the book): each arm's record
/// and score, and the difference with the openings as clusters, against figures worked by hand.
#[test]
fn book_pair_scores_two_arms_by_opening() {
    let dir = temp_dir("book-pair");
    std::fs::create_dir_all(&dir).unwrap();
    let s = "rbsgk/4p/5/P4/KGSBR b - 1";
    let ours = "engine:trainer usi --model m";
    let fsf = "engine:fsf";
    // Opening X (1e1d 5a5b) and Y (2e2d 5a5b), our engine on either side.
    let rec = |moves: &str, result: i32, sente: &str, gote: &str| {
        format!(
            "sfen {s} moves {moves} result {result} sente {sente} gote {gote} reason checkmate\n"
        )
    };
    // A: X won with both colours, Y lost: 2 of 3.
    let a = dir.join("a.txt");
    std::fs::write(
        &a,
        rec("1e1d 5a5b 2e2d", 1, ours, fsf)
            + &rec("1e1d 5a5b 4a4b", -1, fsf, ours)
            + &rec("2e2d 5a5b", -1, ours, fsf)
            + "not a game\n"
            + &rec("2e2d 5a5b", 1, fsf, "engine:other"),
    )
    .unwrap();
    // B, two matches: X won and lost, Y drawn: 1.5 of 3.
    let (b1, b2) = (dir.join("b1.txt"), dir.join("b2.txt"));
    std::fs::write(&b1, rec("1e1d 5a5b", 1, ours, fsf)).unwrap();
    std::fs::write(
        &b2,
        rec("1e1d 5a5b", 1, fsf, ours) + &rec("2e2d 5a5b 3e3d", 0, fsf, ours),
    )
    .unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = |args: &[&std::path::Path]| {
        let mut c = Command::new("python3");
        c.arg(root.join("scripts/book-pair.py"))
            .arg("--plies")
            .arg("2")
            .arg("--a")
            .arg(args[0])
            .arg("--b");
        c.args(&args[1..]);
        c.output().expect("run python3 scripts/book-pair.py")
    };
    let out = run(&[&a, &b1, &b2]);
    // Terms per opening: X 2/3 - 1/3 = 1/3, Y 0 - 0.5/3 = -1/6; the sum 1/6; their spread
    // 2 * ((1/4)^2 + (1/4)^2) = 1/4, so the standard error is 1/2.
    printed(
        &out,
        &[
            "A: 2-0-1 of 3, 66.67%; 2 lines skipped",
            "B: 1-1-1 of 3, 50.00%",
            "A - B: +16.67 points, SE 50.00 (2 openings as clusters)",
        ],
    );
    // A missing file is refused by name, without a traceback.
    let missing = dir.join("missing.txt");
    let out = run(&[&missing, &b1]);
    refused_missing(&out, &missing);
    // So is a file that is not text.
    let binary = dir.join("binary.txt");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let out = run(&[&a, &binary]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains(&format!("{}: ", binary.display()))
            && !err.contains("Traceback"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `trainer openings ARGS`: (success, stdout, stderr).
fn openings(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("openings")
        .args(args)
        .output()
        .expect("run trainer openings");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Fairy-Stockfish's last score (from the side to move) for a position in USI notation,
/// searched to `depth` in USI mode with a fresh hash: an evaluation independent of the book's.
fn fsf_usi_score(fsf: &PathBuf, variant: &str, position: &str, depth: u32) -> i32 {
    use std::io::{BufRead, BufReader, Write};
    let mut p = Command::new(fsf)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start fairy-stockfish");
    let mut stdin = p.stdin.take().unwrap();
    write!(
        stdin,
        "usi\nsetoption name UCI_Variant value {variant}\nsetoption name Threads value 1\n\
         isready\nusinewgame\nposition {position}\ngo depth {depth}\n"
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut score = None;
    for line in BufReader::new(p.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let t: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = t.iter().position(|&w| w == "score") {
            if t[i + 1] == "cp" {
                score = Some(t[i + 2].parse().unwrap());
            }
        }
        if line.starts_with("bestmove") {
            break;
        }
    }
    writeln!(stdin, "quit").ok();
    let _ = p.wait();
    score.unwrap_or_else(|| panic!("no cp score for {position}"))
}

/// A match of `games` games of our network-free search against itself over the openings
/// file `path`.
fn network_free_match_on(variant: &str, path: &std::path::Path, games: u32) {
    let out = arena(&[
        "--variant",
        variant,
        "--player",
        "mcts",
        "--player",
        "mcts",
        "--nodes",
        "4",
        "--games",
        &games.to_string(),
        "--openings",
        &path.display().to_string(),
    ]);
    assert_eq!(row(&out, "games").0, games as u64, "{out}");
}

/// A book's opening lines and the scores of their comments (`# K: sente X cp`), checked to be
/// `n` distinct openings, each under its score.
fn book_entries(text: &str, n: usize) -> (Vec<&str>, Vec<i32>) {
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let scores: Vec<i32> = text
        .lines()
        .filter_map(|l| {
            l.strip_prefix("# ")?
                .split_once(": sente ")?
                .1
                .strip_suffix(" cp")
        })
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!((lines.len(), scores.len()), (n, n), "{text}");
    let distinct: std::collections::HashSet<_> = lines.iter().collect();
    assert_eq!(distinct.len(), n, "{text}");
    (lines, scores)
}

#[test]
fn opening_books_keep_what_the_engine_rates_even() {
    let Some(fsf) = fairy_stockfish_or_skip() else {
        return;
    };
    let dir = temp_dir("book");
    std::fs::create_dir_all(&dir).unwrap();
    let engine = fsf.display().to_string();
    // Three plies: gote is to move after them, so the comments' sente view is the negated score.
    let book = |name: &str, extra: &[&str]| {
        let out = dir.join(name);
        let mut args = vec![
            "--variant",
            "minishogi",
            "--engine",
            &engine,
            "--protocol",
            "uci",
            "--option",
            "Threads=1",
            "--random-plies",
            "3",
            "--count",
            "6",
            "--max-cp",
            "60",
            "--depth",
            "7",
            "--seed",
            "5",
            "--out",
        ];
        let path = out.display().to_string();
        args.push(&path);
        args.extend_from_slice(extra);
        let (ok, stdout, stderr) = openings(&args);
        (ok, stdout, stderr, out)
    };
    let (ok, stdout, stderr, first) = book("a.txt", &[]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("openings: 6 of "), "{stdout}");
    let text = std::fs::read_to_string(&first).unwrap();
    // The same engine at a depth makes the same book again.
    let (ok, _, stderr, second) = book("b.txt", &[]);
    assert!(ok, "{stderr}");
    assert_eq!(text, std::fs::read_to_string(&second).unwrap());
    let (lines, scores) = book_entries(&text, 6);
    for (line, sente_cp) in lines.iter().zip(&scores) {
        assert!(line.starts_with("startpos moves ") && line.split_whitespace().count() == 5);
        assert!(sente_cp.abs() <= 60, "{line}: {sente_cp}");
        // Fairy-Stockfish over USI rates it the same from gote's side.
        assert_eq!(
            -fsf_usi_score(&fsf, "minishogi", line, 7),
            *sente_cp,
            "{line}"
        );
    }
    // The arena plays it.
    network_free_match_on("minishogi", &first, 4);
    // Too few openings within the bound, or no engine: refused with the reason, no file left.
    let (ok, _, stderr, out) = book("c.txt", &["--max-candidates", "3"]);
    assert!(
        !ok && stderr.contains("openings within 60 cp after 3 distinct ones"),
        "{stderr}"
    );
    assert!(!out.exists());
    let (ok, _, stderr) = openings(&[
        "--variant",
        "minishogi",
        "--engine",
        "/nonexistent/engine",
        "--out",
        &dir.join("d.txt").display().to_string(),
    ]);
    assert!(!ok && stderr.contains("/nonexistent/engine"), "{stderr}");
    // An engine's extreme or missing score is refused, not a panic.
    for (on_go, said) in [
        (
            "echo 'info depth 1 score cp -2147483648'; echo 'bestmove 1e1d'",
            "only 0 of 100 openings within 150 cp after 3 distinct ones",
        ),
        ("echo 'bestmove 1e1d'", "the engine gave no score"),
    ] {
        let fake = fake_usi(on_go);
        let (ok, _, stderr) = openings(&[
            "--variant",
            "minishogi",
            "--engine",
            fake.strip_prefix("engine:").unwrap(),
            "--max-candidates",
            "3",
            "--out",
            &dir.join("e.txt").display().to_string(),
        ]);
        assert!(
            !ok && stderr.contains(said) && !stderr.contains("panicked"),
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// README, "Balanced openings": the shipped minishogi book is what its header and the README
/// say, the arena reads it, and Fairy-Stockfish rates its openings as written.
#[test]
fn the_shipped_books_are_balanced() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "`configs/openings/minishogi.txt` is such a book: 200 openings that Fairy-Stockfish \
         11.1 rates within 150 cp at depth 14.",
        "`configs/openings/judkins.txt` and `configs/openings/kyoto.txt` are the same for \
         Judkins and Kyoto shogi (`--variant judkins`, `--variant kyoto`).",
    ] {
        assert!(readme.contains(said), "README.md no longer says: {said}");
    }
    let fsf = fairy_stockfish_or_skip();
    // Our variant name, and Fairy-Stockfish's in USI mode (None: its USI notation of Kyoto's
    // turned pieces is not ours, so those openings are checked through the arena alone).
    for (variant, fsf_name) in [
        ("minishogi", Some("minishogi")),
        ("judkins", Some("judkins")),
        ("kyoto", None),
    ] {
        let path = root.join(format!("configs/openings/{variant}.txt"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(&format!("# 200 openings of {variant}: 4 random plies"))
                && text.contains("Fairy-Stockfish 11.1")
                && text.contains("go depth 14) rates the side to move within 150 cp"),
            "{}",
            &text[..300]
        );
        let (lines, scores) = book_entries(&text, 200);
        assert!(scores.iter().all(|cp| cp.abs() <= 150), "{variant}");
        // Every line is an opening the arena plays (it reads the whole file first).
        network_free_match_on(variant, &path, 2);
        let (Some(fsf), Some(name)) = (&fsf, fsf_name) else {
            continue;
        };
        // Four plies: sente is to move, so the comment is the engine's own score.
        for (line, cp) in lines.iter().zip(&scores).step_by(50) {
            assert_eq!(fsf_usi_score(fsf, name, line, 14), *cp, "{variant}: {line}");
        }
    }
}
