//! The learning methods' config keys: the power-law replay window, the value-target mix, the
//! weight average and the budget schedule parse, are range-checked key by key, survive the TOML
//! round trip, and default to today's behaviour.

use pipeline::train::run_progress;
use pipeline::{ReplayConfig, RunConfig};

const BASE: &str = "variant = \"minishogi\"\nmodel = \"b2c16\"\ngenerations = 10\n\
                    steps_per_generation = 100\n";

fn parse(extra: &str) -> pipeline::Result<RunConfig> {
    RunConfig::from_toml(&format!("{BASE}{extra}"), "test.toml")
}

fn replay(min: usize, max: usize, exponent: f64, scale: f64) -> ReplayConfig {
    ReplayConfig {
        min_window: min,
        max_window: max,
        exponent,
        scale,
        ..Default::default()
    }
}

/// `got` is `want` rounded down (allowing for powf's last bit).
fn about(got: usize, want: f64) {
    let got = got as f64;
    assert!(
        got <= want + 1e-6 && got > want - 1.0 - 1e-6,
        "{got} vs {want}"
    );
}

#[test]
fn power_law_window() {
    let r = replay(1000, 1_000_000, 0.75, 0.4);
    // At most min_window samples: min_window.
    assert_eq!(r.window(0), 1000);
    assert_eq!(r.window(1000), 1000);
    // 1000 * (1 + 0.4 * ((N / 1000)^0.75 - 1) / 0.75): 16^0.75 = 8, 81^0.75 = 27.
    about(r.window(16_000), 1000.0 * (1.0 + 0.4 * 7.0 / 0.75)); // 4733.3
    about(r.window(81_000), 1000.0 * (1.0 + 0.4 * 26.0 / 0.75)); // 14866.7
                                                                 // Exponent 1/2: 1000 * (1 + 0.4 * (sqrt(N / 1000) - 1) / 0.5).
    let half = replay(1000, 1_000_000, 0.5, 0.4);
    about(half.window(25_000), 1000.0 * (1.0 + 0.4 * 4.0 / 0.5)); // 4200
                                                                  // Exponent 1 is the linear window with growth = scale.
    let one = replay(1000, 1_000_000, 1.0, 0.4);
    let linear = ReplayConfig {
        growth: 0.4,
        ..replay(1000, 1_000_000, 0.0, 0.9)
    };
    for n in [1500, 3000, 12_345, 500_000] {
        about(one.window(n), 1000.0 + 0.4 * (n as f64 - 1000.0));
        assert_eq!(
            linear.window(n),
            (1000.0 + 0.4 * (n as f64 - 1000.0)) as usize
        );
    }
    // max_window still caps.
    assert_eq!(replay(1000, 5000, 0.75, 0.4).window(81_000), 5000);
}

#[test]
fn default_window_is_the_linear_growth() {
    let r = ReplayConfig::default();
    assert_eq!(
        (
            r.exponent,
            r.q_ratio,
            r.short_term_horizon,
            r.short_term_ratio
        ),
        (0.0, 0.0, 0, 0.0)
    );
    for n in [0u64, 20_000, 20_001, 100_000, 5_000_000] {
        let min = r.min_window as f64;
        let want = if (n as f64) <= min {
            min
        } else {
            min + r.growth * (n as f64 - min)
        };
        assert_eq!(r.window(n), (want as usize).min(r.max_window), "{n}");
    }
    assert!(r.value_targets().result_only());
}

#[test]
fn keys_are_range_checked_by_name() {
    let err = |extra: &str| parse(extra).unwrap_err().to_string();
    for (extra, key) in [
        (
            "[replay]\nexponent = 1.5\n",
            "replay.exponent: must be in [0, 1]",
        ),
        (
            "[replay]\nexponent = -0.5\n",
            "replay.exponent: must be in [0, 1]",
        ),
        ("[replay]\nscale = 2.0\n", "replay.scale: must be in [0, 1]"),
        ("[replay]\nq_ratio = 1.2\n", "replay.q_ratio"),
        (
            "[replay]\nshort_term_ratio = 0.5\n",
            "replay.short_term_ratio: needs short_term_horizon",
        ),
        (
            "[replay]\nq_ratio = 0.6\nshort_term_horizon = 6\nshort_term_ratio = 0.5\n",
            "replay.short_term_ratio: q_ratio + short_term_ratio must be at most 1",
        ),
        ("[training]\nema_decay = 1.0\n", "training.ema_decay"),
        (
            "[replay]\npolicy_surprise_weight = 1.5\n",
            "replay.policy_surprise_weight: must be in [0, 1]",
        ),
        (
            "[training]\nsoft_policy_weight = -1.0\n",
            "training.soft_policy_weight",
        ),
        (
            "[training]\nopponent_policy_weight = -0.1\n",
            "training.opponent_policy_weight",
        ),
        (
            "[selfplay]\nprogressive_start = 0.0\n",
            "selfplay.progressive_start",
        ),
        ("[training]\nschedule = \"budgett\"\n", "budgett"),
    ] {
        let e = err(extra);
        assert!(e.contains(key), "{extra:?}: {e}");
    }
    parse("[replay]\nq_ratio = 0.5\nshort_term_horizon = 6\nshort_term_ratio = 0.5\n").unwrap();
}

