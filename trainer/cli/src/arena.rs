//! `trainer arena`: matches between our networks, our network-free search and external USI/UCI
//! engines (the `arena` crate), with W/D/L, Elo (95% interval) and an optional SPRT. Two
//! in-process players under `--nodes` play in lockstep, batched; any other pairing is refereed
//! by our rules. This file parses the arguments and prints; `arena::play_match` plays.

use crate::load_variant;
use anyhow::{bail, Result};
use arena::{
    play_match, random_openings, read_openings, MatchGame, MatchSettings, Opening, Player,
    Protocol, Recorder, Score, Sprt, SprtVerdict, Tally, TimeControl,
};
use clap::builder::TypedValueParser;
use rules::{MatchRule, Variant};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

const HELP: &str = "\
Players (exactly two --player, A then B):
  model:PATH     our network (PATH.safetensors with its .json sidecar) with our MCTS
  mcts           our MCTS with a uniform policy and even value (no network)
  engine:CMD     an external engine, started as `sh -c CMD` (so CMD may carry arguments),
                 speaking --protocol-a/--protocol-b (usi, default; or uci) with options
                 --option-a/--option-b NAME=VALUE (repeatable). USI_Variant / UCI_Variant is
                 set to the variant automatically when the engine offers it.

Time control (one of): --nodes N (default 64; external engines get `go nodes N`),
  --movetime MS (`go movetime MS`), --byoyomi MS (USI `go btime 0 wtime 0 byoyomi MS`, UCI
  `go movetime MS`). Our in-process players search at most --nodes simulations; under a time
  limit Gumbel runs whole rounds of sequential halving of doubling size (from 200
  simulations) until the time is spent. An engine that does not answer within the time limit + --margin
  (or --move-timeout under --nodes) loses the game. Two in-process players under --nodes play
  up to 64 games at once in lockstep, batching their network calls; the games are still
  printed in order.

Examples:
  trainer arena --variant minishogi --player model:runs/default/models/12.safetensors \\
      --player mcts --games 20 --nodes 128
  trainer arena --variant minishogi --player mcts --player engine:/usr/games/fairy-stockfish \\
      --protocol-b uci --option-b Threads=1 --movetime 100 --games 10 --out arena-out
  trainer arena --variant shogi --player 'engine:trainer usi --model m.safetensors' \\
      --player 'engine:./YaneuraOu' --byoyomi 1000 --sprt 0,10 --games 400

Output: one line per game, then the table (W/D/L, score, Elo with 95% interval for A; for
hand shogi also per match). --out DIR gets games.txt (one `sfen .. moves .. result ..` line
per game) and, for standard shogi, one CSA file per game.";

