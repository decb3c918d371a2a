//! The training loop: self-play -> train -> evaluate -> next generation, in one run directory
//! that is written only by atomic renames, so a killed run resumes where it stopped.
//!
//! ```text
//! runs/<name>/config.toml           frozen run config      variant.toml  frozen variant spec
//! runs/<name>/state.json            loop state (generation, best, Elo history)
//! runs/<name>/models/<gen>.safetensors + <gen>.json
//! runs/<name>/samples/<gen>/*.zst   games played by generation <gen>
//! runs/<name>/checkpoint/           trainer: weights, optimizer, counters, RNG
//! runs/<name>/tb/                   TensorBoard events
//! runs/<name>/games/                match games (SFEN + USI moves + result)
//! runs/<name>/log.txt               one line per event
//! ```

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use model::{
    has_checkpoint, load_checkpoint, load_model, parse_device, save_checkpoint, save_model,
    shape_of, write_atomic, Batch, ModelConfig, ModelMeta, NetEvaluator, TrainConfig, Trainer,
};
use rules::{Variant, VariantSpec};
use search::{Evaluator, SearchConfig, UniformEvaluator};
use selfplay::{
    elo_estimate, list_shards, play_games, read_shard, write_shard, Encoder, GameRecord, Mode,
    PlayStats, ReplayWindow, SelfPlayConfig, ShardHeader,
};
use serde::{Deserialize, Serialize};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// A run config (`configs/runs/*.toml`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Run name: the directory under `runs/` (default: the config file stem).
    #[serde(default)]
    pub name: String,
    /// Variant: a file stem of configs/variants, a built-in, or a path.
    pub variant: String,
    /// Network shape: a file stem of configs/models, a built-in, or a path.
    pub model: String,
    /// Seed of everything random in the run.
    #[serde(default)]
    pub seed: u64,
    /// cpu, cuda, cuda:N or auto.
    #[serde(default = "default_device")]
    pub device: String,
    /// Generations to train (the loop stops after this many new networks).
    pub generations: u64,
    /// Self-play games per generation.
    pub games_per_generation: usize,
    /// Training steps per generation.
    pub steps_per_generation: u64,
    /// Self-play.
    #[serde(default)]
    pub selfplay: SelfPlayConfig,
    /// Search used by self-play (simulations come from the playout caps).
    #[serde(default)]
    pub search: SearchConfig,
    /// Training hyper-parameters.
    #[serde(default)]
    pub training: TrainConfig,
    /// Replay window.
    #[serde(default)]
    pub replay: ReplayConfig,
    /// Evaluation matches after each generation.
    #[serde(default)]
    pub evaluation: EvalConfig,
}

fn default_device() -> String {
    "auto".into()
}

/// The replay window: the most recent samples, growing with the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayConfig {
    /// Window size while the run is young (samples).
    pub min_window: usize,
    /// Largest window (samples).
    pub max_window: usize,
    /// Above `min_window`, the window grows by this fraction of every new sample.
    pub growth: f64,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            min_window: 20_000,
            max_window: 500_000,
            growth: 0.5,
        }
    }
}

impl ReplayConfig {
    /// Window size after `total` samples were produced.
    pub fn window(&self, total: u64) -> usize {
        let total = total as f64;
        let min = self.min_window as f64;
        let w = if total <= min {
            min
        } else {
            min + self.growth * (total - min)
        };
        (w as usize).min(self.max_window)
    }
}

/// Evaluation matches.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Games per match (0 disables evaluation).
    pub games: usize,
    /// Simulations per move in matches.
    pub simulations: u32,
    /// Play the previous best network.
    pub vs_previous: bool,
    /// Play generation 0.
    pub vs_first: bool,
    /// Play a network-free MCTS (uniform policy, value 0; terminal positions by the rules).
    pub vs_mcts: bool,
    /// Gating: a new network becomes the self-play network only if it scores at least
    /// `gating_score` against the previous best.
    pub gating: bool,
    /// Score needed to pass the gate.
    pub gating_score: f64,
    /// Games played in lockstep.
    pub parallel_games: usize,
    /// Random plies before each pair of games (same opening, colours swapped).
    pub opening_plies: u32,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            games: 40,
            simulations: 32,
            vs_previous: true,
            vs_first: true,
            vs_mcts: false,
            gating: false,
            gating_score: 0.55,
            parallel_games: 40,
            opening_plies: 4,
        }
    }
}

