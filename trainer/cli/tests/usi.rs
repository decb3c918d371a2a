//! `trainer usi` driven as a subprocess through scripted USI sessions.

mod common;
use rules::{Position, Variant};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Generous bound for answers that need no thinking (the test machine is shared).
const QUICK: Duration = Duration::from_secs(20);

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
            .arg("usi")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start trainer usi");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").expect("write to engine");
        self.stdin.flush().unwrap();
    }

    /// Reads lines until one satisfies `done`; returns every line read (that one last).
    fn until(&mut self, timeout: Duration, done: impl Fn(&str) -> bool) -> Vec<String> {
        let end = Instant::now() + timeout;
        let mut got = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let stop = done(&l);
                    got.push(l);
                    if stop {
                        return got;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("timed out; lines so far: {got:#?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("engine exited; lines: {got:#?}"),
            }
        }
    }

    /// Every line written during `d` (the engine must stay up).
    fn lines_for(&mut self, d: Duration) -> Vec<String> {
        let end = Instant::now() + d;
        let mut got = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => got.push(l),
                Err(RecvTimeoutError::Timeout) => return got,
                Err(RecvTimeoutError::Disconnected) => panic!("engine exited; lines: {got:#?}"),
            }
        }
    }

    /// Sends `cmd` and reads up to the line starting with `prefix`.
    fn ask(&mut self, cmd: &str, prefix: &str, timeout: Duration) -> Vec<String> {
        self.send(cmd);
        self.until(timeout, |l| l.starts_with(prefix))
    }

    fn ready(&mut self) -> Vec<String> {
        self.ask("isready", "readyok", QUICK)
    }

    /// `go ...` up to its bestmove: (lines, the bestmove's move).
    fn go(&mut self, cmd: &str, timeout: Duration) -> (Vec<String>, String) {
        let lines = self.ask(cmd, "bestmove", timeout);
        let best = lines.last().unwrap()["bestmove ".len()..]
            .split_whitespace()
            .next()
            .expect("bestmove has a move")
            .to_string();
        (lines, best)
    }

    fn quit(mut self) {
        self.send("quit");
        let t = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "usi exited with {status}");
                return;
            }
            assert!(t.elapsed() < QUICK, "engine did not quit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn variant(name: &str) -> Arc<Variant> {
    Arc::new(Variant::builtin(name).unwrap())
}

/// The position after `moves` from the start.
fn after(v: &Arc<Variant>, moves: &str) -> Position {
    let mut p = Position::start(v.clone());
    p.play_usi(moves).unwrap();
    p
}

/// Asserts that an info line with depth, nodes, nps, score and pv precedes the bestmove, and
/// returns the last one's fields.
fn last_info(lines: &[String]) -> Vec<String> {
    let info = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .unwrap_or_else(|| panic!("no info line before bestmove: {lines:#?}"));
    for key in ["depth", "nodes", "nps", "score", "pv"] {
        assert!(
            info.split_whitespace().any(|t| t == key),
            "{key} missing from {info}"
        );
    }
    info.split_whitespace().map(String::from).collect()
}

fn field(info: &[String], key: &str) -> String {
    let i = info.iter().position(|t| t == key).unwrap();
    info[i + 1].clone()
}

fn legal(pos: &Position, mv: &str) {
    pos.parse_usi(mv)
        .unwrap_or_else(|e| panic!("bestmove {mv} is illegal: {e}"));
}

