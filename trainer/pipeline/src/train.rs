//! The trainer: takes in new shards as workers write them, trains on the replay window no
//! faster than `sample_reuse` allows, and publishes a network every `steps_per_generation`
//! steps (model file, checkpoint, then state.json: a worker that sees the new state always
//! finds its network). Bad shards are skipped and counted, never trained on.

use crate::error::{KeyError, PipelineError, Result};
use crate::metrics::Reporter;
use crate::run::Run;
use crate::store::{self, Seen, ShardName};
use crate::worker::WorkerStats;
use crate::Shared;
use indicatif::ProgressBar;
use model::{
    has_checkpoint, init_from_model, load_checkpoint, save_checkpoint, save_published_model,
    shape_of, ModelMeta, Trainer,
};
use selfplay::{GameRecord, PlayStats, ReplayWindow};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the trainer lists the sample directories.
const INGEST_EVERY: Duration = Duration::from_millis(1000);

fn meta(run: &Run, t: &Trainer, generation: u64) -> ModelMeta {
    let mut m = ModelMeta::new(
        &run.model,
        shape_of(&run.encoder),
        run.encoder.spec(),
        run.variant.spec.clone(),
    );
    m.step = t.step;
    m.generation = Some(generation);
    m
}

fn new_trainer(run: &Run) -> Trainer {
    Trainer::new(
        &run.model,
        shape_of(&run.encoder),
        run.cfg.training.clone(),
        run.device,
        run.cfg.seed,
    )
}

/// The run's progress in [0, 1] that the `budget` learning-rate schedule follows: the larger
/// of the fraction of the wall-time budget spent (when `max_minutes` is set) and the fraction
/// of `generations` trained, counting the steps since the last publication as a fraction of
/// `steps_per_generation` (so the rate falls smoothly within a generation).
pub fn run_progress(
    cfg: &crate::RunConfig,
    seconds: f64,
    generation: u64,
    steps_since_publish: u64,
) -> f64 {
    let within = (steps_since_publish as f64 / cfg.steps_per_generation as f64).min(1.0);
    let by_generations = (generation as f64 + within) / cfg.generations as f64;
    let by_time = cfg.budget_seconds().map_or(0.0, |b| seconds / b);
    by_generations.max(by_time).clamp(0.0, 1.0)
}

/// The run's replay window, empty, as its `[replay]` settings ask (value targets, surprise
/// weighting, mirroring); an error names `file` and the key.
pub(crate) fn replay_window(
    cfg: &crate::config::ReplayConfig,
    encoder: encoding::Encoder,
    file: &str,
) -> Result<ReplayWindow> {
    let in_file = |e: selfplay::SelfPlayError| KeyError::from(e).in_file(file);
    let mut window =
        ReplayWindow::with_value_targets(encoder, cfg.value_targets()).map_err(in_file)?;
    window
        .set_policy_surprise_weight(cfg.policy_surprise_weight)
        .map_err(in_file)?;
    window.set_mirror(cfg.mirror).map_err(in_file)?;
    Ok(window)
}

/// Writes the randomly initialised generation 0 of a new run.
pub fn write_generation_zero(run: &Run) -> Result<()> {
    let t = new_trainer(run);
    // The published variables: a training-only soft-policy output stays out of model files.
    save_published_model(&t, &meta(run, &t, 0), &run.model_path(0))?;
    Ok(())
}

/// Whether the trainer may take a step.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ready {
    Yes,
    /// The window holds fewer than `min_samples`.
    TooFewSamples,
    /// `sample_reuse` (or a capped generation's games) holds the next step back.
    Reuse,
}

/// The trainer's state between steps.
pub struct TrainLoop<'a> {
    run: &'a Run,
    shared: &'a Shared,
    reporter: &'a Reporter,
    workers: Option<&'a Arc<WorkerStats>>,
    t: Trainer,
    window: ReplayWindow,
    seen: Seen,
    dir_times: store::DirTimes,
    games: u64,
    samples: u64,
    bad_shards: u64,
    last_publish_step: u64,
    last_ingest: Instant,
    sum: [f64; 3],
    n: u64,
    last_selfplay: (PlayStats, Instant),
    started: Instant,
    seconds_before: f64,
    /// Seconds spent since the last publication with samples at hand but none new enough
    /// under `sample_reuse`: the trainer waiting for self-play.
    reuse_wait: f64,
    /// When the last publication (or the start) was.
    last_publish_at: Instant,
}