impl RunConfig {
    /// Parses and checks a run config; errors name the file and the key.
    pub fn from_toml(text: &str, file: &str) -> Result<RunConfig> {
        let mut c: RunConfig =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{file}: {}", e.message()))?;
        if c.name.is_empty() {
            c.name = Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "run".into());
        }
        let check =
            |r: std::result::Result<(), String>| r.map_err(|e| anyhow::anyhow!("{file}: {e}"));
        check(c.selfplay.validate())?;
        check(c.search.validate())?;
        c.training.validate(file)?;
        if c.generations == 0 {
            bail!("{file}: generations: must be at least 1");
        }
        if c.games_per_generation == 0 {
            bail!("{file}: games_per_generation: must be at least 1");
        }
        if c.replay.min_window == 0 || c.replay.max_window < c.replay.min_window {
            bail!("{file}: replay: need 0 < min_window <= max_window");
        }
        if c.evaluation.gating && !c.evaluation.vs_previous {
            bail!("{file}: evaluation.gating: needs vs_previous = true");
        }
        if c.evaluation.games > 0 && c.evaluation.simulations == 0 {
            bail!("{file}: evaluation.simulations: must be at least 1");
        }
        if !c
            .name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
        {
            bail!("{file}: name: use letters, digits, '-', '_' or '.'");
        }
        Ok(c)
    }
}

/// Loop state, written atomically after every phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunState {
    /// Newest network generation (models/<generation>.safetensors exists).
    pub generation: u64,
    /// Generation used for self-play.
    pub best: u64,
    /// Samples produced so far.
    pub total_samples: u64,
    /// Games produced so far.
    pub total_games: u64,
    /// Sample directories already added to the totals.
    #[serde(default)]
    pub counted_generations: u64,
    /// One line per evaluated generation.
    #[serde(default)]
    pub history: Vec<GenerationReport>,
}

/// What one generation measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GenerationReport {
    /// Generation evaluated.
    pub generation: u64,
    /// Score, games and Elo against the previous best.
    pub vs_previous: Option<MatchReport>,
    /// Against generation 0.
    pub vs_first: Option<MatchReport>,
    /// Against the network-free MCTS.
    pub vs_mcts: Option<MatchReport>,
    /// Whether it became the self-play network.
    pub promoted: bool,
}

/// A match summary from the new network's point of view.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MatchReport {
    /// Opponent.
    pub opponent: String,
    /// Wins.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// Losses.
    pub losses: u64,
    /// Mean score.
    pub score: f64,
    /// Elo difference.
    pub elo: f64,
    /// 95% interval.
    pub elo_low: f64,
    /// 95% interval.
    pub elo_high: f64,
}

/// Scalars for TensorBoard, behind a small trait (tensorboard-rs is unmaintained: keep one
/// writer per run directory for the whole process).
pub trait Metrics: Send + Sync {
    /// Records a scalar.
    fn scalar(&mut self, tag: &str, value: f64, step: u64);
    /// Writes buffered events.
    fn flush(&mut self);
}

/// TensorBoard event files through tensorboard-rs.
pub struct TensorBoard(tensorboard_rs::summary_writer::SummaryWriter);

impl Metrics for TensorBoard {
    fn scalar(&mut self, tag: &str, value: f64, step: u64) {
        if value.is_finite() {
            self.0.add_scalar(tag, value as f32, step as usize);
        }
    }
    fn flush(&mut self) {
        self.0.flush();
    }
}

