//! `trainer arena`: matches between our networks, our network-free search and external USI/UCI
//! engines, refereed by our rules, with W/D/L, Elo (95% interval) and an optional SPRT.
//!
//! * Every move is checked by the rules; an illegal move, a crash, a malformed reply or a
//!   timeout loses that game for the player at fault (a crashed or stuck engine is killed and
//!   restarted for the next game), and the match goes on.
//! * Colours alternate; each pair of consecutive games shares its opening (from a file, or
//!   random plies from the start position).
//! * With a variant whose `match_rule` is `ConsecutiveWins(n)` (hand shogi), a *match* is a
//!   series of hands (games) with alternating first player, won by the first player to win `n`
//!   hands in a row (a draw breaks the streak) and drawn after `--max-hands` hands; `--games`
//!   then counts matches and the table reports hands and matches.
//! * SPRT: the generalised SPRT on the trinomial score in the normal approximation
//!   (`LLR = N (s1 - s0) (2 s - s0 - s1) / (2 var)`, s0/s1 the expected scores at elo0/elo1,
//!   s the mean score, var the per-game variance), with alpha = beta = 0.05: bounds
//!   `ln(beta / (1 - alpha)) = -2.94` and `ln((1 - beta) / alpha) = +2.94`. The variance is
//!   computed with half a game added to each of W, D and L, so that a few decisive games do
//!   not end the test. It counts matches under the consecutive-wins rule.

use crate::engine::{ExternalEngine, Failure, Protocol, Reply, Searcher};
use crate::load_variant;
use anyhow::{bail, Context, Result};
use rules::{Color, EndReason, MatchRule, Move, Position, Variant};
use selfplay::driver::Rng;
use selfplay::elo_estimate;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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
  `go movetime MS`). Our in-process players always search at most --nodes simulations and stop
  early at the time limit. An engine that does not answer within the time limit + --margin
  (or --move-timeout under --nodes) loses the game.

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
    #[arg(long, value_enum, default_value = "usi")]
    protocol_a: Protocol,
    /// Protocol of player B when it is an engine.
    #[arg(long, value_enum, default_value = "usi")]
    protocol_b: Protocol,
    /// An engine option NAME=VALUE for player A (repeatable).
    #[arg(long = "option-a", value_name = "NAME=VALUE")]
    options_a: Vec<String>,
    /// An engine option NAME=VALUE for player B (repeatable).
    #[arg(long = "option-b", value_name = "NAME=VALUE")]
    options_b: Vec<String>,
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
    #[arg(long, value_name = "ELO0,ELO1", value_parser = parse_sprt)]
    sprt: Option<(f64, f64)>,
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
    #[arg(long, default_value = "auto")]
    device: String,
}

fn parse_sprt(s: &str) -> std::result::Result<(f64, f64), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("{s:?}: expected ELO0,ELO1 (e.g. 0,10)"))?;
    let p = |x: &str| {
        x.trim()
            .parse::<f64>()
            .map_err(|_| format!("{x:?} is not a number"))
    };
    let (a, b) = (p(a)?, p(b)?);
    if a >= b {
        return Err(format!("ELO0 ({a}) must be below ELO1 ({b})"));
    }
    Ok((a, b))
}

/// The time control of the arena.
#[derive(Clone, Copy, Debug)]
enum Tc {
    Nodes(u32),
    Movetime(u64),
    Byoyomi(u64),
}

enum Kind {
    Local(Box<Searcher>),
    External(Box<ExternalEngine>),
}

struct Player {
    name: String,
    kind: Kind,
}

/// What a player did on its turn.
enum Turn {
    Move(Move),
    /// It loses: the reason.
    Loses(String),
}

impl Player {
    fn new_game(&mut self) -> Result<(), Failure> {
        match &mut self.kind {
            Kind::Local(_) => Ok(()),
            Kind::External(e) => e.new_game(),
        }
    }

