//! Our MCTS in-process, as a player: a network from a model file, or the uniform evaluator.

use anyhow::{bail, Context, Result};
use model::{check_encoding, load_model, parse_device, NetEvaluator};
use rules::{Move, Position, Variant};
use search::{Algorithm, Evaluator, Search, SearchConfig, UniformEvaluator};
use selfplay::Encoder;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Our MCTS in-process: a network from a model file, or the uniform evaluator (uniform policy,
/// even value) without one.
pub struct Searcher {
    encoder: Encoder,
    net: Box<dyn Evaluator>,
    nodes: u32,
    seed: u64,
    input: Vec<f32>,
    logits: Vec<f32>,
}

impl Searcher {
    /// A searcher with `nodes` simulations per move; `model` None: uniform policy, even value.
    pub fn new(
        variant: &Arc<Variant>,
        model: Option<&Path>,
        nodes: u32,
        device: &str,
    ) -> Result<Searcher> {
        let encoder = Encoder::new(variant.clone());
        let net: Box<dyn Evaluator> = match model {
            None => Box::new(UniformEvaluator {
                input_len: encoder.input_len(),
                policy_len: encoder.policy_len(),
            }),
            Some(path) => {
                let device = parse_device(device).map_err(anyhow::Error::msg)?;
                let (vs, net, meta) = load_model(path, device)
                    .with_context(|| format!("loading {}", path.display()))?;
                check_encoding(&meta, &encoder.spec(), path).with_context(|| {
                    format!(
                        "{} is a {} model, not one for {}",
                        path.display(),
                        meta.variant,
                        variant.name
                    )
                })?;
                Box::new(NetEvaluator::new(vs, net))
            }
        };
        Ok(Searcher {
            encoder,
            net,
            nodes: nodes.max(1),
            seed: 0,
            input: Vec::new(),
            logits: Vec::new(),
        })
    }

    /// The move to play in `pos` (not a finished game): Gumbel search without noise, `nodes`
    /// simulations, stopped early at `time` if given.
    pub fn choose(&mut self, pos: &Position, time: Option<Duration>) -> Result<Move> {
        let legal = pos.legal_moves();
        match legal.len() {
            0 => bail!("no legal move"),
            1 => return Ok(legal[0]),
            _ => {}
        }
        let started = Instant::now();
        let config = SearchConfig {
            algorithm: Algorithm::Gumbel,
            simulations: self.nodes,
            reuse_tree: false,
            ..SearchConfig::default()
        };
        self.seed = self.seed.wrapping_add(1);
        let mut search = Search::new(config, pos.clone(), self.seed);
        search.start(self.nodes, false);
        while !search.finished() {
            if search.root_visits() > 0 && time.is_some_and(|t| started.elapsed() >= t) {
                break;
            }
            if search.select() {
                let leaf = search.leaf_position();
                self.input.resize(self.encoder.input_len(), 0.0);
                self.encoder.encode(leaf, &mut self.input);
                let out = self.net.evaluate(&self.input, 1)?;
                let e = out
                    .into_iter()
                    .next()
                    .context("the evaluator returned nothing")?;
                self.logits.clear();
                for &mv in search.leaf_moves() {
                    self.logits
                        .push(e.policy_logits[self.encoder.move_to_index(leaf, mv)]);
                }
                search.expand(&self.logits, e.wdl);
            }
        }
        Ok(search.result().best)
    }
}
