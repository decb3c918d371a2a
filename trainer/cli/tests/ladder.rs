//! The ladder end to end: `trainer ladder calibrate` writes ratings and games that `trainer
//! ladder fit` reproduces (and a tampered calibration fails it), `trainer ladder place` rates
//! a player, and a tiny `trainer run` with `evaluation.ladder` records one ladder Elo per
//! evaluated generation in the log, state.json and the frozen copy of the ladder. Network-free
//! rungs (`mcts` at different budgets) keep it quick and free of external engines.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn trainer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .output()
        .expect("run trainer")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ladder-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const LADDER: &str = r#"
variant = "minishogi"
zero = "m8"
opening_plies = 2
max_plies = 60

[[rungs]]
name = "m1"
player = "mcts"
nodes = 1

[[rungs]]
name = "m8"
player = "mcts"
nodes = 8

[[rungs]]
name = "m64"
player = "mcts"
nodes = 64
"#;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write_ladder(dir: &Path) -> PathBuf {
    let l = dir.join("mini.toml");
    std::fs::write(&l, LADDER).unwrap();
    l
}

#[test]
fn calibrate_fit_and_place() {
    let dir = tmp("cal");
    let l = write_ladder(&dir);
    let ls = l.to_str().unwrap();
    let o = trainer(&[
        "ladder",
        "calibrate",
        "--ladder",
        ls,
        "--games",
        "6",
        "--jobs",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("m1 vs m8: +") && out.contains("m1 vs m64: +"),
        "{out}"
    );
    let cal = std::fs::read_to_string(dir.join("mini.calibration.toml")).unwrap();
    assert!(
        cal.contains("[ratings.m64]") && cal.contains("trainer ladder calibrate"),
        "{cal}"
    );
    let games = std::fs::read_to_string(dir.join("mini.games.txt")).unwrap();
    // Three pairings (span 2 over three rungs) of six games, one line each.
    assert_eq!(games.lines().filter(|g| !g.starts_with('#')).count(), 18);
    let o = trainer(&["ladder", "fit", "--ladder", ls]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("the calibration matches its games"));
    // The zero rung is at 0 and a rating moved by hand no longer matches the games.
    let first_elo = cal
        .lines()
        .skip_while(|x| !x.starts_with("[ratings.m1]"))
        .find(|x| x.starts_with("elo = "))
        .unwrap()
        .to_string();
    std::fs::write(
        dir.join("mini.calibration.toml"),
        cal.replacen(&first_elo, "elo = 123.4", 1),
    )
    .unwrap();
    let o = trainer(&["ladder", "fit", "--ladder", ls]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("does not match the games"),
        "{}",
        text(&o)
    );
    std::fs::write(dir.join("mini.calibration.toml"), &cal).unwrap();
    // `trainer check` accepts the ladder and its calibration as configs.
    let cdir = dir.join("ladders");
    std::fs::create_dir_all(&cdir).unwrap();
    for f in ["mini.toml", "mini.calibration.toml"] {
        std::fs::copy(dir.join(f), cdir.join(f)).unwrap();
    }
    let o = trainer(&["check", cdir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("ladder mini (minishogi, 3 rungs)"),
        "{}",
        text(&o)
    );
    // Placing a player: one Elo from its games against the rungs asked for.
    let o = trainer(&[
        "ladder", "place", "--ladder", ls, "--player", "mcts", "--nodes", "8", "--rungs", "m1,m64",
        "--games", "4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("vs m1") && out.contains("vs m64") && !out.contains("vs m8 "));
    assert!(
        out.contains("ladder Elo") && out.contains("from 8 games"),
        "{out}"
    );
    let o = trainer(&[
        "ladder", "place", "--ladder", ls, "--player", "mcts", "--rungs", "zz",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("\"zz\" is not a rung"), "{}", text(&o));
}

#[test]
fn uncalibrated_and_foreign_ladders_are_refused_by_the_run_config() {
    let dir = tmp("refuse");
    let l = write_ladder(&dir);
    let cfg = format!(
        "variant = \"minishogi\"\nmodel = \"b2c16\"\ngenerations = 1\nsteps_per_generation = 1\n\
         [evaluation]\nladder = \"{}\"\n",
        l.display()
    );
    let c = dir.join("runs");
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(c.join("r.toml"), &cfg).unwrap();
    let o = trainer(&["check", c.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("evaluation.ladder") && text(&o).contains("not calibrated"),
        "{}",
        text(&o)
    );
    let o = trainer(&[
        "ladder",
        "calibrate",
        "--ladder",
        l.to_str().unwrap(),
        "--games",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = trainer(&["check", c.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let kyoto = cfg.replace("variant = \"minishogi\"", "variant = \"kyoto\"");
    std::fs::write(c.join("r.toml"), kyoto).unwrap();
    let o = trainer(&["check", c.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("evaluation.ladder: the mini ladder is for minishogi, not kyoto"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_run_places_each_evaluated_generation_on_the_ladder() {
    let dir = tmp("run");
    let l = write_ladder(&dir);
    let o = trainer(&[
        "ladder",
        "calibrate",
        "--ladder",
        l.to_str().unwrap(),
        "--games",
        "4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cfg = format!(
        r#"
name = "laddered"
variant = "minishogi"
model = "b2c16"
seed = 3
device = "cpu"
generations = 3
steps_per_generation = 20
min_samples = 50
# Synchronous: each generation waits for its games, so the (much faster) evaluator rates
# generations before the run completes.
games_per_generation = 16

[selfplay]
threads = 1
parallel_games = 4
full_simulations = 8
fast_simulations = 4
max_plies = 60

[training]
batch_size = 32

[replay]
min_window = 200
max_window = 2000

[evaluation]
games = 0
simulations = 4
share = 1.0
ladder = "{}"
ladder_games = 4
"#,
        l.display()
    );
    let cfile = dir.join("laddered.toml");
    std::fs::write(&cfile, cfg).unwrap();
    let runs = dir.join("runs");
    let o = trainer(&[
        "run",
        "--config",
        cfile.to_str().unwrap(),
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let run = runs.join("laddered");
    let log = std::fs::read_to_string(run.join("log.txt")).unwrap();
    assert!(log.contains("on the mini ladder Elo"), "{log}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    let rated: Vec<&serde_json::Value> = state["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h.get("ladder"))
        .collect();
    assert!(!rated.is_empty(), "{state}");
    for r in rated {
        let (elo, low, high) = (
            r["elo"].as_f64().unwrap(),
            r["low"].as_f64().unwrap(),
            r["high"].as_f64().unwrap(),
        );
        assert!(low < elo && elo < high, "{r}");
        assert_eq!(r["games"].as_u64(), Some(4), "{r}");
        assert_eq!(r["rungs"].as_array().unwrap().len(), 2, "{r}");
    }
    // The run froze its ladder: the same ratings as the calibration.
    let frozen = std::fs::read_to_string(run.join("ladder.calibration.toml")).unwrap();
    let cal = std::fs::read_to_string(dir.join("mini.calibration.toml")).unwrap();
    assert_eq!(frozen, cal);
    assert!(run.join("ladder.toml").exists());
    // `trainer status` shows the last ladder rating.
    let o = trainer(&["status", "--run", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("on the mini ladder: Elo"), "{}", text(&o));
}

/// A rung that crashes on `go` (as Debian's Fairy-Stockfish 11.1 did in Kyoto shogi when it was
/// sent moves it could not read):
/// the calibration stops with the reason instead of counting its crashes as losses.
#[test]
fn a_rung_that_crashes_cannot_be_rated() {
    let dir = tmp("crash");
    let crash =
        "engine:while read l; do case \\\"$l\\\" in usi) echo 'id name fake'; echo usiok;; \
                 isready) echo readyok;; go*) exit 3;; quit) exit 0;; esac; done";
    let l = dir.join("crash.toml");
    let spec = LADDER.replace(
        "name = \"m64\"\nplayer = \"mcts\"",
        &format!("name = \"m64\"\nplayer = \"{crash}\""),
    );
    assert!(spec.contains("exit 3"), "{spec}");
    std::fs::write(&l, spec).unwrap();
    let o = trainer(&[
        "ladder",
        "calibrate",
        "--ladder",
        l.to_str().unwrap(),
        "--games",
        "2",
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("a game ended by a failure, not by play") && out.contains("m64"),
        "{out}"
    );
    assert!(!dir.join("crash.calibration.toml").exists());
}