    fn turn(
        &mut self,
        start: &Position,
        moves: &[Move],
        pos: &Position,
        tc: Tc,
        args: &ArenaArgs,
    ) -> Turn {
        let name = &self.name;
        match &mut self.kind {
            Kind::Local(s) => {
                let time = match tc {
                    Tc::Nodes(_) => None,
                    Tc::Movetime(ms) | Tc::Byoyomi(ms) => Some(Duration::from_millis(ms * 9 / 10)),
                };
                match s.choose(pos, time) {
                    Ok(mv) => Turn::Move(mv),
                    Err(e) => Turn::Loses(format!("{name}: search failed: {e:#}")),
                }
            }
            Kind::External(e) => {
                let uci = e.protocol() == Protocol::Uci;
                let (go, timeout) = match tc {
                    Tc::Nodes(n) => (format!("nodes {n}"), args.move_timeout),
                    Tc::Movetime(ms) => (format!("movetime {ms}"), ms + args.margin),
                    Tc::Byoyomi(ms) if uci => (format!("movetime {ms}"), ms + args.margin),
                    Tc::Byoyomi(ms) => (format!("btime 0 wtime 0 byoyomi {ms}"), ms + args.margin),
                };
                match e.go(start, moves, &go, Duration::from_millis(timeout)) {
                    Ok(Reply::Move(t)) => match pos.parse_usi(&t) {
                        Ok(mv) => Turn::Move(mv),
                        Err(err) => Turn::Loses(format!("illegal move by {name}: {err}")),
                    },
                    Ok(Reply::Resign) => Turn::Loses(format!("{name} resigns")),
                    Ok(Reply::Win) => Turn::Loses(format!(
                        "{name} declared a win (entering-king declarations are not supported)"
                    )),
                    Err(f) => Turn::Loses(format!("{name}: {f}")),
                }
            }
        }
    }

    fn game_over(&mut self, score: i32) {
        if let Kind::External(e) = &mut self.kind {
            e.game_over(score);
        }
    }
}

fn make_player(
    spec: &str,
    protocol: Protocol,
    options: &[String],
    variant: &Arc<Variant>,
    args: &ArenaArgs,
) -> Result<Player> {
    let kind = if spec == "mcts" {
        Kind::Local(Box::new(Searcher::new(variant, None, args.nodes, "cpu")?))
    } else if let Some(path) = spec.strip_prefix("model:") {
        Kind::Local(Box::new(Searcher::new(
            variant,
            Some(Path::new(path)),
            args.nodes,
            &args.device,
        )?))
    } else if let Some(cmd) = spec.strip_prefix("engine:") {
        if cmd.trim().is_empty() {
            bail!("--player {spec:?}: engine: needs a command");
        }
        let mut opts = Vec::new();
        for o in options {
            let (k, v) = o
                .split_once('=')
                .with_context(|| format!("engine option {o:?}: expected NAME=VALUE"))?;
            opts.push((k.trim().to_string(), v.trim().to_string()));
        }
        let mut e = ExternalEngine::new(cmd, protocol, opts, variant.clone());
        // A command that cannot even start is a configuration error, not a lost game.
        e.ensure_started()
            .map_err(|f| anyhow::anyhow!("--player {spec:?}: {f}"))?;
        Kind::External(Box::new(e))
    } else {
        bail!("--player {spec:?}: expected model:PATH, mcts or engine:CMD");
    };
    Ok(Player {
        name: spec.to_string(),
        kind,
    })
}

/// An opening: a start position and moves played from it.
#[derive(Clone)]
struct Opening {
    start: Position,
    moves: Vec<Move>,
}

fn read_openings(path: &Path, variant: &Arc<Variant>) -> Result<Vec<Opening>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let ctx = || format!("{}:{}", path.display(), i + 1);
        let (setup, moves) = match line.split_once("moves") {
            Some((s, m)) => (s.trim(), m),
            None => (line, ""),
        };
        let setup = setup.strip_prefix("sfen").unwrap_or(setup).trim();
        let start = if setup.is_empty() || setup == "startpos" {
            Position::start(variant.clone())
        } else {
            Position::from_sfen(variant, setup).with_context(ctx)?
        };
        let mut pos = start.clone();
        let mut mv = Vec::new();
        for tok in moves.split_whitespace() {
            let m = pos.parse_usi(tok).with_context(ctx)?;
            pos.make_move(m);
            mv.push(m);
        }
        if let Some(o) = pos.outcome() {
            bail!("{}: the opening is already over ({:?})", ctx(), o.reason);
        }
        out.push(Opening { start, moves: mv });
    }
    if out.is_empty() {
        bail!("{}: no openings", path.display());
    }
    Ok(out)
}

fn random_opening(variant: &Arc<Variant>, plies: u32, rng: &mut Rng) -> Opening {
    for _ in 0..1000 {
        let start = Position::start(variant.clone());
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for _ in 0..plies {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[(rng.next_u64() % legal.len() as u64) as usize];
            pos.make_move(mv);
            moves.push(mv);
        }
        if pos.outcome().is_none() {
            return Opening { start, moves };
        }
    }
    Opening {
        start: Position::start(variant.clone()),
        moves: Vec::new(),
    }
}

