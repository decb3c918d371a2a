//! `trainer ladder`: calibrate a ladder of fixed opponents, refit it from its kept games, and
//! place a player on it. The work is in `pipeline::ladder`; this file parses and prints.

use anyhow::{bail, Context, Result};
use arena::{Player, Protocol, Tally};
use pipeline::ladder::{self, CalibrateOptions, Ladder};
use std::path::PathBuf;

/// `trainer ladder` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum LadderCommand {
    /// Play the rungs against each other and write NAME.calibration.toml (each rung's Elo)
    /// and NAME.games.txt (every game) beside the ladder file.
    Calibrate {
        /// Ladder file (configs/ladders/NAME.toml).
        #[arg(long)]
        ladder: PathBuf,
        /// Games per pairing.
        #[arg(long, default_value_t = 40)]
        games: u32,
        /// Rungs at most this far apart in the file play each other.
        #[arg(long, default_value_t = 2)]
        span: usize,
        /// Pairings played at the same time.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Seed of the shared openings.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Refit the rungs' Elo from the kept games (NAME.games.txt) and compare them with the
    /// calibration; fails when they differ.
    Fit {
        /// Ladder file.
        #[arg(long)]
        ladder: PathBuf,
    },
    /// Place a player on the ladder: games against rungs, one maximum-likelihood Elo.
    Place {
        /// Ladder: a file, a file stem of configs/ladders, or a built-in (minishogi, judkins).
        #[arg(long, default_value = "minishogi")]
        ladder: String,
        /// The player: model:PATH, mcts or engine:CMD.
        #[arg(long)]
        player: String,
        /// Protocol when the player is an engine.
        #[arg(long, default_value = "usi")]
        protocol: String,
        /// Rungs to play, comma-separated (default: every rung).
        #[arg(long, value_delimiter = ',')]
        rungs: Vec<String>,
        /// Games against each rung.
        #[arg(long, default_value_t = 20)]
        games: u32,
        /// Simulations per move of our player against node-limited rungs (timed rungs: the
        /// time decides).
        #[arg(long, default_value_t = 64)]
        nodes: u32,
        /// Device of a model player: cpu, cuda, cuda:N or auto.
        #[arg(long, default_value = "cpu", value_parser = model::parse_device)]
        device: model::Device,
        /// Seed of the shared openings.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Write every game here (`PLAYER RUNG POINTS | record` lines).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Our searches stop at the time limit; this only caps them against timed rungs.
const TIMED_NODES: u32 = 1_000_000;

pub(crate) fn run(cmd: LadderCommand) -> Result<()> {
    match cmd {
        LadderCommand::Calibrate {
            ladder,
            games,
            span,
            jobs,
            seed,
        } => {
            if games == 0 {
                bail!("--games: must be at least 1");
            }
            let opts = CalibrateOptions {
                games,
                span,
                jobs,
                seed,
                command: format!(
                    "trainer ladder calibrate --ladder {} --games {games} --span {span} --jobs {jobs} --seed {seed}",
                    ladder.display()
                ),
            };
            let cal = ladder::calibrate(&ladder, &opts, &|line| println!("{line}"))?;
            for (name, r) in &cal.ratings {
                println!(
                    "{name:<16} Elo {:+7.1} [{:+7.1}, {:+7.1}] ({} games)",
                    r.elo, r.low, r.high, r.games
                );
            }
            println!("wrote {}", ladder::calibration_path(&ladder).display());
            Ok(())
        }
        LadderCommand::Fit { ladder } => {
            let l = Ladder::load_path(&ladder)?;
            let gp = ladder::games_path(&ladder);
            let text = std::fs::read_to_string(&gp)
                .with_context(|| format!("reading {}", gp.display()))?;
            let tallies = ladder::read_games(&text, &l.spec, &gp.display().to_string())?;
            let fitted = ladder::fit_tallies(&l.spec, &tallies)?;
            for (name, r) in &fitted {
                println!(
                    "{name:<16} Elo {:+7.1} [{:+7.1}, {:+7.1}] ({} games)",
                    r.elo, r.low, r.high, r.games
                );
            }
            if fitted != l.calibration.ratings || tallies != l.calibration.pairings {
                bail!(
                    "{} does not match the games in {}",
                    ladder::calibration_path(&ladder).display(),
                    gp.display()
                );
            }
            println!("the calibration matches its games");
            Ok(())
        }
        LadderCommand::Place {
            ladder,
            player,
            protocol,
            rungs,
            games,
            nodes,
            device,
            seed,
            out,
        } => place(
            &ladder, &player, &protocol, &rungs, games, nodes, device, seed, out,
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn place(
    ladder: &str,
    spec: &str,
    protocol: &str,
    rungs: &[String],
    games: u32,
    nodes: u32,
    device: model::Device,
    seed: u64,
    out: Option<PathBuf>,
) -> Result<()> {
    let l = Ladder::load(ladder)?;
    let variant = crate::load_variant(&l.spec.variant)?;
    let protocol: Protocol = protocol
        .parse()
        .map_err(|e| anyhow::anyhow!("--protocol: {e}"))?;
    let chosen: Vec<usize> = if rungs.is_empty() {
        (0..l.spec.rungs.len()).collect()
    } else {
        rungs
            .iter()
            .map(|r| {
                l.spec.index(r).ok_or_else(|| {
                    anyhow::anyhow!("--rungs: {r:?} is not a rung of the {} ladder", l.name)
                })
            })
            .collect::<Result<_>>()?
    };
    let openings = arena::random_openings(
        &variant,
        l.spec.opening_plies,
        (games as usize).div_ceil(2).max(1),
        seed,
    );
    let mut tallies: Vec<(usize, Tally)> = Vec::new();
    let mut lines = String::new();
    for &i in &chosen {
        let rung = &l.spec.rungs[i];
        let own = if rung.movetime > 0 {
            TIMED_NODES
        } else {
            nodes
        };
        let opener = &pipeline::ModelOpener;
        let mut me = Player::from_spec(spec, protocol, &[], &variant, own, device, opener)?;
        let mut opp = rung.player(&variant)?;
        let (t, g) = l.play_rung(&variant, &mut me, i, &mut opp, &openings, games)?;
        println!(
            "vs {:<14} ({:+7.1}) +{} ={} -{}",
            rung.name, l.elo[i], t.wins, t.draws, t.losses
        );
        lines.push_str(&g);
        tallies.push((i, t));
    }
    if let Some(out) = out {
        model::write_atomic(&out, lines.as_bytes())?;
    }
    if let Some(r) = l.place(&tallies) {
        println!(
            "ladder Elo {:+.0} [{:+.0}, {:+.0}] from {} games",
            r.elo, r.low, r.high, r.games
        );
    }
    Ok(())
}