/// An open run directory.
pub struct Run {
    /// The directory.
    pub dir: PathBuf,
    /// Frozen config.
    pub cfg: RunConfig,
    /// The variant.
    pub variant: Arc<Variant>,
    /// Its encoder.
    pub encoder: Encoder,
    /// Network shape.
    pub model: ModelConfig,
    /// Loop state.
    pub state: RunState,
    /// Device for networks.
    pub device: model::tch::Device,
    tb: Box<dyn Metrics>,
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if !std::io::stderr().is_terminal() {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

fn model_path(dir: &Path, gen: u64) -> PathBuf {
    dir.join("models").join(format!("{gen:06}.safetensors"))
}

fn samples_dir(dir: &Path, gen: u64) -> PathBuf {
    dir.join("samples").join(format!("{gen:06}"))
}

impl Run {
    /// Opens `runs_root/<name>` for `config_path`, creating it, or resuming it when it exists
    /// (then the frozen config inside is used; a different config file is refused unless
    /// identical).
    pub fn open(config_path: &Path, runs_root: &Path, resume_only: bool) -> Result<Run> {
        let text = std::fs::read_to_string(config_path)
            .with_context(|| format!("reading {}", config_path.display()))?;
        let cfg = RunConfig::from_toml(&text, &config_path.display().to_string())?;
        let dir = runs_root.join(&cfg.name);
        if dir.join("config.toml").exists() {
            let frozen = std::fs::read_to_string(dir.join("config.toml"))?;
            if frozen != text {
                eprintln!(
                    "note: {} exists; resuming with its frozen config.toml (edit that file to change a resumed run)",
                    dir.display()
                );
            }
            return Run::resume(&dir);
        }
        if resume_only {
            bail!("--resume: {} does not exist", dir.display());
        }
        let variant = crate::load_variant(&cfg.variant)?;
        let model = ModelConfig::load(&cfg.model)?;
        std::fs::create_dir_all(dir.join("models"))?;
        let vspec = toml::to_string(&variant.spec).context("serialising the variant")?;
        write_atomic(&dir.join("variant.toml"), vspec.as_bytes())?;
        write_atomic(
            &dir.join("model.toml"),
            toml::to_string(&model)
                .context("serialising the model")?
                .as_bytes(),
        )?;
        // The config goes last: its presence marks a complete run directory.
        let device = parse_device(&cfg.device).map_err(anyhow::Error::msg)?;
        let encoder = Encoder::new(variant.clone());
        let run = Run {
            tb: open_tb(&dir),
            dir,
            cfg,
            variant,
            encoder,
            model,
            state: RunState::default(),
            device,
        };
        if !model_path(&run.dir, 0).exists() {
            let t = run.new_trainer();
            run.save_generation(&t, 0)?;
        }
        run.save_state()?;
        write_atomic(&run.dir.join("config.toml"), text.as_bytes())?;
        run.log(&format!(
            "new run {}: {} with {} ({} planes, policy {})",
            run.cfg.name,
            run.variant.name,
            run.model.name,
            run.encoder.num_planes(),
            run.encoder.policy_len()
        ));
        Ok(run)
    }

    /// Resumes the run in `dir` from its frozen files.
    pub fn resume(dir: &Path) -> Result<Run> {
        let cfg_path = dir.join("config.toml");
        let text = std::fs::read_to_string(&cfg_path)
            .with_context(|| format!("reading {}", cfg_path.display()))?;
        let cfg = RunConfig::from_toml(&text, &cfg_path.display().to_string())?;
        let vtext = std::fs::read_to_string(dir.join("variant.toml"))?;
        let spec = VariantSpec::from_toml(&vtext, &dir.join("variant.toml").display().to_string())?;
        let variant = Arc::new(Variant::compile_named(
            spec,
            &dir.join("variant.toml").display().to_string(),
        )?);
        let model = ModelConfig::load(&dir.join("model.toml").display().to_string())?;
        let state: RunState =
            serde_json::from_str(&std::fs::read_to_string(dir.join("state.json"))?)
                .with_context(|| format!("{}: bad state", dir.join("state.json").display()))?;
        let device = parse_device(&cfg.device).map_err(anyhow::Error::msg)?;
        let encoder = Encoder::new(variant.clone());
        Ok(Run {
            tb: open_tb(dir),
            dir: dir.to_path_buf(),
            cfg,
            variant,
            encoder,
            model,
            state,
            device,
        })
    }

    fn new_trainer(&self) -> Trainer {
        Trainer::new(
            &self.model,
            shape_of(&self.encoder),
            self.cfg.training.clone(),
            self.device,
            self.cfg.seed,
        )
    }

    fn meta(&self) -> ModelMeta {
        ModelMeta::new(
            &self.model,
            shape_of(&self.encoder),
            self.encoder.spec(),
            self.variant.spec.clone(),
        )
    }

    fn save_generation(&self, t: &Trainer, gen: u64) -> Result<()> {
        let mut meta = self.meta();
        meta.step = t.step;
        meta.generation = Some(gen);
        save_model(&t.vs, &meta, &model_path(&self.dir, gen))?;
        Ok(())
    }

    fn save_state(&self) -> Result<()> {
        write_atomic(
            &self.dir.join("state.json"),
            &serde_json::to_vec_pretty(&self.state)?,
        )?;
        Ok(())
    }

    /// Appends a line to log.txt and prints it.
    pub fn log(&self, line: &str) {
        let stamp = format!(
            "[{:>8.1}s] {line}",
            START.get_or_init(Instant::now).elapsed().as_secs_f64()
        );
        println!("{stamp}");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("log.txt"))
        {
            let _ = writeln!(f, "{stamp}");
        }
    }

    fn evaluator(&self, gen: u64) -> Result<NetEvaluator> {
        let (vs, net, meta) = load_model(&model_path(&self.dir, gen), self.device)?;
        model::check_encoding(&meta, &self.encoder.spec(), &model_path(&self.dir, gen))?;
        Ok(NetEvaluator::new(vs, net))
    }

    /// Games already stored for generation `gen`.
    pub fn games_stored(&self, gen: u64) -> Result<usize> {
        Ok(self.count_samples(gen)?.0)
    }

    /// (games, samples) stored for generation `gen`.
    fn count_samples(&self, gen: u64) -> Result<(usize, usize)> {
        let (mut games, mut samples) = (0, 0);
        for s in list_shards(&samples_dir(&self.dir, gen)) {
            let (_, g) = read_shard(&s)?;
            games += g.len();
            samples += g.iter().map(|g| g.num_samples()).sum::<usize>();
        }
        Ok((games, samples))
    }

    /// Self-play with network `net` until samples/<gen> holds `target` games. Writes only sample
    /// shards (state.json belongs to the training side), so it can run as its own process.
    pub fn selfplay_phase(&mut self, gen: u64, net: u64, target: usize) -> Result<PlayStats> {
        let have = self.games_stored(gen)?;
        if have >= target {
            return Ok(PlayStats::default());
        }
        let todo = target - have;
        let dir = samples_dir(&self.dir, gen);
        let header = ShardHeader {
            version: selfplay::samples::SHARD_VERSION,
            variant: self.variant.name.clone(),
            policy_len: self.encoder.policy_len(),
            generation: net,
        };
        let pb = progress(todo as u64, "self-play");
        let threads = self.cfg.selfplay.threads.max(1).min(todo);
        let per_thread: Vec<usize> = (0..threads)
            .map(|i| todo / threads + (i < todo % threads) as usize)
            .collect();
        let seed = self.cfg.seed ^ gen.wrapping_mul(0x9E37_79B9) ^ (have as u64) << 20;
        let stats = std::sync::Mutex::new(PlayStats::default());
        let errors = std::sync::Mutex::new(Vec::<anyhow::Error>::new());
        std::thread::scope(|scope| {
            for (t, &n) in per_thread.iter().enumerate() {
                let (dir, header, pb, stats, errors) = (&dir, &header, &pb, &stats, &errors);
                let run = &*self;
                let work = move || {
                    let r = (|| -> Result<PlayStats> {
                        let mut ev = run.evaluator(net)?;
                        let mut seq = 0usize;
                        let mut write_err = None;
                        let mut on_game = |_: usize, g: GameRecord, _: &PlayStats| {
                            // One shard per finished game: nothing finished is ever lost.
                            let name = format!("{have:06}-{t:02}-{seq:06}.zst");
                            seq += 1;
                            if let Err(e) =
                                write_shard(&dir.join(name), header, std::slice::from_ref(&g))
                            {
                                write_err = Some(e);
                            }
                            pb.inc(1);
                        };
                        let mut evs: [&mut dyn Evaluator; 1] = [&mut ev];
                        let s = play_games(
                            &run.encoder,
                            &mut evs,
                            std::slice::from_ref(&run.cfg.search),
                            &run.cfg.selfplay,
                            Mode::SelfPlay,
                            n,
                            seed.wrapping_add(t as u64 * 0x1234_5678_9ABC),
                            &mut on_game,
                        )
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                        if let Some(e) = write_err {
                            return Err(e.into());
                        }
                        Ok(s)
                    })();
                    match r {
                        Ok(s) => stats.lock().expect("stats").merge(&s),
                        Err(e) => errors.lock().expect("errors").push(e),
                    }
                };
                // One thread: stay on this one (libtorch keeps per-thread pools warm).
                if threads == 1 {
                    work();
                } else {
                    scope.spawn(work);
                }
            }
        });
        pb.finish_and_clear();
        if let Some(e) = errors.into_inner().expect("errors").into_iter().next() {
            return Err(e);
        }
        let stats = stats.into_inner().expect("stats");
        let evals_per_s = stats.evals as f64 / stats.seconds.max(1e-9);
        self.log(&format!(
            "gen {gen} self-play: {} games, {:.1} plies/game, {} samples, sente/gote/draw {}/{}/{}, resigned {}, false resigns {}/{}, {:.2} games/s, {:.0} evals/s in batches of {:.1} ({:.0}% in the network)",
            stats.games,
            stats.plies as f64 / stats.games.max(1) as f64,
            stats.samples,
            stats.sente_wins,
            stats.gote_wins,
            stats.draws,
            stats.resigned,
            stats.false_resigns,
            stats.no_resign_games,
            stats.games as f64 / stats.seconds.max(1e-9),
            evals_per_s,
            stats.evals as f64 / stats.batches.max(1) as f64,
            100.0 * stats.eval_seconds / stats.seconds.max(1e-9)
        ));
        let g = gen;
        let n = stats.games.max(1) as f64;
        self.tb
            .scalar("selfplay/game_length", stats.plies as f64 / n, g);
        self.tb
            .scalar("selfplay/draw_rate", stats.draws as f64 / n, g);
        self.tb
            .scalar("selfplay/resign_rate", stats.resigned as f64 / n, g);
        self.tb
            .scalar("selfplay/sente_win_rate", stats.sente_wins as f64 / n, g);
        if stats.no_resign_games > 0 {
            self.tb.scalar(
                "selfplay/false_resign_rate",
                stats.false_resigns as f64 / stats.no_resign_games as f64,
                g,
            );
        }
        self.tb.scalar(
            "speed/games_per_s",
            stats.games as f64 / stats.seconds.max(1e-9),
            g,
        );
        self.tb.scalar("speed/evals_per_s", evals_per_s, g);
        self.tb.flush();
        Ok(stats)
    }

    /// Loads the replay window: the newest samples up to the window size.
    fn load_window(&self, upto_gen: u64) -> Result<ReplayWindow> {
        let window = self.cfg.replay.window(self.state.total_samples);
        let mut games: Vec<GameRecord> = Vec::new();
        let mut samples = 0usize;
        for gen in (0..=upto_gen).rev() {
            let mut shards = list_shards(&samples_dir(&self.dir, gen));
            shards.reverse();
            for s in shards {
                for g in read_shard(&s)?.1.into_iter().rev() {
                    samples += g.num_samples();
                    games.push(g);
                }
                if samples >= window {
                    break;
                }
            }
            if samples >= window {
                break;
            }
        }
        let mut w = ReplayWindow::new(self.encoder.clone());
        for g in games.iter().rev() {
            w.add_game(g)
                .map_err(|e| anyhow::anyhow!("bad game record: {e}"))?;
        }
        w.trim(window);
        Ok(w)
    }

    /// Trains `steps_per_generation` steps after self-play of `gen` and publishes gen + 1.
    pub fn train_phase(&mut self, gen: u64) -> Result<()> {
        if self.state.counted_generations <= gen {
            let (games, samples) = self.count_samples(gen)?;
            self.state.total_games += games as u64;
            self.state.total_samples += samples as u64;
            self.state.counted_generations = gen + 1;
            self.save_state()?;
        }
        let ckpt = self.dir.join("checkpoint");
        let (mut t, mut done) = if has_checkpoint(&ckpt) {
            let (t, st) = load_checkpoint(&ckpt, self.device, Some(self.cfg.training.clone()))?;
            let ck_gen = st
                .extra
                .get("generation")
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            let ck_done = st
                .extra
                .get("steps_done")
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            // A checkpoint of this generation: continue it; of an earlier one: start the steps.
            let done = if ck_gen == gen { ck_done } else { 0 };
            (t, done)
        } else {
            let (vs_src, _, _) = load_model(&model_path(&self.dir, 0), self.device)?;
            let mut t = self.new_trainer();
            model::tch::no_grad(|| t.vs.copy(&vs_src)).context("initialising from generation 0")?;
            (t, 0)
        };
        let steps = self.cfg.steps_per_generation;
        if done < steps {
            let window = self.load_window(gen)?;
            if window.is_empty() {
                bail!("no training samples for generation {gen}");
            }
            let bs = self.cfg.training.batch_size;
            let shape = shape_of(&self.encoder);
            let pb = progress(steps, "training");
            pb.set_position(done);
            let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
            let t0 = Instant::now();
            let mut sum = [0.0f64; 3];
            let mut n = 0u64;
            let checkpoint_every = (steps / 4).max(50);
            while done < steps {
                let mut rng = t.rng;
                window.sample_batch(bs, |k| rng.below(k), &mut x, &mut p, &mut z);
                t.rng = rng;
                let b = Batch::from_slices(shape, &x, &p, &z, self.device)?;
                let s = t.train_step(&b);
                done += 1;
                pb.inc(1);
                if !s.skipped {
                    sum[0] += s.loss;
                    sum[1] += s.policy_loss;
                    sum[2] += s.value_loss;
                    n += 1;
                    self.tb.scalar("train/loss", s.loss, t.step);
                    self.tb.scalar("train/policy_loss", s.policy_loss, t.step);
                    self.tb.scalar("train/value_loss", s.value_loss, t.step);
                    self.tb.scalar("train/grad_norm", s.grad_norm, t.step);
                    self.tb.scalar("train/lr", s.lr, t.step);
                }
                if done % checkpoint_every == 0 || done == steps {
                    save_checkpoint(
                        &ckpt,
                        &t,
                        &self.meta(),
                        serde_json::json!({"generation": gen, "steps_done": done}),
                    )?;
                }
            }
            pb.finish_and_clear();
            let secs = t0.elapsed().as_secs_f64();
            let n = n.max(1) as f64;
            // Policy entropy and value accuracy on a fresh batch of the window.
            let mut rng = t.rng;
            window.sample_batch(bs, |k| rng.below(k), &mut x, &mut p, &mut z);
            let (entropy, acc) = policy_entropy_and_value_accuracy(&t, shape, &x, &z, self.device)?;
            self.tb.scalar("train/policy_entropy", entropy, gen + 1);
            self.tb.scalar("train/value_accuracy", acc, gen + 1);
            self.tb.scalar(
                "speed/train_samples_per_s",
                (steps as f64 * bs as f64) / secs.max(1e-9),
                gen + 1,
            );
            self.log(&format!(
                "gen {gen} training: {steps} steps on a window of {} samples: loss {:.3} (policy {:.3}, value {:.3}), policy entropy {:.2}, value accuracy {:.0}%, {:.0} samples/s",
                window.len(),
                sum[0] / n,
                sum[1] / n,
                sum[2] / n,
                entropy,
                acc * 100.0,
                steps as f64 * bs as f64 / secs.max(1e-9)
            ));
        }
        self.save_generation(&t, gen + 1)?;
        self.state.generation = gen + 1;
        self.save_state()?;
        self.tb.flush();
        Ok(())
    }

    /// Plays `games` games between generation `gen` and `opponent` (None: network-free MCTS).
    fn play_match(&self, gen: u64, opponent: Option<u64>, label: &str) -> Result<MatchReport> {
        let ec = &self.cfg.evaluation;
        let mut a = self.evaluator(gen)?;
        let mut mcts = UniformEvaluator {
            input_len: self.encoder.input_len(),
            policy_len: self.encoder.policy_len(),
        };
        let mut b_net = match opponent {
            Some(o) => Some(self.evaluator(o)?),
            None => None,
        };
        let b: &mut dyn Evaluator = match b_net.as_mut() {
            Some(n) => n,
            None => &mut mcts,
        };
        let search = SearchConfig {
            simulations: ec.simulations,
            ..self.cfg.search.clone()
        };
        let cfg = SelfPlayConfig {
            parallel_games: ec.parallel_games.max(1),
            max_plies: self.cfg.selfplay.max_plies,
            resign_consecutive: 0,
            ..self.cfg.selfplay.clone()
        };
        let pb = progress(ec.games as u64, label);
        let mut records = Vec::new();
        let mut evs: [&mut dyn Evaluator; 2] = [&mut a, b];
        play_games(
            &self.encoder,
            &mut evs,
            &[search.clone(), search],
            &cfg,
            Mode::Match {
                first: rules::Color::Sente,
                opening_plies: ec.opening_plies,
            },
            ec.games,
            self.cfg.seed ^ gen << 8 ^ 0xE7A1,
            &mut |i, g, _| {
                pb.inc(1);
                records.push((i, g));
            },
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        pb.finish_and_clear();
        // Game i: the new network is sente when i is even.
        records.sort_by_key(|(i, _)| *i);
        let (mut w, mut d, mut l) = (0, 0, 0);
        let mut text = String::new();
        for (i, g) in &records {
            let ours = if i % 2 == 0 {
                rules::Color::Sente
            } else {
                rules::Color::Gote
            };
            match g.score_for(ours) {
                1 => w += 1,
                0 => d += 1,
                _ => l += 1,
            }
            text.push_str(&format!(
                "sfen {} moves {} result {} reason {} new_network {}\n",
                g.start_sfen,
                g.moves.join(" "),
                g.result,
                g.reason,
                if ours == rules::Color::Sente {
                    "sente"
                } else {
                    "gote"
                }
            ));
        }
        std::fs::create_dir_all(self.dir.join("games"))?;
        write_atomic(
            &self
                .dir
                .join("games")
                .join(format!("{gen:06}-vs-{label}.txt")),
            text.as_bytes(),
        )?;
        let e = elo_estimate(w, d, l);
        Ok(MatchReport {
            opponent: label.to_string(),
            wins: w,
            draws: d,
            losses: l,
            score: e.score,
            elo: e.elo,
            elo_low: e.low,
            elo_high: e.high,
        })
    }

    /// Evaluates generation `gen` (matches, Elo, gating).
    pub fn eval_phase(&mut self, gen: u64) -> Result<()> {
        let ec = self.cfg.evaluation.clone();
        if self.state.history.iter().any(|h| h.generation == gen) {
            return Ok(());
        }
        if ec.games == 0 {
            self.state.best = gen;
            return self.save_state();
        }
        let mut rep = GenerationReport {
            generation: gen,
            ..Default::default()
        };
        let prev = self.state.best;
        if ec.vs_previous && prev != gen {
            rep.vs_previous = Some(self.play_match(gen, Some(prev), &format!("gen{prev}"))?);
        }
        if ec.vs_first && gen != 0 {
            rep.vs_first = if prev == 0 && rep.vs_previous.is_some() {
                rep.vs_previous.clone().map(|mut m| {
                    m.opponent = "gen0".into();
                    m
                })
            } else {
                Some(self.play_match(gen, Some(0), "gen0")?)
            };
        }
        if ec.vs_mcts {
            rep.vs_mcts = Some(self.play_match(gen, None, "mcts")?);
        }
        rep.promoted = match (&rep.vs_previous, ec.gating) {
            (Some(m), true) => m.score >= ec.gating_score,
            _ => true,
        };
        if rep.promoted {
            self.state.best = gen;
        }
        // When the previous network is generation 0, one match serves both reports.
        let first_is_copy = prev == 0 && rep.vs_previous.is_some();
        for (k, m) in [&rep.vs_previous, &rep.vs_first, &rep.vs_mcts]
            .into_iter()
            .enumerate()
            .filter_map(|(k, m)| m.as_ref().map(|m| (k, m)))
        {
            let tag = match k {
                0 => "previous",
                1 => "gen0",
                _ => "mcts",
            };
            self.tb.scalar(&format!("elo/vs_{tag}"), m.elo, gen);
            self.tb.scalar(&format!("score/vs_{tag}"), m.score, gen);
            if k == 1 && first_is_copy {
                continue;
            }
            self.log(&format!(
                "gen {gen} vs {}: +{} ={} -{} score {:.3}, Elo {:+.0} [{:+.0}, {:+.0}]",
                m.opponent, m.wins, m.draws, m.losses, m.score, m.elo, m.elo_low, m.elo_high
            ));
        }
        if ec.gating {
            self.log(&format!(
                "gen {gen} {} (self-play network: gen {})",
                if rep.promoted {
                    "promoted"
                } else {
                    "rejected by the gate"
                },
                self.state.best
            ));
        }
        self.state.history.push(rep);
        self.save_state()?;
        self.tb.flush();
        Ok(())
    }

    /// Re-reads state.json (written by the training process).
    pub fn reload_state(&mut self) -> Result<()> {
        self.state = serde_json::from_str(&std::fs::read_to_string(self.dir.join("state.json"))?)?;
        Ok(())
    }

    /// `trainer selfplay`: plays the games of each generation with the current network as soon
    /// as the training process publishes it.
    pub fn selfplay_loop(&mut self) -> Result<()> {
        loop {
            self.reload_state()?;
            let gen = self.state.generation;
            if gen >= self.cfg.generations {
                self.log("self-play: the run is complete");
                return Ok(());
            }
            if self.games_stored(gen)? < self.cfg.games_per_generation {
                let best = self.state.best;
                self.selfplay_phase(gen, best, self.cfg.games_per_generation)?;
            } else {
                std::thread::sleep(std::time::Duration::from_secs(2));
            }
        }
    }

    /// `trainer train`: waits for each generation's games, trains, publishes, evaluates.
    pub fn train_loop(&mut self) -> Result<()> {
        let mut waiting = false;
        while self.state.generation < self.cfg.generations {
            let gen = self.state.generation;
            if self.games_stored(gen)? < self.cfg.games_per_generation {
                if !waiting {
                    self.log(&format!(
                        "train: waiting for the self-play games of generation {gen}"
                    ));
                    waiting = true;
                }
                std::thread::sleep(std::time::Duration::from_secs(2));
                continue;
            }
            waiting = false;
            self.train_phase(gen)?;
            self.eval_phase(gen + 1)?;
        }
        self.log(&format!(
            "run complete: {} generations",
            self.state.generation
        ));
        Ok(())
    }

    /// The whole loop, resuming where the state says.
    pub fn run_loop(&mut self) -> Result<()> {
        let t0 = Instant::now();
        while self.state.generation < self.cfg.generations {
            let gen = self.state.generation;
            // Self-play with the current best network (the newest one without gating); the
            // games of this iteration are stored under samples/<gen> so the phase can resume.
            let best = self.state.best;
            self.selfplay_phase(gen, best, self.cfg.games_per_generation)?;
            self.train_phase(gen)?;
            self.eval_phase(gen + 1)?;
            self.log(&format!(
                "generation {} done after {:.0}s",
                gen + 1,
                t0.elapsed().as_secs_f64()
            ));
        }
        self.log(&format!(
            "run complete: {} generations",
            self.state.generation
        ));
        Ok(())
    }
}

fn open_tb(dir: &Path) -> Box<dyn Metrics> {
    let tb = dir.join("tb");
    let _ = std::fs::create_dir_all(&tb);
    Box::new(TensorBoard(
        tensorboard_rs::summary_writer::SummaryWriter::new(tb),
    ))
}

static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

fn policy_entropy_and_value_accuracy(
    t: &Trainer,
    shape: model::NetShape,
    x: &[f32],
    z: &[f32],
    device: model::tch::Device,
) -> Result<(f64, f64)> {
    use model::tch::Kind;
    let n = z.len() / 3;
    let p = vec![0.0f32; n * shape.policy_len()];
    let b = Batch::from_slices(shape, x, &p, z, device)?;
    Ok(model::tch::no_grad(|| {
        let (logits, wdl) = t.net.forward_t(&b.inputs, false);
        let lp = logits.log_softmax(-1, Kind::Float);
        let entropy = -(lp.exp() * &lp)
            .sum_dim_intlist(1, false, Kind::Float)
            .mean(Kind::Float);
        let pred = wdl.argmax(1, false);
        let truth = b.wdl.argmax(1, false);
        let acc = pred
            .eq_tensor(&truth)
            .to_kind(Kind::Float)
            .mean(Kind::Float);
        (entropy.double_value(&[]), acc.double_value(&[]))
    }))
}