/// One finished game.
struct Game {
    /// Index of the player who moved first from the start position (0 = A).
    sente: usize,
    start_sfen: String,
    start: Position,
    moves: Vec<Move>,
    winner: Option<Color>,
    reason: String,
    /// How the game ended, for the CSA record.
    end: End,
}

#[derive(Clone, Copy, PartialEq)]
enum End {
    Rules(EndReason),
    Forfeit,
}

impl Game {
    /// Result for player A: 1, 0, -1.
    fn score_a(&self) -> i32 {
        match self.winner {
            None => 0,
            Some(c) => {
                let winner = if c == Color::Sente {
                    self.sente
                } else {
                    1 - self.sente
                };
                if winner == 0 {
                    1
                } else {
                    -1
                }
            }
        }
    }
}

fn play_game(
    players: &mut [Player; 2],
    sente: usize,
    opening: &Opening,
    tc: Tc,
    args: &ArenaArgs,
) -> Game {
    let start = opening.start.clone();
    let mut pos = start.clone();
    for &m in &opening.moves {
        pos.make_move(m);
    }
    let mut moves = opening.moves.clone();
    let by_color = |c: Color| if c == Color::Sente { sente } else { 1 - sente };
    let color_of = |idx: usize| {
        if idx == sente {
            Color::Sente
        } else {
            Color::Gote
        }
    };
    let mut result: Option<(Option<Color>, String, End)> = None;
    for idx in [sente, 1 - sente] {
        if let Err(f) = players[idx].new_game() {
            result = Some((
                Some(color_of(idx).flip()),
                format!("{}: {f}", players[idx].name),
                End::Forfeit,
            ));
            break;
        }
    }
    let (winner, reason, end) = match result {
        Some(r) => r,
        None => loop {
            if let Some(o) = pos.outcome() {
                break (o.winner, o.reason.name().to_string(), End::Rules(o.reason));
            }
            let side = pos.side_to_move();
            let idx = by_color(side);
            match players[idx].turn(&start, &moves, &pos, tc, args) {
                Turn::Move(mv) => {
                    pos.make_move(mv);
                    moves.push(mv);
                }
                Turn::Loses(why) => break (Some(side.flip()), why, End::Forfeit),
            }
        },
    };
    for (idx, p) in players.iter_mut().enumerate() {
        let c = color_of(idx);
        p.game_over(match winner {
            None => 0,
            Some(w) if w == c => 1,
            Some(_) => -1,
        });
    }
    Game {
        sente,
        start_sfen: start.to_sfen(),
        start,
        moves,
        winner,
        reason,
        end,
    }
}

/// Wins, draws, losses (for A).
#[derive(Clone, Copy, Default, Debug)]
struct Wdl {
    w: u64,
    d: u64,
    l: u64,
}

impl Wdl {
    fn add(&mut self, score: i32) {
        match score {
            1 => self.w += 1,
            0 => self.d += 1,
            _ => self.l += 1,
        }
    }
    fn n(&self) -> u64 {
        self.w + self.d + self.l
    }
}

/// SPRT lower and upper bounds for alpha = beta = 0.05.
fn sprt_bounds() -> (f64, f64) {
    let (alpha, beta) = (0.05f64, 0.05f64);
    ((beta / (1.0 - alpha)).ln(), ((1.0 - beta) / alpha).ln())
}

/// Log-likelihood ratio of H1 (elo1) against H0 (elo0), normal approximation.
fn sprt_llr(r: Wdl, elo0: f64, elo1: f64) -> f64 {
    let n = r.n() as f64;
    if n == 0.0 {
        return 0.0;
    }
    let s = (r.w as f64 + 0.5 * r.d as f64) / n;
    let (w, d, l) = (r.w as f64 + 0.5, r.d as f64 + 0.5, r.l as f64 + 0.5);
    let m = w + d + l;
    let mean = (w + 0.5 * d) / m;
    let var = (w * (1.0 - mean).powi(2) + d * (0.5 - mean).powi(2) + l * mean.powi(2)) / m;
    let score = |elo: f64| 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
    let (s0, s1) = (score(elo0), score(elo1));
    n * (s1 - s0) * (2.0 * s - s0 - s1) / (2.0 * var)
}

