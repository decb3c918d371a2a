//! Matches between players, refereed by our rules, and the USI engine core.
//!
//! * [`Player`]: our network with our MCTS ([`Searcher`]), the network-free search, or an
//!   external USI/UCI engine ([`ExternalEngine`], including Fairy-Stockfish's UCI dialect).
//!   Networks are opened by the caller's [`NetworkOpener`] and run as `search`'s `Evaluator`,
//!   so this crate does not link the network backend.
//! * Matches ([`play_match`]): two in-process players under a node budget play in lockstep (the
//!   self-play driver's match mode, games batched together); any other pairing is refereed:
//!   every move is checked by the rules; an illegal move, a crash, a malformed reply or a
//!   timeout loses that game for the player at fault (a crashed or stuck engine is killed and
//!   restarted for the next game), and the match goes on.
//! * [`Tally`]: wins, draws and losses, Elo with a 95% interval, the SPRT, and their one-line
//!   text ([`result_line`]); [`elo`]: the Elo estimate of one result and the fit of ratings to
//!   the results of many pairings.
//! * [`Opening`]s from a file or random plies, balanced books of them ([`balanced_openings`]:
//!   random openings an engine rates close to even), and the one parser of game lines
//!   ([`parse_game_line`]: `startpos`/`sfen ...` then `moves ...`); game records
//!   ([`MatchGame::record_line`], CSA for standard shogi).
//! * [`UsiEngine`]: the state machine behind `trainer usi`, generic over its input and output.
//! * [`play_human`]: a human against our engine in a terminal (`trainer play`).

mod book;
pub mod elo;
mod engine;
mod error;
mod fsf;
mod lockstep;
mod matches;
mod network;
mod opening;
mod play;
mod player;
mod record;
mod rounds;
mod searcher;
mod tally;
mod usi;
mod variant;

pub use book::{balanced_openings, opening_line, Book, BookEntry, BookSettings};
pub use engine::{info_score, EngineScore, ExternalEngine, Protocol, Reply, MAX_LINE_BYTES};
pub use error::{ArenaError, Failure, NetworkError, ParseProtocolError};
pub use fsf::{
    fsf_to_usi, fsf_to_usi_at, fsf_variant_name, move_to_fsf, move_to_fsf_at, to_fsf_fen,
};
pub use lockstep::LOCKSTEP_GAMES;
pub use matches::{play_match, GameEnd, MatchGame, MatchSettings, TimeControl};
pub use network::{ModelInfo, NetworkOpener, OpenedNetwork};
pub use opening::{parse_game_line, random_openings, read_openings, Opening};
pub use play::{play_human, render, MAX_HANDS};
pub use player::{Forfeit, Player};
pub use record::{result_text, to_csa, Recorder};
pub use searcher::{NetView, Searcher};
pub use tally::{elo_text, result_line, sprt_bounds, Score, Sprt, SprtVerdict, Tally};
pub use usi::{UsiEngine, MAX_TREE_SIMULATIONS};
pub use variant::load_variant;