#[test]
fn handshake_options_and_a_node_limited_search() {
    let mut e = Engine::start(&[]);
    let lines = e.ask("usi", "usiok", QUICK);
    assert!(
        lines.iter().any(|l| l.starts_with("id name ")),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    for opt in [
        "option name USI_Variant type combo default shogi",
        "option name Simulations type spin default 200",
        "option name Threads type spin",
        "option name Device type string",
        "option name Algorithm type combo default puct",
        "option name USI_Hash type spin",
        "option name USI_Ponder type check",
        "option name MinibatchSize type spin default 16",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(opt)),
            "{opt:?} missing: {lines:#?}"
        );
    }
    e.ready();
    e.send("usinewgame");
    e.send("position startpos moves 7g7f 3c3d");
    let (lines, best) = e.go("go nodes 50", QUICK);
    let info = last_info(&lines);
    assert_eq!(field(&info, "nodes"), "50");
    assert!(field(&info, "score") == "cp" || field(&info, "score") == "mate");
    legal(&after(&variant("shogi"), "7g7f 3c3d"), &best);
    // The pv starts with the bestmove.
    assert_eq!(field(&info, "pv"), best);

    // PUCT too, and a plain `go` (the Simulations option).
    e.send("setoption name Algorithm value puct");
    e.send("setoption name Simulations value 30");
    let (lines, best) = e.go("go", QUICK);
    assert_eq!(field(&last_info(&lines), "nodes"), "30");
    legal(&after(&variant("shogi"), "7g7f 3c3d"), &best);
    // Batched or one leaf at a time, the budget is exact.
    for batch in ["1", "7"] {
        e.send(&format!("setoption name MinibatchSize value {batch}"));
        let (lines, best) = e.go("go nodes 40", QUICK);
        assert_eq!(field(&last_info(&lines), "nodes"), "40", "batch {batch}");
        legal(&after(&variant("shogi"), "7g7f 3c3d"), &best);
    }
    e.quit();
}

#[test]
fn time_limits_and_stop() {
    let shogi = variant("shogi");
    let mut e = Engine::start(&["--variant", "shogi"]);
    e.ready();
    e.send("position startpos");
    for algorithm in ["gumbel", "puct"] {
        e.send(&format!("setoption name Algorithm value {algorithm}"));
        let t = Instant::now();
        let (lines, best) = e.go("go btime 0 wtime 0 byoyomi 300", Duration::from_secs(2));
        let took = t.elapsed();
        assert!(took < Duration::from_millis(1500), "{algorithm}: {took:?}");
        last_info(&lines);
        legal(&Position::start(shogi.clone()), &best);

        let t = Instant::now();
        let (_, best) = e.go("go movetime 200", Duration::from_secs(2));
        assert!(t.elapsed() < Duration::from_millis(1500));
        legal(&Position::start(shogi.clone()), &best);
    }

    // Sudden death with an increment; gote to move (wtime is the clock that counts).
    e.send("position startpos moves 2g2f");
    let t = Instant::now();
    let (_, best) = e.go(
        "go btime 100000 wtime 3000 binc 0 winc 100",
        Duration::from_secs(3),
    );
    assert!(t.elapsed() < Duration::from_millis(2000));
    legal(&after(&shogi, "2g2f"), &best);

    // Infinite: no bestmove until stop; isready is answered meanwhile.
    e.send("go infinite");
    let lines = e.ask("isready", "readyok", QUICK);
    assert!(
        lines.iter().all(|l| !l.starts_with("bestmove")),
        "{lines:#?}"
    );
    std::thread::sleep(Duration::from_millis(300));
    e.send("stop");
    let lines = e.until(Duration::from_secs(3), |l| l.starts_with("bestmove"));
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("bestmove")).count(),
        1,
        "{lines:#?}"
    );
    last_info(&lines);
    legal(&after(&shogi, "2g2f"), &lines.last().unwrap()[9..]);
    e.ready();

    // Commands sent without waiting for the bestmove: a bounded search is waited for, an
    // infinite one must be stopped first.
    e.send("go nodes 20");
    e.send("setoption name Simulations value 10");
    e.send("go");
    let lines = e.until(QUICK, |l| l.starts_with("bestmove"));
    assert!(lines.iter().all(|l| !l.contains("error")), "{lines:#?}");
    let (lines, _) = e.go("isready", QUICK);
    assert!(lines.iter().all(|l| !l.contains("error")), "{lines:#?}");
    e.send("go infinite");
    e.ask("go nodes 5", "info string error", QUICK);
    e.ask(
        "setoption name Simulations value 5",
        "info string error",
        QUICK,
    );
    let (_, best) = e.go("stop", QUICK);
    legal(&after(&shogi, "2g2f"), &best);
    e.quit();
}

