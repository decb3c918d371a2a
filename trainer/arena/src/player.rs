//! A player of the arena: our search in-process or an external engine.

use crate::engine::{ExternalEngine, Protocol, Reply};
use crate::error::{ArenaError, Failure};
use crate::matches::{MatchSettings, TimeControl};
use crate::network::NetworkOpener;
use crate::searcher::Searcher;
use crate::tally::Score;
use encoding::Device;
use rules::{Move, Position, Variant};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

enum Kind {
    Local(Box<Searcher>),
    External(Box<ExternalEngine>),
}

/// A player: our network with our MCTS, our network-free MCTS, or an external engine.
pub struct Player {
    name: String,
    kind: Kind,
    /// An engine's own node budget under a node time control (None: the match's).
    engine_nodes: Option<u32>,
}

/// Why a player lost on its turn (the game is scored as a forfeit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forfeit {
    /// A move that is not legal in the position (or not a move of the variant).
    IllegalMove,
    /// The engine resigned.
    Resign,
    /// The engine declared a win (entering-king declarations are not supported).
    DeclaredWin,
    /// The engine crashed, or its pipe broke.
    Crash,
    /// No answer within the time allowed.
    Timeout,
    /// An answer that is not a move.
    Malformed,
    /// Our search failed (e.g. the network's evaluation).
    SearchFailed,
}

impl Forfeit {
    pub(crate) fn of(f: &Failure) -> Forfeit {
        match f {
            Failure::Crash(_) => Forfeit::Crash,
            Failure::Timeout(_) => Forfeit::Timeout,
            Failure::Malformed(_) => Forfeit::Malformed,
        }
    }
}

/// What a player did on its turn.
pub(crate) enum Turn {
    Move(Move),
    /// It loses: how, and the reason as text.
    Loses(Forfeit, String),
}

impl Player {
    /// A player from its spec: `mcts` (our MCTS with a uniform policy and even value),
    /// `model:PATH` (our network, PATH.safetensors with its .json sidecar, opened by `opener`
    /// on `device`: cpu, cuda, cuda:N or auto) or `engine:CMD` (an external engine started as
    /// `sh -c CMD`, speaking `protocol`, given `options` NAME=VALUE by `setoption`). `nodes`:
    /// simulations per move of our search. Errors for unusable specs, models that do not load
    /// or do not fit the variant, and engines that cannot start (a configuration error, not a
    /// lost game).
    pub fn from_spec(
        spec: &str,
        protocol: Protocol,
        options: &[(String, String)],
        variant: &Arc<Variant>,
        nodes: u32,
        device: Device,
        opener: &dyn NetworkOpener,
    ) -> Result<Player, ArenaError> {
        let bad_spec = |reason| ArenaError::PlayerSpec {
            spec: spec.to_string(),
            reason,
        };
        let kind = if spec == "mcts" {
            Kind::Local(Box::new(Searcher::uniform(variant, nodes)))
        } else if let Some(path) = spec.strip_prefix("model:") {
            Kind::Local(Box::new(Searcher::network(
                variant,
                Path::new(path),
                nodes,
                device,
                opener,
            )?))
        } else if let Some(cmd) = spec.strip_prefix("engine:") {
            if cmd.trim().is_empty() {
                return Err(bad_spec("engine: needs a command"));
            }
            let mut e = ExternalEngine::new(cmd, protocol, options.to_vec(), variant.clone());
            e.ensure_started()
                .map_err(|reason| ArenaError::EngineStart {
                    spec: spec.to_string(),
                    reason,
                })?;
            Kind::External(Box::new(e))
        } else {
            return Err(bad_spec("expected model:PATH, mcts or engine:CMD"));
        };
        Ok(Player {
            name: spec.to_string(),
            kind,
            engine_nodes: None,
        })
    }

    /// Gives an external engine its own `go nodes N` under a node time control, whatever the
    /// match's budget (a ladder's rungs differ in nodes); no effect on our players, which
    /// always search their own simulations.
    pub fn with_engine_nodes(mut self, nodes: u32) -> Player {
        self.engine_nodes = Some(nodes);
        self
    }

    /// The player's name: its spec.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `id name` of an external engine (None for our players or before it started).
    pub fn engine_id(&self) -> Option<&str> {
        match &self.kind {
            Kind::External(e) => e.id_name(),
            Kind::Local(_) => None,
        }
    }

    /// How many times an external engine was restarted after a crash or timeout (0 for ours).
    pub fn restarts(&self) -> u32 {
        match &self.kind {
            Kind::External(e) => e.starts().saturating_sub(1),
            Kind::Local(_) => 0,
        }
    }

    /// An external engine's output lines that were not UTF-8 or over-long (read lossily or
    /// cut; see [`ExternalEngine::output_notes`]); empty for our players.
    pub fn engine_notes(&self) -> Vec<String> {
        match &self.kind {
            Kind::External(e) => e.output_notes(),
            Kind::Local(_) => Vec::new(),
        }
    }