/// `trainer arena` arguments.
#[derive(clap::Args, Debug)]
#[command(after_help = HELP)]
pub(crate) struct ArenaArgs {
    /// Variant (as for perft).
    #[arg(long)]
    variant: String,
    /// A player: model:PATH, mcts or engine:CMD (give it twice: A, then B).
    #[arg(long = "player", required = true)]
    players: Vec<String>,
    /// Protocol of player A when it is an engine.
    #[arg(long, default_value = "usi", value_parser = protocol_parser())]
    protocol_a: Protocol,
    /// Protocol of player B when it is an engine.
    #[arg(long, default_value = "usi", value_parser = protocol_parser())]
    protocol_b: Protocol,
    /// An engine option NAME=VALUE for player A (repeatable).
    #[arg(long = "option-a", value_name = "NAME=VALUE", value_parser = parse_option)]
    options_a: Vec<(String, String)>,
    /// An engine option NAME=VALUE for player B (repeatable).
    #[arg(long = "option-b", value_name = "NAME=VALUE", value_parser = parse_option)]
    options_b: Vec<(String, String)>,
    /// Games to play (matches under a consecutive-wins match rule).
    #[arg(long, default_value_t = 10)]
    games: u32,
    /// Simulations per move of our players (and `go nodes N` for engines without a time
    /// control).
    #[arg(long, default_value_t = 64)]
    nodes: u32,
    /// Time per move in milliseconds.
    #[arg(long, conflicts_with = "byoyomi")]
    movetime: Option<u64>,
    /// Byoyomi per move in milliseconds (no main time).
    #[arg(long)]
    byoyomi: Option<u64>,
    /// Openings: one SFEN (or `startpos`) per line, optionally followed by `moves ...`.
    #[arg(long, conflicts_with = "random_plies")]
    openings: Option<PathBuf>,
    /// Random plies from the start position for each pair of games (0: start position).
    #[arg(long, default_value_t = 4)]
    random_plies: u32,
    /// Seed of the random openings.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory for the game records.
    #[arg(long)]
    out: Option<PathBuf>,
    /// SPRT of A against B: ELO0,ELO1 (alpha = beta = 0.05); stops when a bound is crossed.
    #[arg(long, value_name = "ELO0,ELO1", value_parser = Sprt::from_str)]
    sprt: Option<Sprt>,
    /// Hands after which a consecutive-wins match is drawn.
    #[arg(long, default_value_t = 10)]
    max_hands: u32,
    /// Milliseconds an engine may exceed the time control before losing on time.
    #[arg(long, default_value_t = 1000)]
    margin: u64,
    /// Milliseconds an engine may think under --nodes before losing on time.
    #[arg(long, default_value_t = 60000)]
    move_timeout: u64,
    /// Device of model players: cpu, cuda, cuda:N or auto.
    #[arg(long, default_value = "auto", value_parser = model::parse_device)]
    device: model::Device,
}

/// `usi` or `uci`, listed as possible values in the help.
pub(crate) fn protocol_parser() -> impl TypedValueParser<Value = Protocol> {
    clap::builder::PossibleValuesParser::new(["usi", "uci"])
        .map(|s| s.parse::<Protocol>().expect("a listed value"))
}