fn table_row(label: &str, r: Wdl) -> String {
    let e = elo_estimate(r.w, r.d, r.l);
    let fmt = |x: f64| {
        if x.is_finite() {
            // (+ 0.0 turns -0 into 0)
            format!("{:+.0}", x.round() + 0.0)
        } else if x > 0.0 {
            "+inf".into()
        } else {
            "-inf".into()
        }
    };
    format!(
        "{label:<8} {:>6} {:>5} {:>5} {:>5} {:>6.1}% {:>6}  [{}, {}]",
        r.n(),
        r.w,
        r.d,
        r.l,
        100.0 * e.score,
        fmt(e.elo),
        fmt(e.low),
        fmt(e.high)
    )
}

/// CSA name of a standard shogi piece.
fn csa_name(letter: char, promoted: bool) -> Option<&'static str> {
    Some(match (letter, promoted) {
        ('P', false) => "FU",
        ('L', false) => "KY",
        ('N', false) => "KE",
        ('S', false) => "GI",
        ('G', false) => "KI",
        ('B', false) => "KA",
        ('R', false) => "HI",
        ('K', false) => "OU",
        ('P', true) => "TO",
        ('L', true) => "NY",
        ('N', true) => "NK",
        ('S', true) => "NG",
        ('B', true) => "UM",
        ('R', true) => "RY",
        _ => return None,
    })
}

/// The game as a CSA record (standard shogi only: None for other variants).
fn to_csa(g: &Game, names: [&str; 2]) -> Option<String> {
    let v = g.start.variant().clone();
    if v.name != "shogi" || v.files != 9 || v.ranks != 9 {
        return None;
    }
    let kname = |k: rules::Kind| {
        let info = &v.kinds[k as usize];
        csa_name(info.letter, info.promoted)
    };
    let sign = |c: Color| if c == Color::Sente { '+' } else { '-' };
    let mut s = String::from("V2.2\n");
    s.push_str(&format!("N+{}\nN-{}\n", names[g.sente], names[1 - g.sente]));
    s.push_str(&format!("'sfen {}\n", g.start_sfen));
    let pos0 = &g.start;
    for y in 0..9 {
        s.push_str(&format!("P{}", y + 1));
        for x in 0..9 {
            let p = pos0.piece_at(v.square(x, y));
            if p.is_empty() {
                s.push_str(" * ");
            } else {
                s.push(sign(p.color()));
                s.push_str(kname(p.kind())?);
            }
        }
        s.push('\n');
    }
    for c in Color::ALL {
        s.push_str(&format!("P{}", sign(c)));
        for &k in &v.hand_kinds {
            for _ in 0..pos0.hand_count(c, k) {
                s.push_str("00");
                s.push_str(kname(k)?);
            }
        }
        s.push('\n');
    }
    s.push(sign(pos0.side_to_move()));
    s.push('\n');
    let mut pos = pos0.clone();
    let sq = |q: usize| format!("{}{}", v.file_number(q), v.coords(q).1 + 1);
    for &mv in &g.moves {
        let side = sign(pos.side_to_move());
        let line = match mv {
            Move::Normal { from, to, promote } => {
                let k = pos.piece_at(from as usize).kind();
                let k = if promote {
                    v.kinds[k as usize].promotes_to?
                } else {
                    k
                };
                format!(
                    "{side}{}{}{}",
                    sq(from as usize),
                    sq(to as usize),
                    kname(k)?
                )
            }
            Move::Drop { kind, to } => format!("{side}00{}{}", sq(to as usize), kname(kind)?),
        };
        s.push_str(&line);
        s.push('\n');
        pos.make_move(mv);
    }
    let end = match g.end {
        End::Rules(EndReason::Checkmate) => "%TSUMI",
        End::Rules(EndReason::Repetition) => "%SENNICHITE",
        End::Rules(EndReason::MoveLimit) => "%JISHOGI",
        End::Rules(_) => "%CHUDAN",
        End::Forfeit if g.reason.contains("illegal move") => "%ILLEGAL_MOVE",
        End::Forfeit if g.reason.contains("timeout") => "%TIME_UP",
        End::Forfeit if g.reason.contains("resigns") => "%TORYO",
        End::Forfeit => "%CHUDAN",
    };
    s.push_str(end);
    s.push('\n');
    s.push_str(&format!("'result {} {}\n", result_text(g.winner), g.reason));
    Some(s)
}