#[test]
fn bad_commands_are_reported_and_change_nothing() {
    let shogi = variant("shogi");
    let mut e = Engine::start(&[]);
    e.ready();
    e.send("position startpos moves 7g7f");
    for bad in [
        "frobnicate",
        "setoption name NoSuchOption value 1",
        "setoption name Simulations value many",
        "setoption name Algorithm value alphabeta",
        "setoption name Device value tpu",
        "setoption name USI_Variant value chess",
        "setoption name NNCacheSize value 16777217",
        "setoption Threads 2",
        "gameover maybe",
    ] {
        let lines = e.ask(bad, "info string error", QUICK);
        assert_eq!(lines.len(), 1, "{bad}: {lines:#?}");
        e.ready();
    }
    // Options that are accepted silently.
    for ok in [
        "setoption name USI_Hash value 128",
        "setoption name NNCacheSize value 0",
        "setoption name NNCacheSize value 1024",
        "setoption name USI_Ponder value false",
        "setoption name Threads value 1",
        "setoption name Device value cpu",
        "gameover draw",
        "stop",
    ] {
        e.send(ok);
        let lines = e.ready();
        assert_eq!(lines, ["readyok"], "{ok}");
    }
    // The position is still the one after 7g7f (gote to move).
    let (_, best) = e.go("go nodes 10", QUICK);
    legal(&after(&shogi, "7g7f"), &best);
    e.quit();
}

#[test]
fn every_go_ends_in_a_bestmove() {
    let shogi = variant("shogi");
    let mut e = Engine::start(&[]);
    e.ready();
    // Out-of-range or malformed limits: an error line, then a search of the position anyway.
    for go in [
        // Gote is to move: sente's absurd clock must not matter, and gote's is clamped.
        "go btime 99999999999999999999999 wtime 1000 byoyomi 100",
        "go nodes 18446744073709551616 movetime 500",
        "go btime abc wtime 0 byoyomi 100",
        "go nodes abc",
        "go nodes",
        "go depth 3",
        "go nodes 0",
    ] {
        e.send("position startpos moves 7g7f");
        let (lines, best) = e.go(go, QUICK);
        assert!(
            lines.iter().any(|l| l.starts_with("info string error")),
            "{go}: {lines:#?}"
        );
        legal(&after(&shogi, "7g7f"), &best);
        e.ready();
    }
    // After a rejected position, `go` answers resign, never a move of an older position.
    e.send("position startpos moves 7g7f");
    for bad in [
        "position sfen garbage",
        "position startpos moves 9z9y",
        "position startpos moves 7g7f 7g7f",
        "position startpos junk",
        "position",
        // Impossible positions: no king, two pawns on a file, a piece that can never move,
        // more pieces than the game has.
        "position sfen lnsg1gsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
        "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/4P4/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
        "position sfen lnsgkgsnP/1r5b1/pppppppp1/9/9/9/PPPPPPPP1/1B5R1/LNSGKGSNL b - 1",
        "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b P 1",
    ] {
        let lines = e.ask(bad, "info string error", QUICK);
        assert_eq!(lines.len(), 1, "{bad}: {lines:#?}");
        let lines = e.ask("go nodes 10", "bestmove", QUICK);
        assert_eq!(
            lines.last().unwrap(),
            "bestmove resign",
            "{bad}: {lines:#?}"
        );
        assert!(lines.iter().any(|l| l.contains("rejected")), "{lines:#?}");
        // A valid position clears it.
        e.send("position startpos moves 7g7f");
        let (_, best) = e.go("go nodes 10", QUICK);
        legal(&after(&shogi, "7g7f"), &best);
    }
    e.quit();
}

#[test]
fn checkmated_side_resigns() {
    // Gote's king on 1a, sente's gold on 1b protected by a pawn on 1c: mate.
    let sfen = "8k/8G/8P/9/9/9/9/9/K8 w - 1";
    let pos = Position::from_sfen(&variant("shogi"), sfen).unwrap();
    assert!(pos.legal_moves().is_empty() && pos.in_check());
    let mut e = Engine::start(&[]);
    e.ready();
    e.send(&format!("position sfen {sfen}"));
    let (lines, best) = e.go("go nodes 50", QUICK);
    assert_eq!(best, "resign");
    assert!(lines.iter().any(|l| l.starts_with("info")), "{lines:#?}");
    // A mate in one (2c1b or 1c1b+, among ten moves) is found and announced.
    let sfen = "8k/9/7GP/9/9/9/9/9/K8 b - 1";
    e.send(&format!("position sfen {sfen}"));
    let (lines, best) = e.go("go nodes 200", QUICK);
    let mut pos = Position::from_sfen(&variant("shogi"), sfen).unwrap();
    let mv = pos.parse_usi(&best).unwrap();
    pos.make_move(mv);
    assert!(pos.legal_moves().is_empty() && pos.in_check(), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.contains("score mate 1")),
        "{lines:#?}"
    );
    e.quit();
}