impl<'a> TrainLoop<'a> {
    /// Loads the trainer (checkpoint, else generation 0) and the replay window.
    pub fn new(
        run: &'a Run,
        shared: &'a Shared,
        reporter: &'a Reporter,
        workers: Option<&'a Arc<WorkerStats>>,
    ) -> Result<TrainLoop<'a>> {
        let ckpt = run.dir.join("checkpoint");
        let (t, published) = if has_checkpoint(&ckpt) {
            let (t, st) = load_checkpoint(&ckpt, run.device, Some(run.cfg.training.clone()))
                .map_err(|source| PipelineError::Checkpoint {
                    path: ckpt.clone(),
                    source,
                })?;
            if let Some(why) = &st.fallback {
                reporter.log(&format!("damaged checkpoint: {why}"));
            }
            let gen = st.extra.get("generation").and_then(|v| v.as_u64());
            let at = st.extra.get("publish_step").and_then(|v| v.as_u64());
            (t, gen.zip(at))
        } else {
            let mut t = new_trainer(run);
            init_from_model(&mut t, &run.model_path(0))?;
            (t, None)
        };
        let mut last_publish_step = 0;
        // A publication the state did not record (killed in between): record it now.
        if let Some((gen, at)) = published {
            last_publish_step = at;
            shared.update(|s| {
                if gen > s.generation && run.model_path(gen).exists() {
                    s.generation = gen;
                    if !run.cfg.evaluation.gating {
                        s.best = gen;
                    }
                }
            })?;
        }
        let seconds_before = shared.get().seconds;
        let file = run.dir.join("config.toml").display().to_string();
        let window = replay_window(&run.cfg.replay, run.encoder.clone(), &file)?;
        let mut me = TrainLoop {
            run,
            shared,
            reporter,
            workers,
            window,
            t,
            seen: Seen::default(),
            dir_times: store::DirTimes::default(),
            games: 0,
            samples: 0,
            bad_shards: 0,
            last_publish_step,
            last_ingest: Instant::now(),
            sum: [0.0; 3],
            n: 0,
            last_selfplay: (PlayStats::default(), Instant::now()),
            started: Instant::now(),
            seconds_before,
            reuse_wait: 0.0,
            last_publish_at: Instant::now(),
        };
        me.load_window()?;
        // A damaged newest network would leave the workers on an older one (and a capped run
        // waiting for games that never come): publish the trainer's weights in its place.
        let newest = shared.get().generation;
        if let Err(e) = run.evaluator(newest) {
            reporter.log(&format!(
                "network {newest} does not load ({}); publishing the trainer's weights as the next network",
                e.chain()
            ));
            me.publish()?;
        }
        Ok(me)
    }

    /// Training steps done.
    pub fn steps(&self) -> u64 {
        self.t.step
    }

    /// Run seconds, summed over resumes.
    pub fn seconds(&self) -> f64 {
        self.seconds_before + self.started.elapsed().as_secs_f64()
    }

    fn skip_bad(&mut self, e: PipelineError) {
        self.bad_shards += 1;
        self.reporter
            .log(&format!("skipping a bad shard: {}", e.chain()));
        self.reporter
            .scalar("data/bad_shards", self.bad_shards as f64, self.t.step);
    }

    /// Adds a shard's games to the window; a bad shard is skipped and counted. The games and
    /// samples counted (the sample-reuse budget) are those read, not those its name claims.
    fn take(&mut self, name: &ShardName) {
        if let Some(games) = self.read(name) {
            self.add(name, &games);
        }
    }

    /// A shard's games, checked against the run (None: a bad shard, skipped and counted).
    fn read(&mut self, name: &ShardName) -> Option<Vec<GameRecord>> {
        let read = store::read_checked(
            &self.run.dir,
            name,
            &self.run.variant.name,
            self.run.encoder.policy_len(),
        );
        read.map_err(|e| self.skip_bad(e)).ok()
    }

    /// Adds the games read from shard `name` to the window and counts them, with the samples
    /// they hold (a name claiming another count is said once and not believed).
    fn add(&mut self, name: &ShardName, games: &[GameRecord]) {
        let mut samples = 0u64;
        for g in games {
            if let Err(e) = self.window.add_game(g) {
                let path = name.path(&self.run.dir);
                return self.skip_bad(PipelineError::Game { path, source: e });
            }
            samples = samples.saturating_add(g.num_samples() as u64);
        }
        if samples != name.samples {
            self.reporter.log(&format!(
                "{}: its name says {} samples, it holds {samples}: counting {samples}",
                name.path(&self.run.dir).display(),
                name.samples
            ));
        }
        self.games = self.games.saturating_add(games.len() as u64);
        self.samples = self.samples.saturating_add(samples);
    }

    /// Startup: the window from the newest shards, read until they hold the window's samples
    /// (counted from what they hold, so a name claiming more cannot crowd the others out); the
    /// older shards, taken in by an earlier trainer, are counted from their names (bounded per
    /// shard, see [`store::MAX_SHARD_SAMPLES`]).
    fn load_window(&mut self) -> Result<()> {
        let all = store::list(&self.run.dir)?;
        let want = self.run.cfg.replay.window(store::totals(&all).1);
        let mut newest = Vec::new();
        let mut held = 0u64;
        let mut visited = 0;
        for s in all.iter().rev() {
            if held >= want as u64 {
                break;
            }
            visited += 1;
            if let Some(games) = self.read(s) {
                let n: u64 = games.iter().map(|g| g.num_samples() as u64).sum();
                held = held.saturating_add(n);
                newest.push((s, games));
            }
        }
        for (s, games) in newest.iter().rev() {
            self.add(s, games);
        }
        // The shards read are a suffix of the listing; the others are counted by name.
        let (older, read) = all.split_at(all.len() - visited);
        for s in read {
            self.seen.insert(s);
        }
        for s in older {
            if self.seen.insert(s) {
                self.games = self.games.saturating_add(s.games);
                self.samples = self.samples.saturating_add(s.samples);
            }
        }
        self.window.trim(want);
        Ok(())
    }

    /// Reads the shards written since the last call.
    pub fn ingest(&mut self) -> Result<()> {
        self.last_ingest = Instant::now();
        let fresh: Vec<ShardName> = store::list_changed(&self.run.dir, &mut self.dir_times)?
            .into_iter()
            .filter(|s| self.seen.insert(s))
            .collect();
        for s in &fresh {
            self.take(s);
        }
        self.window.trim(self.run.cfg.replay.window(self.samples));
        Ok(())
    }

    /// Steps the reuse ratio allows now (unbounded once a capped generation is full).
    /// In a capped (synchronous) run the next network waits for the current one's games: the
    /// generation's last step is taken only once they are stored.
    fn allowed_steps(&self, best: u64) -> Result<u64> {
        let cfg = &self.run.cfg;
        let by_ratio =
            (cfg.sample_reuse * self.samples as f64 / cfg.training.batch_size as f64) as u64;
        let cap = cfg.games_per_generation as u64;
        if cap == 0 {
            return Ok(by_ratio);
        }
        let end = self.last_publish_step + cfg.steps_per_generation;
        let limited = by_ratio.min(end - 1);
        // The listing is needed only when the ratio or the generation's end holds the step back.
        if self.t.step >= limited && store::games_in(&self.run.dir, best)? >= cap {
            return Ok(end);
        }
        Ok(limited)
    }

    /// Whether a step may be taken now, and if not, why.
    fn ready(&self, best: u64) -> Result<Ready> {
        let need = self
            .run
            .cfg
            .min_samples
            .min(self.run.cfg.replay.window(self.samples));
        Ok(if self.window.len() < need.max(1) {
            Ready::TooFewSamples
        } else if self.t.step < self.allowed_steps(best)? {
            Ready::Yes
        } else {
            Ready::Reuse
        })
    }

    fn step(&mut self, bar: Option<&ProgressBar>) -> Result<()> {
        let bs = self.run.cfg.training.batch_size;
        let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
        let mut rng = self.t.rng;
        // A resumed run whose config turned the output off keeps it without targets.
        let replies = self.t.net.has_opponent_policy() && self.t.cfg.opponent_policy_weight > 0.0;
        let mut o = Vec::new();
        if replies {
            self.window.sample_batch_with_replies(
                bs,
                |k| rng.below(k),
                &mut x,
                &mut p,
                &mut z,
                &mut o,
            );
        } else {
            self.window
                .sample_batch(bs, |k| rng.below(k), &mut x, &mut p, &mut z);
        }
        self.t.rng = rng;
        let mut b = self.t.batch(&x, &p, &z)?;
        if replies {
            b = b.with_opponent(&o)?;
        }
        let s = self.t.train_step(&b);
        if let Some(bar) = bar {
            bar.inc(1);
        }
        if !s.skipped {
            self.sum[0] += s.loss;
            self.sum[1] += s.policy_loss;
            self.sum[2] += s.value_loss;
            self.n += 1;
            let r = self.reporter;
            r.scalar("train/loss", s.loss, self.t.step);
            r.scalar("train/policy_loss", s.policy_loss, self.t.step);
            r.scalar("train/value_loss", s.value_loss, self.t.step);
            if self.t.net.has_soft_policy() {
                r.scalar("train/soft_policy_loss", s.soft_policy_loss, self.t.step);
            }
            if replies {
                r.scalar(
                    "train/opponent_policy_loss",
                    s.opponent_policy_loss,
                    self.t.step,
                );
            }
            r.scalar("train/grad_norm", s.grad_norm, self.t.step);
            r.scalar("train/lr", s.lr, self.t.step);
        }
        Ok(())
    }

    /// Saves the trainer mid-generation (a resume continues its steps).
    fn checkpoint(&self, generation: u64) -> Result<()> {
        save_checkpoint(
            &self.run.dir.join("checkpoint"),
            &self.t,
            &meta(self.run, &self.t, generation),
            serde_json::json!({"generation": generation, "publish_step": self.last_publish_step}),
        )?;
        Ok(())
    }

    /// Publishes the current weights (their moving average with `training.ema_decay` > 0) as
    /// the next generation.
    pub fn publish(&mut self) -> Result<u64> {
        let gen = self.shared.get().generation + 1;
        let run = self.run;
        save_published_model(&self.t, &meta(run, &self.t, gen), &run.model_path(gen))?;
        let steps = self.t.step - self.last_publish_step;
        self.last_publish_step = self.t.step;
        self.checkpoint(gen)?;
        self.save_totals(|s| {
            s.generation = gen;
            if !run.cfg.evaluation.gating {
                s.best = gen;
            }
        })?;
        self.report(gen, steps)?;
        Ok(gen)
    }

    fn report(&mut self, gen: u64, steps: u64) -> Result<()> {
        let r = self.reporter;
        let n = self.n.max(1) as f64;
        let (loss, pl, vl) = (self.sum[0] / n, self.sum[1] / n, self.sum[2] / n);
        self.sum = [0.0; 3];
        self.n = 0;
        let (entropy, acc) = if self.window.is_empty() {
            (f64::NAN, f64::NAN)
        } else {
            let bs = self.run.cfg.training.batch_size;
            let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
            let mut rng = model::SplitMix(gen ^ 0x5EED);
            self.window
                .sample_results_batch(bs, |k| rng.below(k), &mut x, &mut p, &mut z);
            let b = self.t.batch(&x, &p, &z)?;
            self.t.diagnostics(&b)
        };
        r.scalar("train/policy_entropy", entropy, gen);
        r.scalar("train/value_accuracy", acc, gen);
        r.scalar("data/games", self.games as f64, gen);
        r.scalar("data/samples", self.samples as f64, gen);
        r.scalar("data/window", self.window.len() as f64, gen);
        let mut line = format!(
            "gen {gen} published at {:.0}s: {steps} steps (total {}), window {} of {} samples, {} games; loss {loss:.3} (policy {pl:.3}, value {vl:.3}), entropy {entropy:.2}, value accuracy {:.0}%",
            self.seconds(),
            self.t.step,
            self.window.len(),
            self.samples,
            self.games,
            acc * 100.0
        );
        // How long the trainer stood still for new samples: a share near 1 says self-play is
        // the bottleneck (more workers or a higher `sample_reuse`), near 0 that training is.
        let span = std::mem::replace(&mut self.last_publish_at, Instant::now())
            .elapsed()
            .as_secs_f64()
            .max(1e-9);
        let wait = std::mem::take(&mut self.reuse_wait);
        line.push_str(&format!(", waited {wait:.1}s on sample_reuse"));
        r.scalar("speed/trainer_wait_share", (wait / span).min(1.0), gen);
        if let Some(w) = self.workers {
            let now = w.merged();
            let (prev, at) =
                std::mem::replace(&mut self.last_selfplay, (now.clone(), Instant::now()));
            let d = |a: u64, b: u64| a.saturating_sub(b);
            let games = d(now.games, prev.games);
            let secs = at.elapsed().as_secs_f64().max(1e-9);
            let evals = d(now.evals, prev.evals) as f64 / secs;
            let hits = d(now.cache_hits, prev.cache_hits) as f64 / secs;
            let g = games.max(1) as f64;
            line.push_str(&format!(
                "; self-play {games} games, {:.1} plies/game, sente/gote/draw {}/{}/{}, resigned {}, {:.0} evals/s{}, {:.0} moves/s",
                d(now.plies, prev.plies) as f64 / g,
                d(now.sente_wins, prev.sente_wins),
                d(now.gote_wins, prev.gote_wins),
                d(now.draws, prev.draws),
                d(now.resigned, prev.resigned),
                evals,
                if hits > 0.0 {
                    format!(" (+{hits:.0} leaves/s from the cache)")
                } else {
                    String::new()
                },
                d(now.plies, prev.plies) as f64 / secs,
            ));
            r.scalar(
                "selfplay/game_length",
                d(now.plies, prev.plies) as f64 / g,
                gen,
            );
            r.scalar(
                "selfplay/draw_rate",
                d(now.draws, prev.draws) as f64 / g,
                gen,
            );
            r.scalar(
                "selfplay/resign_rate",
                d(now.resigned, prev.resigned) as f64 / g,
                gen,
            );
            r.scalar("speed/evals_per_s", evals, gen);
            r.scalar("speed/cache_hits_per_s", hits, gen);
            if now.no_resign_games > prev.no_resign_games {
                r.scalar(
                    "selfplay/false_resign_rate",
                    d(now.false_resigns, prev.false_resigns) as f64
                        / d(now.no_resign_games, prev.no_resign_games) as f64,
                    gen,
                );
            }
        }
        r.log(&line);
        r.flush();
        Ok(())
    }

    /// Trains until the run is complete or `shared.stop` is set; then publishes what was
    /// trained since the last publication and marks the state.
    pub fn run(&mut self, bar: Option<&ProgressBar>) -> Result<()> {
        let cfg = &self.run.cfg;
        loop {
            let state = self.shared.get();
            let budget_over = cfg.budget_seconds().is_some_and(|b| self.seconds() >= b);
            if state.complete || state.generation >= cfg.generations || budget_over {
                break;
            }
            if self.shared.stop.load(Ordering::SeqCst) {
                // Stopped from outside (a signal): keep what was trained, the run resumes.
                if self.t.step > self.last_publish_step {
                    self.publish()?;
                } else {
                    // Nothing to publish: the run's time still counts towards `max_minutes`.
                    self.save_totals(|_| {})?;
                }
                return Ok(());
            }
            if self.last_ingest.elapsed() >= INGEST_EVERY {
                self.ingest()?;
            }
            let ready = self.ready(state.best)?;
            if ready == Ready::Yes {
                let done = self.t.step.saturating_sub(self.last_publish_step);
                let progress = run_progress(cfg, self.seconds(), state.generation, done);
                self.t.set_progress(progress);
                self.step(bar)?;
                let since = self.t.step - self.last_publish_step;
                if since >= cfg.steps_per_generation {
                    self.publish()?;
                    if let Some(b) = bar {
                        b.set_position(0);
                    }
                } else if since.is_multiple_of((cfg.steps_per_generation / 4).max(50)) {
                    self.checkpoint(state.generation)?;
                }
            } else {
                let t = Instant::now();
                std::thread::sleep(Duration::from_millis(50));
                if ready == Ready::Reuse {
                    self.reuse_wait += t.elapsed().as_secs_f64();
                }
            }
        }
        if self.t.step > self.last_publish_step && self.shared.get().generation < cfg.generations {
            self.publish()?;
        }
        self.save_totals(|s| s.complete = true)
    }

    /// Writes the state with the trainer's totals and `change`.
    fn save_totals(&self, change: impl FnOnce(&mut crate::run::RunState)) -> Result<()> {
        let (games, samples, seconds, step) =
            (self.games, self.samples, self.seconds(), self.t.step);
        self.shared.update(|s| {
            change(s);
            s.total_games = games;
            s.total_samples = samples;
            s.steps = step;
            s.seconds = seconds;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use selfplay::{MoveTarget, ShardHeader};
    use std::path::{Path, PathBuf};

    /// A game of `plies` legal moves from the start, each with a training target.
    fn game(run: &Run, plies: usize) -> GameRecord {
        let mut pos = rules::Position::start(run.variant.clone());
        let start_sfen = pos.to_sfen();
        let (mut moves, mut targets) = (Vec::new(), Vec::new());
        for _ in 0..plies {
            let mv = pos.legal_moves()[0];
            moves.push(pos.move_to_usi(mv));
            targets.push(Some(MoveTarget {
                policy: vec![(0, 1.0)],
                value: 0.0,
                surprise: 0.0,
            }));
            pos.make_move(mv);
        }
        GameRecord {
            start_sfen,
            moves,
            targets,
            result: rules::GameResult::Draw,
            reason: "move limit".into(),
        }
    }

    /// A shard named `name` in generation 0 holding `games`.
    fn plant(run: &Run, name: &str, games: &[GameRecord]) -> PathBuf {
        let header = ShardHeader {
            version: selfplay::samples::SHARD_VERSION,
            variant: run.variant.name.clone(),
            policy_len: run.encoder.policy_len(),
            generation: 0,
        };
        let p = store::generation_dir(&run.dir, 0).join(name);
        selfplay::write_shard(&p, &header, games).unwrap();
        p
    }

    /// A shard named `name` whose decompressed content never ends (a zstd bomb: 1 GiB of 'x'
    /// after a valid header, from one small frame repeated).
    fn plant_bomb(run: &Run, name: &str) -> PathBuf {
        let p = plant(run, name, &[]);
        let mut bytes = std::fs::read(&p).unwrap();
        let mib = zstd::encode_all(&vec![b'x'; 1 << 20][..], 3).unwrap();
        for _ in 0..1024 {
            bytes.extend_from_slice(&mib);
        }
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn open_run(root: &Path) -> Run {
        let cfg = root.join("counts.toml");
        std::fs::write(
            &cfg,
            "variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 1\n\
             steps_per_generation = 10\nmin_samples = 1\nsample_reuse = 2.0\n\
             [training]\nbatch_size = 4\n[replay]\nmin_window = 200\nmax_window = 2000\n\
             [evaluation]\ngames = 0\n",
        )
        .unwrap();
        Run::open(&cfg, &root.join("runs"), false).unwrap()
    }

    #[test]
    fn the_sample_budget_follows_what_shards_hold_not_their_names() {
        let root = std::env::temp_dir().join(format!("train-counts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let run = open_run(&root);
        let g = game(&run, 6);
        // A real shard, its twin under a name claiming 60,000 samples, the twin under names
        // whose counts overflow a sum, and a zstd bomb under a plausible name.
        let real =
            store::ShardWriter::new(&run.dir, 1, &run.variant.name, run.encoder.policy_len())
                .write(0, &g)
                .unwrap();
        assert_eq!(real.samples, 6);
        plant(
            &run,
            "0000000000000002-00000000-1g60000s.zst",
            std::slice::from_ref(&g),
        );
        plant(
            &run,
            "0000000000000003-00000000-18446744073709551615g1s.zst",
            std::slice::from_ref(&g),
        );
        plant(
            &run,
            "0000000000000004-00000000-1g18446744073709551615s.zst",
            std::slice::from_ref(&g),
        );
        plant_bomb(&run, "0000000000000005-00000000-1g6s.zst");
        let shared =
            Shared::new(&run, Arc::new(std::sync::atomic::AtomicBool::new(false))).unwrap();
        let reporter = Reporter::new(None, Box::new(crate::metrics::NoMetrics));
        let mut t = TrainLoop::new(&run, &shared, &reporter, None).unwrap();
        // Two games of 6 samples were read; the bomb is a counted bad shard.
        assert_eq!((t.games, t.samples, t.bad_shards), (2, 12, 1));
        assert_eq!(t.window.len(), 12);
        // The reuse ratio allows 2 * 12 / 4 steps, not 2 * 60,006 / 4.
        assert_eq!(t.allowed_steps(0).unwrap(), 6);

        // Shards written while the trainer runs: the same.
        plant(
            &run,
            "0000000000000006-00000000-1g9999s.zst",
            std::slice::from_ref(&g),
        );
        plant_bomb(&run, "0000000000000007-00000000-1g6s.zst");
        t.ingest().unwrap();
        assert_eq!((t.games, t.samples, t.bad_shards), (3, 18, 2));
        assert_eq!(t.allowed_steps(0).unwrap(), 9);
        // Nothing was written outside the run directory.
        let mut top: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        top.sort();
        assert_eq!(top, ["counts.toml", "runs"]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[cfg(test)]
#[path = "train_publish_tests.rs"]
mod publish_tests;