/// An engine option `NAME=VALUE`.
pub(crate) fn parse_option(o: &str) -> Result<(String, String), String> {
    let (k, v) = o
        .split_once('=')
        .ok_or_else(|| format!("engine option {o:?}: expected NAME=VALUE"))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

/// `trainer arena`.
pub(crate) fn run(args: ArenaArgs) -> Result<()> {
    if args.players.len() != 2 {
        bail!(
            "give exactly two --player (A and B), got {}",
            args.players.len()
        );
    }
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let variant = load_variant(&args.variant)?;
    let settings = settings(&args);
    let rule = variant.match_rule;
    let openings = openings(&args, &variant)?;
    let player = |i: usize, protocol, options: &[(String, String)]| {
        let (spec, device) = (&args.players[i], args.device);
        let opener = &pipeline::ModelOpener;
        Player::from_spec(
            spec, protocol, options, &variant, args.nodes, device, opener,
        )
    };
    let mut a = player(0, args.protocol_a, &args.options_a)?;
    let mut b = player(1, args.protocol_b, &args.options_b)?;
    let names = [args.players[0].as_str(), args.players[1].as_str()];
    println!(
        "arena: {} | A = {} | B = {} | {} | {}",
        variant.name,
        names[0],
        names[1],
        settings.tc,
        games_text(&args, rule)
    );
    let mut shown = Shown {
        rule,
        sprt: args.sprt,
        sprt_state: None,
        recorder: args.out.as_deref().map(Recorder::create).transpose()?,
        save_error: None,
    };
    let games = args.games;
    let mut on_game = |g: &MatchGame, t: &Tally| shown.game(g, t);
    let tally = play_match(
        &variant,
        &mut a,
        &mut b,
        &settings,
        &openings,
        games,
        &mut on_game,
    )?;
    if let Some(e) = shown.save_error {
        return Err(e);
    }
    println!("\nresults for A = {} against B = {}", names[0], names[1]);
    println!("{}", tally.table(rule));
    if let (Some(s), Some((llr, verdict))) = (shown.sprt, shown.sprt_state) {
        println!("{}", s.report(llr, verdict));
    }
    for p in [&a, &b] {
        print_engine(p);
    }
    if let Some(d) = &args.out {
        println!("games written to {}", d.display());
    }
    Ok(())
}

/// The match settings of the flags.
fn settings(args: &ArenaArgs) -> MatchSettings {
    MatchSettings {
        tc: match (args.movetime, args.byoyomi) {
            (Some(ms), _) => TimeControl::Movetime(ms),
            (_, Some(ms)) => TimeControl::Byoyomi(ms),
            _ => TimeControl::Nodes(args.nodes.max(1)),
        },
        margin_ms: args.margin,
        move_timeout_ms: args.move_timeout,
        max_plies: 0,
        max_hands: args.max_hands,
    }
}

/// What the match plays: games, or matches of hands under a consecutive-wins rule.
fn games_text(args: &ArenaArgs, rule: MatchRule) -> String {
    match rule {
        MatchRule::Single => format!("{} games", args.games),
        MatchRule::ConsecutiveWins(n) => format!(
            "{} matches of hands, {n} consecutive wins (drawn after {} hands)",
            args.games, args.max_hands
        ),
    }
}

/// The openings: `--openings FILE`, else random ones, one per pair of games (or hands).
fn openings(args: &ArenaArgs, variant: &Arc<Variant>) -> Result<Vec<Opening>> {
    Ok(match &args.openings {
        Some(p) => read_openings(p, variant)?,
        None => {
            let hands = match variant.match_rule {
                MatchRule::Single => 1,
                MatchRule::ConsecutiveWins(_) => args.max_hands.max(1) as usize,
            };
            let pairs = (args.games as usize * hands).div_ceil(2);
            random_openings(variant, args.random_plies, pairs, args.seed)
        }
    })
}

/// What `trainer arena` shows and keeps of each finished game.
struct Shown {
    rule: MatchRule,
    sprt: Option<Sprt>,
    /// The SPRT after the last finished match.
    sprt_state: Option<(f64, SprtVerdict)>,
    recorder: Option<Recorder>,
    save_error: Option<anyhow::Error>,
}

impl Shown {
    /// Prints and records game `g`; whether the match goes on (the SPRT has not decided).
    fn game(&mut self, g: &MatchGame, t: &Tally) -> bool {
        let label = match self.rule {
            MatchRule::Single => format!("game {}", g.match_number),
            MatchRule::ConsecutiveWins(_) => format!("match {} hand {}", g.match_number, g.hand),
        };
        println!("{label}: {}", g.summary());
        if let Err(e) = self.recorder.as_mut().map_or(Ok(()), |r| r.save(g)) {
            self.save_error = Some(e.into());
            return false;
        }
        let Some(m) = g.match_result else {
            return true;
        };
        if let MatchRule::ConsecutiveWins(_) = self.rule {
            let r = match m {
                Score::Win => "A wins",
                Score::Draw => "drawn",
                Score::Loss => "B wins",
            };
            println!("match {}: {r}", g.match_number);
        }
        self.sprt_state = self.sprt.map(|s| s.test(t));
        self.sprt_state
            .is_none_or(|(_, v)| v == SprtVerdict::Inconclusive)
    }
}

/// An external engine's id, restarts and output notes.
fn print_engine(p: &Player) {
    if let Some(id) = p.engine_id() {
        println!("{}: id name {id}", p.name());
    }
    if p.restarts() > 0 {
        println!("{}: restarted {} times", p.name(), p.restarts());
    }
    for note in p.engine_notes() {
        println!("{}: {note}", p.name());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_options() {
        assert_eq!(
            parse_option(" Threads = 1"),
            Ok(("Threads".into(), "1".into()))
        );
        assert!(parse_option("Threads").is_err());
    }
}
