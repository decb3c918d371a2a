//! The pipeline's one error type. Each variant carries its context as data; a variant that
//! wraps a cause shows only its own context and gives the cause as its `source`, so that an
//! error printed with its chain ([`PipelineError::chain`], or `{:#}` once in `anyhow`) reads
//! `context: cause: ...`.

use std::error::Error;
use std::fmt;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use thiserror::Error;

/// Any error of the pipeline.
#[derive(Debug, Error)]
pub enum PipelineError {
    /// A file or directory operation failed.
    #[error("{op} {}", path.display())]
    Io {
        /// What was being done.
        op: IoOp,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An output file (an export, a network) could not be written.
    #[error("writing {}", path.display())]
    Writing {
        /// The output file.
        path: PathBuf,
        /// Why not.
        source: Box<dyn Error + Send + Sync>,
    },
    /// A path given to check does not exist.
    #[error("{}: no such file or directory", path.display())]
    NoSuchPath {
        /// The path.
        path: PathBuf,
    },
    /// A config key has a bad value; names the file, the key and the reason.
    #[error("{file}: {key}: {reason}")]
    Config {
        /// The config file (or built-in name).
        file: String,
        /// The key, e.g. `selfplay.threads` or `rungs[1].name`.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A config file is not valid TOML for its kind (a syntax error, an unknown key).
    #[error("{file}: {}{reason}", at_line(line))]
    Toml {
        /// The config file (or built-in name).
        file: String,
        /// The line the parser stopped at and its text, when the error is on one line.
        line: Option<(usize, String)>,
        /// The parser's message.
        reason: String,
    },
    /// The variant named by a config file does not load.
    #[error("{file}: variant")]
    VariantOf {
        /// The config file.
        file: String,
        /// Why not (boxed: the arena's error is large).
        source: Box<arena::ArenaError>,
    },
    /// The network shape named by a config file does not load.
    #[error("{file}: model")]
    ModelOf {
        /// The config file.
        file: String,
        /// Why not.
        source: model::ModelError,
    },
    /// A config file's encoding cannot encode its variant.
    #[error("{file}: encoding")]
    Encoding {
        /// The config file.
        file: String,
        /// Why not.
        source: encoding::EncodingError,
    },
    /// Serialising a TOML file of the run failed.
    #[error("serialising {what}")]
    TomlOut {
        /// What was serialised, e.g. `the variant`.
        what: &'static str,
        /// The serialiser's error.
        source: toml::ser::Error,
    },
    /// Serialising a JSON file of the run failed.
    #[error("serialising {what}")]
    JsonOut {
        /// What was serialised, e.g. `the state`.
        what: &'static str,
        /// The serialiser's error.
        source: serde_json::Error,
    },
    /// `--resume` of a run directory that does not exist.
    #[error("--resume: {} does not exist", dir.display())]
    NoRunToResume {
        /// The run directory.
        dir: PathBuf,
    },
    /// A run directory without a readable `config.toml`.
    #[error("reading {} (is it a run directory?)", path.display())]
    NotARun {
        /// Its `config.toml`.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The run directory cannot be written.
    #[error("the run directory {} is not writable", dir.display())]
    NotWritable {
        /// The run directory.
        dir: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A damaged `state.json`.
    #[error("{}: not a valid run state", path.display())]
    State {
        /// The state file.
        path: PathBuf,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// A `state.json` whose generations have no network in `models/`.
    #[error(
        "{}: generation {generation} / best {best} do not match the models in {}",
        path.display(),
        models.display()
    )]
    StateModels {
        /// The state file.
        path: PathBuf,
        /// Its newest generation.
        generation: u64,
        /// Its self-play generation.
        best: u64,
        /// The models directory.
        models: PathBuf,
    },
    /// The trainer's checkpoint does not load.
    #[error("resuming the trainer from {}", path.display())]
    Checkpoint {
        /// The checkpoint directory.
        path: PathBuf,
        /// Why not.
        source: model::ModelError,
    },
    /// A shard that does not fit the run.
    #[error("{}: {reason}", path.display())]
    Shard {
        /// The shard.
        path: PathBuf,
        /// What does not fit.
        reason: String,
    },
    /// A game of a shard that cannot be replayed.
    #[error("{}", path.display())]
    Game {
        /// The shard.
        path: PathBuf,
        /// Why not.
        source: selfplay::SelfPlayError,
    },
    /// A finished game could not be stored.
    #[error("storing a game in {}", path.display())]
    StoreGame {
        /// The shard being written.
        path: PathBuf,
        /// Why not.
        source: selfplay::SampleError,
    },
    /// A game longer than a shard may hold.
    #[error(
        "a game of {samples} training samples: more than a shard holds ({}; lower selfplay.max_plies)",
        crate::store::MAX_SHARD_SAMPLES
    )]
    GameTooLong {
        /// Its training samples.
        samples: u64,
    },
    /// A self-play thread's shard writer stopped without saying why.
    #[error("the shard writer stopped")]
    ShardWriterStopped,
    /// Self-play's network failed.
    #[error("self-play")]
    Play {
        /// The network's error.
        source: search::EvaluatorError,
    },
    /// A thread of the pipeline panicked.
    #[error("{what} panicked")]
    Panicked {
        /// Which thread, e.g. `the trainer thread`.
        what: &'static str,
    },
    /// The signal handlers could not be installed.
    #[error(transparent)]
    Signals(std::io::Error),
    /// No ladder of that name.
    #[error("no ladder {name:?} (a path, a file stem of configs/ladders, or a built-in: {known})")]
    UnknownLadder {
        /// The name asked for.
        name: String,
        /// The built-in ladders, comma-separated.
        known: String,
    },
    /// A ladder file without its calibration file.
    #[error(
        "{}: the ladder is not calibrated (run `trainer ladder calibrate --ladder {}`)",
        calibration.display(),
        ladder.display()
    )]
    Uncalibrated {
        /// The calibration file expected.
        calibration: PathBuf,
        /// The ladder file.
        ladder: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A ladder rung's player does not start.
    #[error("rung {name}")]
    Rung {
        /// The rung.
        name: String,
        /// Why not (boxed: the arena's error is large).
        source: Box<arena::ArenaError>,
    },
    /// A game that a player lost by breaking, in a calibration or a placement.
    #[error(
        "{what}: a game ended by a failure, not by play ({reason}); such games cannot rate a rung"
    )]
    BrokenGame {
        /// The pairing or rung.
        what: String,
        /// How the game ended.
        reason: String,
    },
    /// A bad line of a ladder's games file.
    #[error("{file}: line {line}: {reason}")]
    GamesLine {
        /// The games file.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A tally names a player that is not a rung of the ladder.
    #[error("{name:?} is not a rung")]
    NotARung {
        /// The name.
        name: String,
    },
    /// The ratings do not fit the tallies.
    #[error("{reason} (the player numbers are the rungs in file order, from 0)")]
    Fit {
        /// The fit's refusal.
        reason: String,
    },
    /// An engine's output ended before the line expected.
    #[error("engine closed before printing {expected:?}")]
    EngineClosed {
        /// The start of the line expected.
        expected: String,
    },
    /// An engine's standard input or output is missing.
    #[error("engine {0}")]
    EnginePipe(&'static str),
    /// A perft line of an engine without a node count.
    #[error("unexpected perft line {line:?}")]
    PerftLine {
        /// The line.
        line: String,
    },
    /// A simulated device latency out of range.
    #[error("--simulate-device: the latency must be above 0 and below 60,000 ms")]
    SimulatedLatency {
        /// The latency given (ms).
        ms: f64,
    },
    /// A generation range whose bound is not a number.
    #[error("--generations {range:?}: {token:?} is not a generation number")]
    GenerationNumber {
        /// The range as given.
        range: String,
        /// The bound.
        token: String,
        /// The parser's error.
        source: std::num::ParseIntError,
    },
    /// A generation range whose first generation comes after its last.
    #[error("--generations {range:?}: the first generation comes after the last")]
    GenerationOrder {
        /// The range as given.
        range: String,
    },
    /// An hcpe export of a variant other than standard shogi.
    #[error("hcpe holds standard shogi positions only: {variant} is not ({reason})")]
    NotStandardShogi {
        /// The run's variant.
        variant: String,
        /// How it differs.
        reason: String,
    },
    /// A network file name that Fairy-Stockfish would not use for its variant.
    #[error(
        "{}: Fairy-Stockfish uses a network only when its file name starts with the variant's name: call it {variant}-<anything>.nnue",
        path.display()
    )]
    NnueFileName {
        /// The file asked for.
        path: PathBuf,
        /// Fairy-Stockfish's variant.
        variant: String,
    },
    /// `--positions 0`.
    #[error("--positions must be at least 1")]
    NoPositions,
    /// A teacher's weight outside [0, 1].
    #[error("--teacher-weight {weight}: wanted a number from 0 to 1")]
    TeacherWeight {
        /// The weight asked for.
        weight: f64,
    },
    /// No training positions in the generations asked for.
    #[error(
        "{}: no self-play positions with a search target in generations {generations:?}",
        dir.display()
    )]
    NoSamples {
        /// The run directory.
        dir: PathBuf,
        /// The generations asked for.
        generations: RangeInclusive<u64>,
    },
    /// The network side failed.
    #[error(transparent)]
    Model(#[from] model::ModelError),
    /// A Fairy-Stockfish network or layout failed.
    #[error(transparent)]
    Nnue(#[from] model::nnue::NnueError),
    /// Search settings out of range.
    #[error(transparent)]
    Search(#[from] search::SearchError),
    /// A network evaluation failed.
    #[error(transparent)]
    Evaluator(#[from] search::EvaluatorError),
    /// Self-play settings, a game record or a position refused.
    #[error(transparent)]
    SelfPlay(#[from] selfplay::SelfPlayError),
    /// A shard that cannot be read.
    #[error(transparent)]
    Samples(#[from] selfplay::SampleError),
    /// A variant, SFEN or move refused by the rules.
    #[error(transparent)]
    Rules(#[from] rules::Error),
    /// A match, a player or a variant of the arena failed.
    #[error(transparent)]
    Arena(#[from] arena::ArenaError),
    /// An engine protocol other than `usi` or `uci`.
    #[error(transparent)]
    Protocol(#[from] arena::ParseProtocolError),
}

/// Result with [`PipelineError`] (or another error `E`).
pub type Result<T, E = PipelineError> = std::result::Result<T, E>;

/// What a failed file or directory operation was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    /// Reading a file or a directory.
    Read,
    /// Writing a file.
    Write,
    /// Creating a file or a directory.
    Create,
    /// Listing a directory.
    List,
    /// Starting a program.
    Start,
    /// Talking to a program through its pipes.
    Talk,
}

impl fmt::Display for IoOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoOp::Read => "reading",
            IoOp::Write => "writing",
            IoOp::Create => "creating",
            IoOp::List => "listing",
            IoOp::Start => "starting",
            IoOp::Talk => "talking to",
        })
    }
}

/// A config key and what is wrong with its value, before the file is known
/// ([`KeyError::in_file`] makes it a [`PipelineError::Config`]).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{key}: {reason}")]
pub struct KeyError {
    /// The key, e.g. `evaluation.share`.
    pub key: String,
    /// What is wrong with it.
    pub reason: String,
}

impl KeyError {
    /// A bad value of `key`.
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> KeyError {
        KeyError {
            key: key.into(),
            reason: reason.into(),
        }
    }

    /// The error naming the config file `file` too.
    pub fn in_file(self, file: &str) -> PipelineError {
        PipelineError::Config {
            file: file.to_string(),
            key: self.key,
            reason: self.reason,
        }
    }
}

impl From<search::SearchError> for KeyError {
    fn from(e: search::SearchError) -> KeyError {
        match e {
            search::SearchError::Config { key, reason } => {
                KeyError::new(format!("search.{key}"), reason)
            }
        }
    }
}

impl From<selfplay::SelfPlayError> for KeyError {
    /// A `[selfplay]` key keeps its section; a value-target key is given the `replay` section,
    /// where the run config keeps those keys.
    fn from(e: selfplay::SelfPlayError) -> KeyError {
        match e {
            selfplay::SelfPlayError::Config { key, reason } => {
                KeyError::new(format!("selfplay.{key}"), reason)
            }
            selfplay::SelfPlayError::ValueTargets { key, reason } => {
                KeyError::new(format!("replay.{key}"), reason)
            }
            other => KeyError::new("selfplay", other.to_string()),
        }
    }
}

impl PipelineError {
    /// A file operation's error on `path`, for `map_err`.
    pub(crate) fn io(op: IoOp, path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| PipelineError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }

    /// The error and its causes, joined by ": " (what the binary prints).
    pub fn chain(&self) -> Chain<'_> {
        Chain(self)
    }
}

/// An error and its causes, displayed joined by ": " (as `anyhow` shows `{:#}`).
pub struct Chain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(e) = cause {
            write!(f, ": {e}")?;
            cause = e.source();
        }
        Ok(())
    }
}