    /// Our in-process search (None for an external engine).
    pub(crate) fn searcher(&mut self) -> Option<&mut Searcher> {
        match &mut self.kind {
            Kind::Local(s) => Some(s),
            Kind::External(_) => None,
        }
    }

    pub(crate) fn new_game(&mut self) -> Result<(), Failure> {
        match &mut self.kind {
            Kind::Local(_) => Ok(()),
            Kind::External(e) => e.new_game(),
        }
    }

    /// The player's move in `pos`, reached from `start` by `moves`.
    pub(crate) fn turn(
        &mut self,
        start: &Position,
        moves: &[Move],
        pos: &Position,
        settings: &MatchSettings,
    ) -> Turn {
        let name = &self.name;
        let tc = settings.tc;
        match &mut self.kind {
            Kind::Local(s) => {
                let time = match tc {
                    TimeControl::Nodes(_) => None,
                    TimeControl::Movetime(ms) | TimeControl::Byoyomi(ms) => {
                        Some(Duration::from_millis(ms * 9 / 10))
                    }
                };
                match s.choose(pos, time) {
                    Ok(mv) => Turn::Move(mv),
                    Err(e) => {
                        Turn::Loses(Forfeit::SearchFailed, format!("{name}: search failed: {e}"))
                    }
                }
            }
            Kind::External(e) => {
                let tc = match (tc, self.engine_nodes) {
                    (TimeControl::Nodes(_), Some(n)) => TimeControl::Nodes(n),
                    _ => tc,
                };
                let (go, timeout) = go_command(tc, e.protocol(), settings);
                match e.go(start, moves, &go, Duration::from_millis(timeout)) {
                    Ok(Reply::Move(t)) => match pos.parse_usi(&t) {
                        Ok(mv) => Turn::Move(mv),
                        Err(err) => Turn::Loses(
                            Forfeit::IllegalMove,
                            format!("illegal move by {name}: {err}"),
                        ),
                    },
                    Ok(Reply::Resign) => Turn::Loses(Forfeit::Resign, format!("{name} resigns")),
                    Ok(Reply::Win) => Turn::Loses(
                        Forfeit::DeclaredWin,
                        format!(
                            "{name} declared a win (entering-king declarations are not supported)"
                        ),
                    ),
                    Err(f) => Turn::Loses(Forfeit::of(&f), format!("{name}: {f}")),
                }
            }
        }
    }

    /// Tells the player how the game ended for it.
    pub(crate) fn game_over(&mut self, score: Score) {
        if let Kind::External(e) = &mut self.kind {
            e.game_over(score);
        }
    }
}

/// The arguments of `go` for an external engine and the milliseconds it has to answer.
fn go_command(tc: TimeControl, protocol: Protocol, s: &MatchSettings) -> (String, u64) {
    let uci = protocol == Protocol::Uci;
    match tc {
        TimeControl::Nodes(n) => (format!("nodes {n}"), s.move_timeout_ms),
        TimeControl::Movetime(ms) => (format!("movetime {ms}"), ms + s.margin_ms),
        TimeControl::Byoyomi(ms) if uci => (format!("movetime {ms}"), ms + s.margin_ms),
        TimeControl::Byoyomi(ms) => (format!("btime 0 wtime 0 byoyomi {ms}"), ms + s.margin_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::tests::NoNetworks;

    #[test]
    fn specs() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let spec = |s| Player::from_spec(s, Protocol::Usi, &[], &v, 4, Device::Cpu, &NoNetworks);
        let p = spec("mcts").unwrap();
        assert_eq!((p.name(), p.engine_id(), p.restarts()), ("mcts", None, 0));
        for bad in [
            "engine:",
            "engine:  ",
            "nonsense",
            "model:/no/such/file.safetensors",
        ] {
            assert!(spec(bad).is_err(), "{bad}");
        }
        // A command that exits at once cannot complete the handshake.
        assert!(spec("engine:exit 1").is_err());
    }

    #[test]
    fn go_commands() {
        let s = MatchSettings::default();
        let go = |tc, p| go_command(tc, p, &s);
        assert_eq!(
            go(TimeControl::Nodes(8), Protocol::Usi),
            ("nodes 8".into(), 60_000)
        );
        assert_eq!(
            go(TimeControl::Byoyomi(500), Protocol::Usi),
            ("btime 0 wtime 0 byoyomi 500".into(), 1500)
        );
        assert_eq!(
            go(TimeControl::Byoyomi(500), Protocol::Uci),
            ("movetime 500".into(), 1500)
        );
        assert_eq!(
            go(TimeControl::Movetime(20), Protocol::Usi),
            ("movetime 20".into(), 1020)
        );
    }
}