#[test]
fn minishogi_and_cannon_shosu_without_a_model() {
    let mini = variant("minishogi");
    let mut e = Engine::start(&["--variant", "minishogi"]);
    let lines = e.ask("usi", "usiok", QUICK);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("option name USI_Variant type combo default minishogi")));
    e.ready();
    let start = Position::start(mini.clone());
    let first = start.move_to_usi(start.legal_moves()[0]);
    e.send(&format!("position startpos moves {first}"));
    let (_, best) = e.go("go nodes 30", QUICK);
    let pos = after(&mini, &first);
    legal(&pos, &best);
    // The reply is accepted in turn.
    e.send(&format!("position startpos moves {first} {best}"));
    let (_, best2) = e.go("go nodes 30", QUICK);
    legal(&after(&mini, &format!("{first} {best}")), &best2);
    // Switching variants through USI_Variant.
    e.send("setoption name USI_Variant value cannon-shosu");
    e.ready();
    e.send("position startpos moves 10h10g");
    let (_, best) = e.go("go nodes 20", QUICK);
    legal(&after(&variant("cannon-shosu"), "10h10g"), &best);
    e.quit();

    // A 10x10 board from the command line: file numbers of two digits.
    let cs = variant("cannon-shosu");
    let mut e = Engine::start(&["--variant", "cannon-shosu"]);
    e.ready();
    e.send("position startpos moves 10h10g 1c1d");
    let (lines, best) = e.go("go nodes 40", QUICK);
    last_info(&lines);
    legal(&after(&cs, "10h10g 1c1d"), &best);
    let lines = e.ask("position startpos moves 10h10f", "info string error", QUICK);
    assert_eq!(lines.len(), 1);
    e.send(&format!(
        "position sfen {} moves 10h10g",
        Position::start(cs.clone()).to_sfen()
    ));
    let (_, best) = e.go("go nodes 10", QUICK);
    legal(&after(&cs, "10h10g"), &best);
    e.quit();
}

/// Large shogi through USI without a model: Dai shogi's marked piece letters in `position sfen`,
/// and Chu shogi's counter-strike square in the SFEN hands field.
#[test]
fn dai_and_chu_positions_by_sfen_without_a_model() {
    let dai = variant("dai");
    let mut e = Engine::start(&["--variant", "dai"]);
    e.ready();
    let start = Position::start(dai.clone()).to_sfen();
    assert!(start.contains("L!") && start.contains("x'"), "{start}");
    e.send(&format!("position sfen {start} moves 8m10n"));
    let (_, best) = e.go("go nodes 20", QUICK);
    legal(&after(&dai, "8m10n"), &best);
    // An unknown marked piece is an error naming it; the engine goes on.
    let bad = start.replacen("15/15/15", "Z'14/15/15", 1);
    let lines = e.ask(&format!("position sfen {bad}"), "info string error", QUICK);
    assert!(lines[0].contains("Z'"), "{lines:?}");
    e.quit();

    // Sente's pawn has just taken gote's Lion on 6e: gote's falcon may not take sente's Lion.
    let chu = variant("chu");
    let sfen = "k11/12/12/12/6P5/12/12/5+h6/12/5N6/12/11K w 6e 2";
    let pos = Position::from_sfen(&chu, sfen).unwrap();
    assert!(pos.parse_usi("7h7j").is_err());
    let mut e = Engine::start(&["--variant", "chu"]);
    e.ready();
    e.send(&format!("position sfen {sfen}"));
    let (_, best) = e.go("go nodes 60", QUICK);
    legal(&pos, &best);
    e.quit();
}