/// `line N (text): ` of a TOML error on one line.
fn at_line(line: &Option<(usize, String)>) -> String {
    line.as_ref()
        .map_or(String::new(), |(n, text)| format!("line {n} ({text}): "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_name_the_file_the_key_and_the_reason() {
        let e = KeyError::new("selfplay.threads", "must be at least 1").in_file("runs/x.toml");
        assert_eq!(
            e.to_string(),
            "runs/x.toml: selfplay.threads: must be at least 1"
        );
        let e = PipelineError::Toml {
            file: "x.toml".into(),
            line: Some((3, "colour = 1".into())),
            reason: "unknown field `colour`".into(),
        };
        assert_eq!(
            e.to_string(),
            "x.toml: line 3 (colour = 1): unknown field `colour`"
        );
    }

    /// A variant with a cause shows its context; the chain adds the causes.
    #[test]
    fn the_chain_joins_the_context_and_its_causes() {
        let e = PipelineError::io(IoOp::Read, std::path::Path::new("/x/state.json"))(
            std::io::Error::other("gone"),
        );
        assert_eq!(e.to_string(), "reading /x/state.json");
        assert_eq!(e.chain().to_string(), "reading /x/state.json: gone");
        let w = PipelineError::Writing {
            path: "out.txt".into(),
            source: Box::new(e),
        };
        assert_eq!(
            w.chain().to_string(),
            "writing out.txt: reading /x/state.json: gone"
        );
    }
}