#[test]
fn new_keys_survive_the_toml_round_trip_and_old_configs_load() {
    let c = parse(
        "max_minutes = 30\n[training]\nschedule = \"budget\"\nmin_lr = 0.001\nema_decay = 0.999\n\
         soft_policy_weight = 8.0\nsoft_policy_temperature = 3.0\nopponent_policy_weight = 0.15\n\
         [selfplay]\nprogressive_generations = 60\nprogressive_start = 0.5\n\
         [replay]\nexponent = 0.75\nscale = 0.4\nq_ratio = 0.2\nshort_term_horizon = 6\n\
         short_term_ratio = 0.3\npolicy_surprise_weight = 0.5\nmirror = true\n",
    )
    .unwrap();
    let text = toml::to_string(&c).unwrap();
    let d = RunConfig::from_toml(&text, "frozen.toml").unwrap();
    for c in [&c, &d] {
        assert_eq!(c.training.schedule, model::Schedule::Budget);
        assert_eq!(c.training.ema_decay, 0.999);
        assert_eq!(
            (
                c.training.soft_policy_weight,
                c.training.soft_policy_temperature
            ),
            (8.0, 3.0)
        );
        assert_eq!(c.training.opponent_policy_weight, 0.15);
        assert_eq!(
            (
                c.selfplay.progressive_generations,
                c.selfplay.progressive_start
            ),
            (60, 0.5)
        );
        assert_eq!(c.replay.policy_surprise_weight, 0.5);
        assert!(c.replay.mirror);
        let r = &c.replay;
        assert_eq!(
            (
                r.exponent,
                r.scale,
                r.q_ratio,
                r.short_term_horizon,
                r.short_term_ratio
            ),
            (0.75, 0.4, 0.2, 6, 0.3)
        );
        let t = r.value_targets();
        assert_eq!(
            (t.q_ratio, t.short_term_horizon, t.short_term_ratio),
            (0.2, 6, 0.3)
        );
    }
    // A config without the keys: everything off.
    let old = parse("[replay]\nmin_window = 500\n").unwrap();
    assert_eq!(old.training.ema_decay, 0.0);
    assert_eq!(old.training.schedule, model::Schedule::Constant);
    assert_eq!(old.replay.exponent, 0.0);
    assert_eq!(old.replay.policy_surprise_weight, 0.0);
    assert!(!old.replay.mirror);
    assert_eq!(old.training.soft_policy_weight, 0.0);
    assert_eq!(old.selfplay.progressive_generations, 0);
    assert!(old.replay.value_targets().result_only());
}

#[test]
fn progress_is_the_nearer_end_of_time_and_generations() {
    // 10 generations of 100 steps, 10 minutes.
    let c = parse("max_minutes = 10\n").unwrap();
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    close(run_progress(&c, 0.0, 0, 0), 0.0);
    close(run_progress(&c, 300.0, 2, 50), 0.5); // by time
    close(run_progress(&c, 60.0, 5, 0), 0.5); // by generations
    close(run_progress(&c, 60.0, 4, 50), 0.45); // half-way through the fifth generation
    close(run_progress(&c, 60.0, 4, 250), 0.5); // a generation's steps count at most once
    close(run_progress(&c, 1200.0, 3, 0), 1.0); // past the budget
    close(run_progress(&c, 0.0, 10, 0), 1.0);
    // No time budget: generations alone.
    let g = parse("").unwrap();
    close(run_progress(&g, 1e9, 5, 0), 0.5);
    close(run_progress(&g, 1e9, 9, 100), 1.0);
}

#[test]
fn mirroring_a_one_sided_variant_is_refused_by_name() {
    // A run file is checked by the directory it sits in (`runs/`).
    let dir = std::env::temp_dir().join(format!("mirror-check-{}", std::process::id()));
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let write = |name: &str, variant: &str| {
        let f = runs.join(name);
        let text = format!(
            "variant = \"{variant}\"\nmodel = \"b2c16\"\ngenerations = 1\n\
             steps_per_generation = 10\n[replay]\nmirror = true\n"
        );
        std::fs::write(&f, text).unwrap();
        f
    };
    let tori = write("tori.toml", "tori");
    let e = match pipeline::check::check_file(&tori) {
        Ok(_) => panic!("mirroring Tori shogi was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("tori.toml") && e.contains("replay.mirror") && e.contains("left"),
        "{e}"
    );
    pipeline::check::check_file(&write("minishogi.toml", "minishogi")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
