//! Errors of the arena crate.

use std::path::PathBuf;

/// How an external engine failed to produce a move (each loses the game for it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The process exited, could not be started, or its pipe broke.
    #[error("crash: {0}")]
    Crash(String),
    /// No answer within the time allowed.
    #[error("timeout: {0}")]
    Timeout(String),
    /// An answer that is not a move.
    #[error("malformed reply: {0}")]
    Malformed(String),
}

/// A protocol name other than `usi` or `uci`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol {0:?}: expected usi or uci")]
pub struct ParseProtocolError(pub String);

/// Any error of the arena crate: each names what was wrong and where.
///
/// A variant that adds context to a lower error (a file, a token) writes that error into its
/// own message and does not also report it as its source, so that printing the chain of
/// sources (`{:#}` of `anyhow`) does not say it twice.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// A bad variant config, SFEN or USI move without more context.
    #[error(transparent)]
    Rules(#[from] rules::Error),
    /// The network failed.
    #[error(transparent)]
    Evaluator(#[from] search::EvaluatorError),
    /// The network answered too few positions or logits.
    #[error(
        "the evaluator answered {positions} of {wanted} positions ({logits} of {moves} logits)"
    )]
    ShortAnswer {
        /// Positions answered.
        positions: usize,
        /// Positions asked.
        wanted: usize,
        /// Logits answered.
        logits: usize,
        /// Logits asked.
        moves: usize,
    },
    /// The network returned nothing for a position.
    #[error("the evaluator returned nothing")]
    NoEvaluation,
    /// The position has no legal move to choose.
    #[error("no legal move")]
    NoLegalMove,
    /// A game line's SFEN is not a position of the variant.
    #[error("bad SFEN {sfen:?}: {reason}")]
    Sfen {
        /// The SFEN as given.
        sfen: String,
        /// Why it was refused.
        reason: rules::Error,
    },
    /// A balanced opening book could not be made (the engine failed, or too few openings
    /// were within the bound).
    #[error("opening book: {0}")]
    Book(String),
    /// `sfen` without its fields.
    #[error("sfen: missing the SFEN fields")]
    MissingSfen,
    /// A token after `startpos` other than `moves`.
    #[error("unexpected {0:?} after startpos")]
    AfterStartpos(String),
    /// A game line's move that is malformed or illegal.
    #[error("move {number} {token:?}: {reason}")]
    Move {
        /// Its number in the line, from 1.
        number: usize,
        /// The move as given.
        token: String,
        /// Why it was refused.
        reason: rules::Error,
    },
    /// A line of an openings file that is not an opening.
    #[error("{}:{line}: {reason}", path.display())]
    OpeningLine {
        /// The openings file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// Why the line is not an opening.
        reason: Box<ArenaError>,
    },
    /// An opening after which the game is already over.
    #[error("{}:{line}: the opening is already over ({end:?})", path.display())]
    OpeningOver {
        /// The openings file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// How the game ended.
        end: rules::EndReason,
    },
    /// An openings file without openings.
    #[error("{}: no openings", path.display())]
    NoOpenings {
        /// The openings file.
        path: PathBuf,
    },
    /// A match asked to play without openings.
    #[error("play_match: no openings")]
    MatchWithoutOpenings,
    /// A file or directory could not be read, created or written.
    #[error("{action} {}: {reason}", path.display())]
    File {
        /// `reading`, `creating` or `writing`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        reason: std::io::Error,
    },
    /// The terminal (input or output of `trainer play`) failed.
    #[error(transparent)]
    Terminal(#[from] std::io::Error),
    /// A player spec that names no player.
    #[error("--player {spec:?}: {reason}")]
    PlayerSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An external engine that could not start or complete its handshake.
    #[error("--player {spec:?}: {reason}")]
    EngineStart {
        /// The spec as given.
        spec: String,
        /// How the engine failed.
        reason: Failure,
    },
    /// A lockstep match whose players are not both in-process.
    #[error("lockstep: both players must be in-process")]
    NotInProcess,
    /// The searches of a lockstep match failed.
    #[error("search failed: {0}")]
    LockstepSearch(search::EvaluatorError),
    /// A move of a lockstep game record that the rules refuse.
    #[error("lockstep game record: {0}")]
    LockstepRecord(rules::Error),
    /// A model file's sidecar could not be read (for a player).
    #[error("loading {}: {reason}", path.display())]
    Load {
        /// The model file.
        path: PathBuf,
        /// What the network backend said.
        reason: NetworkError,
    },
    /// A model file's sidecar could not be read (for the USI engine).
    #[error("reading the sidecar of {}: {reason}", path.display())]
    Sidecar {
        /// The model file.
        path: PathBuf,
        /// What the network backend said.
        reason: NetworkError,
    },
    /// The variant recorded in a model's sidecar does not compile.
    #[error("compiling the variant of {}: {reason}", path.display())]
    SidecarVariant {
        /// The model file.
        path: PathBuf,
        /// Why it does not compile.
        reason: rules::Error,
    },
    /// A model's recorded layout does not fit the variant.
    #[error("{}: {reason}", path.display())]
    Layout {
        /// The model file.
        path: PathBuf,
        /// Why it does not fit.
        reason: encoding::EncodingError,
    },
    /// A model whose encoding does not match what this build makes of its variant.
    #[error(transparent)]
    Encoding(NetworkError),
    /// A model that does not open for the variant of the player.
    #[error("{} is a {model_variant} model, not one for {variant}: {reason}", path.display())]
    WrongModel {
        /// The model file.
        path: PathBuf,
        /// The model's variant (from its sidecar).
        model_variant: String,
        /// The variant of the match.
        variant: String,
        /// What the network backend said.
        reason: NetworkError,
    },
    /// The USI engine's network could not be loaded.
    #[error("loading {}: {reason}", path.display())]
    Open {
        /// The model file.
        path: PathBuf,
        /// What the network backend said.
        reason: NetworkError,
    },
    /// `--variant` names another variant than the model's.
    #[error(
        "--variant {want} does not match the model: {} is a {model} model (the variant comes \
         from the model's sidecar; omit --variant or give {model})",
        path.display()
    )]
    VariantMismatch {
        /// The variant asked for.
        want: String,
        /// The model file.
        path: PathBuf,
        /// The model's variant.
        model: String,
    },
    /// A device that is not spelled right.
    #[error(transparent)]
    DeviceSpelling(#[from] encoding::DeviceError),
    /// A device the network backend does not have.
    #[error(transparent)]
    Device(NetworkError),
    /// A `position` command without arguments.
    #[error("expected startpos or sfen")]
    NoPosition,
    /// A `position` command that starts with neither `startpos` nor `sfen`.
    #[error("expected startpos or sfen, got {0:?}")]
    PositionStart(String),
    /// A `setoption` that is not `setoption name <id> [value <x>]`.
    #[error("expected `setoption name <id> [value <x>]`")]
    SetoptionSyntax,
    /// `setoption name` without a name.
    #[error("missing option name")]
    MissingOptionName,
    /// An option that needs a value, given none.
    #[error("option {0} needs a value")]
    NeedsValue(String),
    /// An option this engine does not have.
    #[error("unknown option {0:?}")]
    UnknownOption(String),
    /// A USI option's value out of its choices.
    #[error("{option} {value:?}: expected {expected}")]
    OptionValue {
        /// The option.
        option: &'static str,
        /// The value as given.
        value: String,
        /// The choices.
        expected: &'static str,
    },
    /// A spin option's value that is not an integer in its range.
    #[error("{value:?}: expected an integer from {min} to {max}")]
    Spin {
        /// The value as given.
        value: String,
        /// The least allowed.
        min: u32,
        /// The most allowed.
        max: u32,
    },
    /// `USI_Variant` other than the model's variant.
    #[error("USI_Variant {asked}: the model plays {variant} only")]
    ModelVariantOnly {
        /// The variant asked for.
        asked: String,
        /// The model's variant.
        variant: String,
    },
    /// A variant named by `USI_Variant` that does not load.
    #[error("USI_Variant {name}: {reason}")]
    UsiVariant {
        /// The name as given.
        name: String,
        /// Why it does not load.
        reason: Box<ArenaError>,
    },
    /// An SPRT specification that is not `ELO0,ELO1`.
    #[error("{0:?}: expected ELO0,ELO1 (e.g. 0,10)")]
    SprtSyntax(String),
    /// An SPRT bound that is not a number.
    #[error("{0:?} is not a number")]
    SprtNumber(String),
    /// SPRT bounds in the wrong order.
    #[error("ELO0 ({elo0}) must be below ELO1 ({elo1})")]
    SprtOrder {
        /// The lower bound.
        elo0: f64,
        /// The upper bound.
        elo1: f64,
    },
    /// A fit whose zero player is not one of the players.
    #[error("the zero player {zero} is not one of the {n} players")]
    FitZero {
        /// The zero player.
        zero: usize,
        /// Players.
        n: usize,
    },
    /// A pairing naming a player out of range, or a player against itself.
    #[error("a pairing of players {a} and {b} is not valid")]
    FitPairing {
        /// First player.
        a: usize,
        /// Second player.
        b: usize,
    },
    /// A player without games, which cannot be rated.
    #[error("player {0} has no games: it cannot be rated")]
    FitUnrated(usize),
}

/// An error of the network backend (model files, devices), which this crate does not name.
#[derive(Debug)]
pub struct NetworkError(Box<dyn std::error::Error + Send + Sync>);

impl NetworkError {
    /// Wraps the backend's error.
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> NetworkError {
        NetworkError(Box::new(e))
    }

    /// The backend's error.
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl std::fmt::Display for NetworkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for NetworkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}