#[test]
fn engine_on_a_model() {
    let dir = std::env::temp_dir().join(format!("usi-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = common::init_model(&dir);
    let m = model.to_str().unwrap();
    run_model_session(m);

    // --variant must agree with the model's sidecar.
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["usi", "--model", m, "--variant", "shogi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not match") && err.contains("minishogi"),
        "{err}"
    );
    let mut e = Engine::start(&["--model", m, "--variant", "minishogi"]);
    e.ready();
    e.quit();
    std::fs::remove_dir_all(Path::new(&dir)).ok();
}

fn run_model_session(model: &str) {
    let mini = variant("minishogi");
    let mut e = Engine::start(&["--model", model]);
    let lines = e.ask("usi", "usiok", QUICK);
    assert!(
        lines
            .iter()
            .any(|l| l == "option name USI_Variant type combo default minishogi var minishogi"),
        "{lines:#?}"
    );
    e.send("setoption name Device value cpu");
    e.ready();
    let lines = e.ask(
        "setoption name USI_Variant value shogi",
        "info string error",
        QUICK,
    );
    assert_eq!(lines.len(), 1);
    e.send("setoption name USI_Variant value minishogi");
    e.send("position startpos");
    let (lines, best) = e.go("go nodes 20", QUICK);
    assert_eq!(field(&last_info(&lines), "nodes"), "20");
    legal(&Position::start(mini.clone()), &best);
    e.send(&format!("position startpos moves {best}"));
    let (_, best2) = e.go("go byoyomi 300", Duration::from_secs(5));
    legal(&after(&mini, &best), &best2);
    // Checkmated (gote's king on 1a, gold on 1b protected by a pawn): resign.
    e.send("position sfen 4k/4G/4P/5/K4 w - 1");
    let (_, best) = e.go("go nodes 20", QUICK);
    assert_eq!(best, "resign");
    e.quit();
}

fn bestmove_count(lines: &[String]) -> usize {
    lines.iter().filter(|l| l.starts_with("bestmove")).count()
}

/// `bestmove X ponder Y`: (X, Y).
fn best_and_ponder(line: &str) -> (String, String) {
    match line.split_whitespace().collect::<Vec<_>>()[..] {
        ["bestmove", best, "ponder", reply] => (best.to_string(), reply.to_string()),
        _ => panic!("expected `bestmove X ponder Y`, got {line:?}"),
    }
}

/// The simulations of the last info line among `lines`.
fn last_nodes(lines: &[String]) -> u64 {
    field(&last_info(lines), "nodes").parse().unwrap()
}

/// Pondering, on a tiny network (without one the search fills its tree within seconds and
/// would answer a ponderhit at once).
#[test]
fn pondering_waits_for_ponderhit_then_thinks_on_its_clock() {
    let dir = std::env::temp_dir().join(format!("usi-ponder-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = common::init_model(&dir);
    let mini = variant("minishogi");
    let mut e = Engine::start(&["--model", model.to_str().unwrap()]);
    e.send("setoption name Device value cpu");
    // Gumbel searches use all their time (PUCT may stop once the runner-up cannot catch up),
    // which is what this test times.
    e.send("setoption name Algorithm value gumbel");
    e.ready();
    // USI_Ponder off (the default): a plain bestmove.
    e.send("position startpos");
    let lines = e.ask("go nodes 30", "bestmove", QUICK);
    assert_eq!(
        lines.last().unwrap().split_whitespace().count(),
        2,
        "{lines:#?}"
    );
    e.send("setoption name USI_Ponder value true");
    e.ready();

    // We played `ours` and expect `theirs`: the GUI ponders on the position after both.
    let start = Position::start(mini.clone());
    let ours = start.move_to_usi(start.legal_moves()[0]);
    let p1 = after(&mini, &ours);
    let moves = format!("{ours} {}", p1.move_to_usi(p1.legal_moves()[0]));
    let pos = after(&mini, &moves);
    let check = |line: &str| {
        let (best, reply) = best_and_ponder(line);
        legal(&pos, &best);
        legal(&after(&mini, &format!("{moves} {best}")), &reply);
        (best, reply)
    };
    e.send(&format!("position startpos moves {moves}"));
    e.send("go ponder btime 0 wtime 0 byoyomi 1500");
    // No bestmove for well over the byoyomi.
    let pondered = e.lines_for(Duration::from_millis(2500));
    assert_eq!(bestmove_count(&pondered), 0, "{pondered:#?}");
    let nodes_before = last_nodes(&pondered);
    let t = Instant::now();
    e.send("ponderhit");
    let lines = e.until(QUICK, |l| l.starts_with("bestmove"));
    let took = t.elapsed();
    // The byoyomi (less the 100 ms margin) is used from the ponderhit: not at once, and not
    // much longer.
    assert!(took >= Duration::from_millis(1300), "{took:?}");
    assert!(took < Duration::from_millis(4500), "{took:?}");
    // The tree built while pondering is kept.
    assert!(
        last_nodes(&lines) > nodes_before,
        "{pondered:#?} {lines:#?}"
    );
    let (best, reply) = check(lines.last().unwrap());

    // `stop` while pondering (the opponent played another move): a bestmove at once.
    e.send(&format!("position startpos moves {moves} {best} {reply}"));
    e.send("go ponder btime 0 wtime 0 byoyomi 10000");
    let pondered = e.lines_for(Duration::from_millis(500));
    assert_eq!(bestmove_count(&pondered), 0, "{pondered:#?}");
    let t = Instant::now();
    let lines = e.ask("stop", "bestmove", QUICK);
    assert!(
        t.elapsed() < Duration::from_millis(2000),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(bestmove_count(&lines), 1);
    e.ready();

    // With main time, the time pondered is deducted from this move's share (90000 / 30 =
    // 3000 ms): after 3200 ms of pondering it answers soon after the ponderhit.
    e.send(&format!("position startpos moves {moves}"));
    e.send("go ponder btime 90000 wtime 90000 binc 0 winc 0");
    let pondered = e.lines_for(Duration::from_millis(3200));
    assert_eq!(bestmove_count(&pondered), 0, "{pondered:#?}");
    let t = Instant::now();
    let lines = e.ask("ponderhit", "bestmove", QUICK);
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
    check(lines.last().unwrap());

    // PUCT ponders too.
    e.send("setoption name Algorithm value puct");
    e.send(&format!("position startpos moves {moves}"));
    e.send("go ponder btime 0 wtime 0 byoyomi 1000");
    let pondered = e.lines_for(Duration::from_millis(1500));
    assert_eq!(bestmove_count(&pondered), 0, "{pondered:#?}");
    let t = Instant::now();
    let lines = e.ask("ponderhit", "bestmove", QUICK);
    assert!(
        t.elapsed() < Duration::from_millis(4000),
        "{:?}",
        t.elapsed()
    );
    check(lines.last().unwrap());
    e.quit();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usi_hash_bounds_the_tree() {
    let mut e = Engine::start(&[]);
    e.ready();
    e.send("position startpos moves 7g7f 3c3d");
    // A long byoyomi, but a tree of at most 1 MiB (4 MiB): full long before the time is up,
    // the search answers.
    let mut nodes = Vec::new();
    for mib in [1, 4] {
        e.send(&format!("setoption name USI_Hash value {mib}"));
        let t = Instant::now();
        let (lines, _) = e.go("go btime 0 wtime 0 byoyomi 30000", Duration::from_secs(40));
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{mib} MiB: {:?}",
            t.elapsed()
        );
        nodes.push(last_nodes(&lines));
    }
    // A node with its 30-odd move edges takes some 800 bytes: the tree stops at half of
    // USI_Hash, a few hundred simulations in 1 MiB, four times as many in 4 MiB.
    let (n1, n4) = (nodes[0], nodes[1]);
    assert!((100..=2500).contains(&n1), "{nodes:?}");
    assert!(n4 >= 2 * n1 && n4 <= 8 * n1, "{nodes:?}");
    // An infinite search with a full tree waits for stop.
    e.send("setoption name USI_Hash value 1");
    e.send("go infinite");
    let mut lines = e.lines_for(Duration::from_millis(1500));
    assert_eq!(bestmove_count(&lines), 0, "{lines:#?}");
    lines.extend(e.go("stop", QUICK).0);
    assert_eq!(last_nodes(&lines), n1);
    for bad in ["0", "1048577", "lots"] {
        e.ask(
            &format!("setoption name USI_Hash value {bad}"),
            "info string error",
            QUICK,
        );
    }
    e.quit();
}