fn result_text(w: Option<Color>) -> &'static str {
    match w {
        Some(Color::Sente) => "1-0",
        Some(Color::Gote) => "0-1",
        None => "1/2-1/2",
    }
}

/// Game records under --out.
struct Recorder {
    dir: PathBuf,
    games: std::fs::File,
}

impl Recorder {
    fn open(dir: &Path) -> Result<Recorder> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join("games.txt");
        let games =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Recorder {
            dir: dir.to_path_buf(),
            games,
        })
    }

    fn save(&mut self, index: u64, g: &Game, names: [&str; 2]) -> Result<()> {
        let v = g.start.variant().clone();
        let moves: Vec<String> = g.moves.iter().map(|&m| v.move_to_usi(m)).collect();
        let r = match g.winner {
            Some(Color::Sente) => 1,
            Some(Color::Gote) => -1,
            None => 0,
        };
        writeln!(
            self.games,
            "sfen {} moves {} result {r} sente {} gote {} reason {}",
            g.start_sfen,
            moves.join(" "),
            names[g.sente],
            names[1 - g.sente],
            g.reason.replace('\n', " ")
        )?;
        self.games.flush()?;
        if let Some(csa) = to_csa(g, names) {
            let p = self.dir.join(format!("game-{index:04}.csa"));
            std::fs::write(&p, csa).with_context(|| format!("writing {}", p.display()))?;
        }
        Ok(())
    }
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
    let tc = match (args.movetime, args.byoyomi) {
        (Some(ms), _) => Tc::Movetime(ms),
        (_, Some(ms)) => Tc::Byoyomi(ms),
        _ => Tc::Nodes(args.nodes.max(1)),
    };
    let openings = match &args.openings {
        Some(p) => Some(read_openings(p, &variant)?),
        None => None,
    };
    let mut players = [
        make_player(
            &args.players[0],
            args.protocol_a,
            &args.options_a,
            &variant,
            &args,
        )?,
        make_player(
            &args.players[1],
            args.protocol_b,
            &args.options_b,
            &variant,
            &args,
        )?,
    ];
    let names = [args.players[0].as_str(), args.players[1].as_str()];
    let mut recorder = match &args.out {
        Some(d) => Some(Recorder::open(d)?),
        None => None,
    };
    let rule = variant.match_rule;
    println!(
        "arena: {} | A = {} | B = {} | {} | {}",
        variant.name,
        names[0],
        names[1],
        match tc {
            Tc::Nodes(n) => format!("nodes {n}"),
            Tc::Movetime(ms) => format!("movetime {ms} ms"),
            Tc::Byoyomi(ms) => format!("byoyomi {ms} ms"),
        },
        match rule {
            MatchRule::Single => format!("{} games", args.games),
            MatchRule::ConsecutiveWins(n) => format!(
                "{} matches of hands, {n} consecutive wins (drawn after {} hands)",
                args.games, args.max_hands
            ),
        }
    );
    let mut rng = Rng(args.seed);
    let mut opening = None;
    let mut hands = Wdl::default();
    let mut matches = Wdl::default();
    let mut played = 0u64;
    let mut sprt_state = None;
    let (lo, hi) = sprt_bounds();
    for m in 0..args.games as u64 {
        // One match: a single game, or hands until a streak of n wins.
        let (need, max_hands) = match rule {
            MatchRule::Single => (1, 1),
            MatchRule::ConsecutiveWins(n) => (n.max(1), args.max_hands.max(1)),
        };
        let mut streak: (Option<usize>, u32) = (None, 0);
        let mut match_score = 0;
        for h in 0..max_hands as u64 {
            if played.is_multiple_of(2) || opening.is_none() {
                opening = Some(match &openings {
                    Some(list) => list[(played / 2) as usize % list.len()].clone(),
                    None => random_opening(&variant, args.random_plies, &mut rng),
                });
            }
            let sente = ((m + h) % 2) as usize;
            let g = play_game(
                &mut players,
                sente,
                opening.as_ref().expect("set"),
                tc,
                &args,
            );
            played += 1;
            let s = g.score_a();
            hands.add(s);
            let label = match rule {
                MatchRule::Single => format!("game {}", m + 1),
                MatchRule::ConsecutiveWins(_) => format!("match {} hand {}", m + 1, h + 1),
            };
            println!(
                "{label}: {} {} (sente) vs {} {} (gote): {} by {}, {} plies",
                ["A", "B"][sente],
                names[sente],
                ["A", "B"][1 - sente],
                names[1 - sente],
                match s {
                    1 => "A wins",
                    -1 => "B wins",
                    _ => "draw",
                },
                g.reason,
                g.moves.len()
            );
            if let Some(r) = recorder.as_mut() {
                r.save(played, &g, names)?;
            }
            let winner = match s {
                1 => Some(0),
                -1 => Some(1),
                _ => None,
            };
            streak = match (winner, streak) {
                (None, _) => (None, 0),
                (Some(w), (Some(p), k)) if w == p => (Some(w), k + 1),
                (Some(w), _) => (Some(w), 1),
            };
            if streak.1 >= need {
                match_score = if streak.0 == Some(0) { 1 } else { -1 };
                break;
            }
        }
        matches.add(match_score);
        if let MatchRule::ConsecutiveWins(_) = rule {
            println!(
                "match {}: {}",
                m + 1,
                match match_score {
                    1 => "A wins",
                    -1 => "B wins",
                    _ => "drawn",
                }
            );
        }
        if let Some((e0, e1)) = args.sprt {
            let llr = sprt_llr(matches, e0, e1);
            if llr >= hi {
                sprt_state = Some((llr, "H1 accepted (A is at least elo1 stronger)"));
                break;
            } else if llr <= lo {
                sprt_state = Some((llr, "H0 accepted (A is at most elo0 stronger)"));
                break;
            }
            sprt_state = Some((llr, "inconclusive"));
        }
    }
    println!();
    println!("results for A = {} against B = {}", names[0], names[1]);
    println!(
        "{:<8} {:>6} {:>5} {:>5} {:>5} {:>7} {:>6}  95% interval",
        "", "n", "W", "D", "L", "score", "Elo"
    );
    match rule {
        MatchRule::Single => println!("{}", table_row("games", hands)),
        MatchRule::ConsecutiveWins(_) => {
            println!("{}", table_row("hands", hands));
            println!("{}", table_row("matches", matches));
        }
    }
    if let (Some((e0, e1)), Some((llr, verdict))) = (args.sprt, sprt_state) {
        println!(
            "sprt elo0 {e0} elo1 {e1} (alpha 0.05, beta 0.05): LLR {llr:.3}, bounds [{lo:.3}, \
             {hi:.3}]: {verdict}"
        );
    }
    for p in &players {
        if let Kind::External(e) = &p.kind {
            if let Some(id) = &e.id_name {
                println!("{}: id name {id}", p.name);
            }
            if e.starts > 1 {
                println!("{}: restarted {} times", p.name, e.starts - 1);
            }
        }
    }
    if let Some(d) = &args.out {
        println!("games written to {}", d.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprt_basics() {
        let (lo, hi) = sprt_bounds();
        assert!((lo + 2.944).abs() < 1e-3 && (hi - 2.944).abs() < 1e-3);
        let even = Wdl { w: 50, d: 0, l: 50 };
        assert!(sprt_llr(even, 0.0, 10.0) < 0.0);
        let strong = Wdl {
            w: 300,
            d: 0,
            l: 100,
        };
        assert!(sprt_llr(strong, 0.0, 10.0) > hi);
        // One win is far from conclusive.
        assert!(sprt_llr(Wdl { w: 1, d: 0, l: 0 }, 0.0, 10.0) < 1.0);
        assert!(parse_sprt("0,10").is_ok());
        assert!(parse_sprt("10,0").is_err());
        assert!(parse_sprt("x").is_err());
    }

    #[test]
    fn csa_of_a_short_game() {
        let v = Arc::new(Variant::builtin("shogi").unwrap());
        let start = Position::start(v.clone());
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for t in ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"] {
            let m = pos.parse_usi(t).unwrap();
            pos.make_move(m);
            moves.push(m);
        }
        let g = Game {
            sente: 0,
            start_sfen: start.to_sfen(),
            start,
            moves,
            winner: Some(Color::Sente),
            reason: "B resigns".into(),
            end: End::Forfeit,
        };
        let csa = to_csa(&g, ["a", "b"]).unwrap();
        assert!(csa.contains("P1-KY-KE-GI-KI-OU-KI-GI-KE-KY\n"), "{csa}");
        assert!(csa.contains("P2 * -HI *  *  *  *  * -KA * \n"), "{csa}");
        assert!(
            csa.contains("+7776FU\n-3334FU\n+8822UM\n-3122GI\n+0045KA\n%TORYO\n"),
            "{csa}"
        );
    }
}
