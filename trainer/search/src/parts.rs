//! The parts in which search algorithms differ, as in mctx (`policies.py`): how the root is
//! prepared for a search (noise), which edge a simulation takes at the root and below it, and
//! what the search returns (the policy target, the move to play, the root's value). The loop
//! itself ([`crate::Search`]: descent, expansion, backup, tree reuse) is shared; an algorithm
//! is one implementation of [`Parts`], chosen once from [`Algorithm`].

use crate::config::{Algorithm, SearchConfig};
use crate::mcts::proven;
use crate::rng::Rng;
use crate::tree::{Tree, NONE};
use rules::Move;

/// What a part reads of the search: the tree and the settings.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub tree: &'a Tree,
    pub config: &'a SearchConfig,
}

/// Root statistics every algorithm's output starts from.
pub(crate) struct RootStats {
    /// Completed Q of each root edge (root player's view).
    pub q: Vec<f32>,
    /// Completed-Q parameters of the root.
    pub completion: Completion,
    /// Mean backed-up value of the root.
    pub mean_value: f32,
    /// Mean backed-up WDL of the root.
    pub mean_wdl: [f32; 3],
}

/// What an algorithm makes of a finished search.
pub(crate) struct Output {
    pub policy_target: Vec<f32>,
    pub best: Move,
    pub root_value: f32,
    pub root_wdl: [f32; 3],
}

/// One search algorithm's selection rules and outputs.
pub(crate) trait Parts: Send {
    /// Prepares the root (expanded) for a search of `budget` simulations.
    fn init_root(&mut self, cx: Ctx, budget: u32, noise: bool, rng: &mut Rng);
    /// The root edge the next simulation takes; `remaining` simulations are left.
    fn select_root(&mut self, cx: Ctx, remaining: u32) -> usize;
    /// Whether the next root selection starts a new stage whose choice reads the values so
    /// far (a Gumbel halving cut): a batched descent stops there.
    fn phase_over(&self) -> bool {
        false
    }
    /// The edge a simulation takes at an expanded interior `node`.
    fn select_interior(&mut self, cx: Ctx, node: u32) -> usize;
    /// The search's result; `root_ready`: the root was prepared for the current search.
    fn output(&self, cx: Ctx, stats: &RootStats, root_ready: bool) -> Output;
    /// Forgets the root state (the root moved).
    fn clear(&mut self);
}

/// The parts of `algorithm`.
pub(crate) fn parts_for(algorithm: Algorithm) -> Box<dyn Parts> {
    match algorithm {
        Algorithm::Puct => Box::<Puct>::default(),
        Algorithm::Gumbel => Box::<Gumbel>::default(),
    }
}

/// Completed-Q parameters of an expanded node (Gumbel MuZero).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Completion {
    /// Mixed value approximation for unvisited children (node's point of view).
    pub v_mix: f32,
    /// `(c_visit + max_b N(b)) * c_scale`.
    pub scale: f32,
    /// Sum of the children's visits.
    pub sum_n: u32,
}

/// Completed-Q parameters of an expanded node.
#[inline]
pub(crate) fn completion(t: &Tree, config: &SearchConfig, node: u32) -> Completion {
    let mut sum_n = 0u32;
    let mut max_n = 0u32;
    let mut prior_sum = 0.0f32;
    let mut weighted_q = 0.0f32;
    for e in t.edges(node) {
        let n = t.edge_visits[e];
        if n > 0 {
            sum_n += n;
            max_n = max_n.max(n);
            prior_sum += t.prior[e];
            weighted_q += t.prior[e] * t.edge_value_sum[e] / n as f32;
        }
    }
    let raw = t.raw_value[node as usize];
    let v_mix = if sum_n == 0 || prior_sum <= 0.0 {
        raw
    } else {
        (raw + sum_n as f32 * (weighted_q / prior_sum)) / (1.0 + sum_n as f32)
    };
    Completion {
        v_mix,
        scale: (config.gumbel_c_visit + max_n as f32) * config.gumbel_c_scale,
        sum_n,
    }
}

/// Completed Q of edge `e` from its parent's point of view: the mean value when visited,
/// else `v_mix`.
#[inline]
pub(crate) fn completed_q(t: &Tree, e: usize, v_mix: f32) -> f32 {
    let n = t.edge_visits[e];
    if n > 0 {
        t.edge_value_sum[e] / n as f32
    } else {
        v_mix
    }
}

/// sigma(q) = (c_visit + max N) * c_scale * q01 with q mapped from [-1, 1] to [0, 1]. The
/// value range is known, so no min-max rescaling over the tree.
#[inline]
fn sigma(scale: f32, q: f32) -> f32 {
    scale * 0.5 * (q + 1.0)
}

/// AlphaZero PUCT: Dirichlet noise on the root priors, argmax of Q + U everywhere, the visit
/// distribution as target and the most visited move.
/// With `search.forced_playouts` (and noise), KataGo's forced playouts at the root and the
/// pruned visit distribution as target.
#[derive(Default)]
struct Puct {
    /// `[root edges]` priors used at the root (Dirichlet-mixed when noise is on).
    root_prior: Vec<f32>,
    /// `[root edges]` scratch for the noise.
    scratch: Vec<f32>,
    /// Forced playouts are on for the current search (PUCT, noise, `forced_playouts > 0`).
    forced: bool,
}

/// The PUCT scores' terms at `node`: `c(N) * sqrt(N)` and the first-play urgency.
fn puct_terms(cx: Ctx, node: u32, priors: &[f32]) -> (f32, f32) {
    let (t, c) = (cx.tree, cx.config);
    let n_parent = t.visits[node as usize].max(1) as f32;
    let c_n = c.c_puct + c.c_puct_factor * ((n_parent + c.c_puct_base + 1.0) / c.c_puct_base).ln();
    let parent_q = t.value_sum[node as usize] / n_parent;
    let visited_prior: f32 = t
        .edges(node)
        .zip(priors)
        .filter(|&(e, _)| t.edge_visits[e] > 0)
        .map(|(_, &p)| p)
        .sum();
    (
        c_n * n_parent.sqrt(),
        parent_q - c.fpu_reduction * visited_prior.sqrt(),
    )
}

/// KataGo's forced visits of a root child of (noised) prior `p` after `n` root visits.
fn forced_visits(k: f32, p: f32, n: f32) -> f32 {
    (k * p * n).sqrt()
}

impl Puct {
    /// argmax Q + c(N) P sqrt(N) / (1 + N(a)), unvisited children at the FPU value; with
    /// `only`, among the edges it accepts (offsets in the node's edges).
    fn select(&self, cx: Ctx, node: u32, priors: &[f32], only: impl Fn(usize) -> bool) -> usize {
        let t = cx.tree;
        let range = t.edges(node);
        let (cs, fpu) = puct_terms(cx, node, priors);
        let mut best = range.start;
        let mut best_score = f32::NEG_INFINITY;
        for (i, e) in range.enumerate() {
            if !only(i) {
                continue;
            }
            let n = t.edge_visits[e];
            let q = if n > 0 {
                t.edge_value_sum[e] / n as f32
            } else {
                fpu
            };
            let s = q + cs * priors[i] / (1 + n) as f32;
            if s > best_score {
                best_score = s;
                best = e;
            }
        }
        best
    }

    /// The root's visits with the forced playouts that PUCT did not earn taken back (KataGo's
    /// policy-target pruning): every child but the most visited keeps the fewest visits, no
    /// fewer than its count less its forced visits, at which its PUCT score stays at most the
    /// most visited child's; a child left with one visit is dropped.
    fn pruned_visits(&self, cx: Ctx) -> Vec<f32> {
        let t = cx.tree;
        let range = t.edges(0);
        let first = range.start;
        let visits: Vec<u32> = t.edge_visits[range.clone()].to_vec();
        let Some(star) = (0..visits.len()).max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
        else {
            return Vec::new();
        };
        let (cs, _) = puct_terms(cx, 0, &self.root_prior);
        let q = |i: usize| t.edge_value_sum[first + i] / visits[i].max(1) as f32;
        let best_score = q(star) + cs * self.root_prior[star] / (1 + visits[star]) as f32;
        let total: u32 = visits.iter().sum();
        (0..visits.len())
            .map(|i| {
                let n = visits[i];
                if i == star || n == 0 {
                    return n as f32;
                }
                let floor = n as f32
                    - forced_visits(cx.config.forced_playouts, self.root_prior[i], total as f32);
                // The fewest visits m with q + cs * p / (1 + m) <= best_score.
                let gap = best_score - q(i);
                let earned = if gap > 0.0 {
                    (cs * self.root_prior[i] / gap - 1.0).ceil()
                } else {
                    n as f32
                };
                let kept = floor.ceil().max(earned).clamp(0.0, n as f32);
                if kept <= 1.0 {
                    0.0
                } else {
                    kept
                }
            })
            .collect()
    }
}

impl Parts for Puct {
    fn init_root(&mut self, cx: Ctx, _budget: u32, noise: bool, rng: &mut Rng) {
        let range = cx.tree.edges(0);
        let n = range.len();
        let c = cx.config;
        self.root_prior.clear();
        self.root_prior.extend_from_slice(&cx.tree.prior[range]);
        self.forced = noise && n > 1 && c.forced_playouts > 0.0;
        if noise && n > 1 && c.dirichlet_fraction > 0.0 {
            let alpha = c.dirichlet_alpha_total as f64 / n as f64;
            let f = c.dirichlet_fraction;
            self.scratch.clear();
            self.scratch.resize(n, 0.0);
            rng.dirichlet(alpha, &mut self.scratch);
            for (p, &d) in self.root_prior.iter_mut().zip(&self.scratch) {
                *p = (1.0 - f) * *p + f * d;
            }
        }
    }

    fn select_root(&mut self, cx: Ctx, _remaining: u32) -> usize {
        if self.forced {
            let t = cx.tree;
            let first = t.first_edge[0] as usize;
            let total = t.edge_visits[t.edges(0)].iter().sum::<u32>() as f32;
            let k = cx.config.forced_playouts;
            let short = |i: usize| {
                (t.edge_visits[first + i] as f32) < forced_visits(k, self.root_prior[i], total)
            };
            if (0..t.num_edges[0] as usize).any(short) {
                return self.select(cx, 0, &self.root_prior, short);
            }
        }
        self.select(cx, 0, &self.root_prior, |_| true)
    }

    fn select_interior(&mut self, cx: Ctx, node: u32) -> usize {
        self.select(cx, node, &cx.tree.prior[cx.tree.edges(node)], |_| true)
    }

    fn output(&self, cx: Ctx, stats: &RootStats, root_ready: bool) -> Output {
        let t = cx.tree;
        let range = t.edges(0);
        let visits: Vec<f32> = if self.forced && root_ready {
            self.pruned_visits(cx)
        } else {
            t.edge_visits[range.clone()]
                .iter()
                .map(|&v| v as f32)
                .collect()
        };
        let sum: f64 = visits.iter().map(|&v| v as f64).sum();
        let policy_target: Vec<f32> = if sum == 0.0 {
            t.prior[range.clone()].to_vec()
        } else {
            visits.iter().map(|&v| (v as f64 / sum) as f32).collect()
        };
        // With the solver, moves proven to lose are left while another is open.
        let lost = |e: usize| {
            cx.config.solver && t.child[e] != NONE && proven(t, t.child[e]) == Some(true)
        };
        let open = range.clone().filter(|&e| !lost(e));
        let candidates: Vec<usize> = if open.clone().next().is_some() {
            open.collect()
        } else {
            range.collect()
        };
        let most_visited = candidates
            .into_iter()
            .max_by(|&a, &b| {
                (t.edge_visits[a], t.prior[a])
                    .partial_cmp(&(t.edge_visits[b], t.prior[b]))
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(b.cmp(&a))
            })
            .expect("root has moves");
        let best = lcb_choice(t, cx.config.lcb_stdevs, most_visited);
        Output {
            policy_target,
            best: t.mv[best],
            root_value: stats.mean_value,
            root_wdl: stats.mean_wdl,
        }
    }

    fn clear(&mut self) {
        self.forced = false;
    }
}

/// The lower confidence bound of a root edge's mean value (root player's view): the mean
/// less `z` standard errors, the spread from the child's squared values (at least that of a
/// value uniform over [-1, 1] seen once, so that few visits never look certain). None before
/// two visits.
fn lcb(t: &Tree, e: usize, z: f32) -> Option<f32> {
    let n = t.edge_visits[e];
    let c = t.child[e];
    if n < 2 || c == NONE {
        return None;
    }
    let nf = n as f32;
    let q = t.edge_value_sum[e] / nf;
    let sq = t.value_sq_sum[c as usize];
    // Unbiased sample variance plus one pseudo-sample of variance 1/3.
    let var = ((sq - nf * q * q).max(0.0) + 1.0 / 3.0) / nf;
    Some(q - z * (var / nf).sqrt())
}

/// The move a search plays: `most_visited`, unless `z` > 0 and a root edge with at least a
/// tenth of its visits has a higher lower confidence bound (Leela Zero, KataGo).
fn lcb_choice(t: &Tree, z: f32, most_visited: usize) -> usize {
    if z <= 0.0 {
        return most_visited;
    }
    let Some(mut best_lcb) = lcb(t, most_visited, z) else {
        return most_visited;
    };
    let min_visits = t.edge_visits[most_visited].div_ceil(10);
    let mut best = most_visited;
    for e in t.edges(0) {
        if e == most_visited || t.edge_visits[e] < min_visits {
            continue;
        }
        if let Some(b) = lcb(t, e, z) {
            if b > best_lcb {
                best_lcb = b;
                best = e;
            }
        }
    }
    best
}

/// Gumbel AlphaZero (Danihelka et al. 2022): Gumbel-top-k at the root with sequential halving,
/// the completed-Q improved policy below it and as target.
#[derive(Default)]
struct Gumbel {
    /// `[root edges]` Gumbel noise g(a) (zeros when noise is off).
    gumbel: Vec<f32>,
    /// `[<= gumbel_considered]` root edge offsets still in the sequential halving.
    considered: Vec<u32>,
    /// `[phase visits]` root edge offsets to visit in the current halving phase, in order.
    queue: Vec<u32>,
    /// Next entry of `queue`.
    queue_pos: usize,
    /// Halving phases started in the current search.
    phase: u32,
    /// `[edges of one node]` scratch for selection scores.
    scratch: Vec<f32>,
}

impl Gumbel {
    /// Starts the next sequential-halving phase: halves the considered actions (after the
    /// first phase) by g + logits + sigma(q) and queues this phase's visits, the phase's
    /// share of the remaining budget split evenly (at least one visit each).
    fn next_phase(&mut self, cx: Ctx, remaining: usize) {
        let t = cx.tree;
        let comp = completion(t, cx.config, 0);
        let first = t.first_edge[0] as usize;
        let n = t.num_edges[0] as usize;
        self.scratch.clear();
        for a in 0..n {
            let e = first + a;
            let q = completed_q(t, e, comp.v_mix);
            self.scratch
                .push(self.gumbel[a] + t.log_prior[e] + sigma(comp.scale, q));
        }
        let scores = &self.scratch;
        self.considered
            .sort_by(|&a, &b| scores[b as usize].total_cmp(&scores[a as usize]));
        if self.phase > 0 && self.considered.len() > 1 {
            let keep = self.considered.len().div_ceil(2);
            self.considered.truncate(keep);
        }
        let r = self.considered.len();
        self.queue.clear();
        self.queue_pos = 0;
        if r == 1 {
            self.queue.resize(remaining, self.considered[0]);
        } else {
            let phases_left = r.next_power_of_two().trailing_zeros() as usize;
            let per_action = (remaining / phases_left / r).max(1);
            for _ in 0..per_action {
                self.queue.extend_from_slice(&self.considered);
            }
            self.queue.truncate(remaining);
        }
        self.phase += 1;
    }
}

impl Parts for Gumbel {
    fn init_root(&mut self, cx: Ctx, budget: u32, noise: bool, rng: &mut Rng) {
        let range = cx.tree.edges(0);
        let n = range.len();
        self.gumbel.clear();
        for _ in 0..n {
            let g = if noise { rng.gumbel() } else { 0.0 };
            self.gumbel.push(g);
        }
        let m = (cx.config.gumbel_considered as usize)
            .min(n)
            .min(budget.max(1) as usize);
        // Gumbel-top-k: the m largest g + logits (stable: ties keep move order).
        self.considered.clear();
        self.considered.extend(0..n as u32);
        let (g, lp) = (&self.gumbel, &cx.tree.log_prior[range]);
        self.considered.sort_by(|&a, &b| {
            let sa = g[a as usize] + lp[a as usize];
            let sb = g[b as usize] + lp[b as usize];
            sb.total_cmp(&sa)
        });
        self.considered.truncate(m);
        self.queue.clear();
        self.queue_pos = 0;
        self.phase = 0;
    }

    fn select_root(&mut self, cx: Ctx, remaining: u32) -> usize {
        if self.queue_pos >= self.queue.len() {
            self.next_phase(cx, remaining as usize);
        }
        let a = self.queue[self.queue_pos];
        self.queue_pos += 1;
        cx.tree.first_edge[0] as usize + a as usize
    }

    fn phase_over(&self) -> bool {
        self.queue_pos >= self.queue.len()
    }

    /// Gumbel MuZero interior selection: argmax pi'(a) - N(a) / (1 + sum N),
    /// pi' = softmax(logits + sigma(completed Q)).
    fn select_interior(&mut self, cx: Ctx, node: u32) -> usize {
        let t = cx.tree;
        let comp = completion(t, cx.config, node);
        let range = t.edges(node);
        let first = range.start;
        self.scratch.clear();
        let mut max = f32::NEG_INFINITY;
        for e in range {
            let z = t.log_prior[e] + sigma(comp.scale, completed_q(t, e, comp.v_mix));
            max = max.max(z);
            self.scratch.push(z);
        }
        let mut sum = 0.0f32;
        for z in self.scratch.iter_mut() {
            *z = (*z - max).exp();
            sum += *z;
        }
        let inv_sum = 1.0 / sum;
        let inv_n = 1.0 / (1.0 + comp.sum_n as f32);
        let mut best = 0usize;
        let mut best_score = f32::NEG_INFINITY;
        for (i, &p) in self.scratch.iter().enumerate() {
            let s = p * inv_sum - t.edge_visits[first + i] as f32 * inv_n;
            if s > best_score {
                best_score = s;
                best = i;
            }
        }
        first + best
    }

    fn output(&self, cx: Ctx, stats: &RootStats, root_ready: bool) -> Output {
        let t = cx.tree;
        let range = t.edges(0);
        let first = range.start;
        let z: Vec<f32> = range
            .clone()
            .zip(&stats.q)
            .map(|(e, &q)| t.log_prior[e] + sigma(stats.completion.scale, q))
            .collect();
        let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut pi: Vec<f32> = z.iter().map(|&x| (x - max).exp()).collect();
        let s: f32 = pi.iter().sum();
        pi.iter_mut().for_each(|x| *x /= s);
        // The improved policy's value: sum pi'(a) q(a), WDL likewise (an unvisited child
        // counts with the root's mean WDL).
        let mut root_value = 0.0f32;
        let mut root_wdl = [0.0f32; 3];
        for ((e, &p), &qa) in range.zip(&pi).zip(&stats.q) {
            root_value += p * qa;
            let c = t.child[e];
            let cw = if t.edge_visits[e] > 0 && c != NONE {
                let cw = t.wdl_sum[c as usize];
                let cn = t.visits[c as usize] as f32;
                [cw[2] / cn, cw[1] / cn, cw[0] / cn]
            } else {
                stats.mean_wdl
            };
            for k in 0..3 {
                root_wdl[k] += p * cw[k];
            }
        }
        let mut best = usize::MAX;
        let mut best_score = f32::NEG_INFINITY;
        let mut consider = |a: usize| {
            let s = self.gumbel.get(a).copied().unwrap_or(0.0) + z[a];
            if best == usize::MAX || s > best_score {
                best = a;
                best_score = s;
            }
        };
        if root_ready && !self.considered.is_empty() {
            self.considered.iter().for_each(|&a| consider(a as usize));
        } else {
            (0..z.len()).for_each(&mut consider);
        }
        Output {
            policy_target: pi,
            best: t.mv[first + best],
            root_value,
            root_wdl,
        }
    }

    fn clear(&mut self) {
        self.considered.clear();
        self.gumbel.clear();
        self.queue.clear();
        self.queue_pos = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root with three children, each visited `n` times with values (root player's view)
    /// whose sum and sum of squares are given.
    fn root(children: &[(u32, f32, f32)]) -> Tree {
        let mut t = Tree::default();
        t.add_node();
        let moves: Vec<Move> = (0..children.len() as rules::Square)
            .map(|i| Move::Normal {
                from: i,
                to: i + 10,
                promote: false,
            })
            .collect();
        let logits = vec![0.0; moves.len()];
        t.expand(0, &moves, &logits, 1.0, 0.0);
        for (i, &(n, sum, sq)) in children.iter().enumerate() {
            let c = t.add_node();
            t.child[i] = c;
            t.edge_visits[i] = n;
            t.edge_value_sum[i] = sum;
            t.visits[c as usize] = n;
            t.value_sum[c as usize] = -sum;
            t.value_sq_sum[c as usize] = sq;
        }
        t
    }

    #[test]
    fn lcb_prefers_a_sure_move_to_a_more_visited_uncertain_one() {
        // Edge 0: 100 visits of +-1 (mean 0, standard error 0.1); edge 1: 50 visits of
        // 0.3 (mean 0.3, standard error 0.01); edge 2: 5 visits of 0.9, under a tenth of 100.
        let t = root(&[(100, 0.0, 100.0), (50, 15.0, 4.5), (5, 4.5, 4.05)]);
        assert_eq!(lcb_choice(&t, 0.0, 0), 0, "off: the most visited");
        assert_eq!(lcb_choice(&t, 1.0, 0), 1);
        assert_eq!(lcb_choice(&t, 5.0, 0), 1);
        // Edge 1 at a mean of -0.6 (bound -0.6 - 0.0115 z) falls below edge 0 (bound -0.1 z)
        // at z = 1 but not at z = 8.
        let t = root(&[(100, 0.0, 100.0), (50, -30.0, 18.0), (5, 4.5, 4.05)]);
        assert_eq!(lcb_choice(&t, 1.0, 0), 0);
        assert_eq!(lcb_choice(&t, 8.0, 0), 1);
        // Under a tenth of the most visited move's visits (9 of 100) a move is no candidate.
        let t = root(&[(100, 0.0, 100.0), (9, 2.7, 0.81), (5, 4.5, 4.05)]);
        assert_eq!(lcb_choice(&t, 1.0, 0), 0);
        let t = root(&[(100, 0.0, 100.0), (10, 2.7, 0.81), (5, 4.5, 4.05)]);
        assert_eq!(lcb_choice(&t, 1.0, 0), 1);
    }

    #[test]
    fn puct_does_not_play_a_move_proven_to_lose_while_another_is_open() {
        use crate::tree::NodeState;
        // The most visited move leads to a position the solver proved won for the opponent.
        let mut t = root(&[(100, 10.0, 100.0), (40, 0.0, 40.0), (5, 0.0, 5.0)]);
        let lose = |t: &mut Tree, e: usize| {
            let c = t.child[e] as usize;
            t.state[c] = NodeState::Terminal;
            t.raw_value[c] = 1.0;
        };
        lose(&mut t, 0);
        let best = |t: &Tree, solver: bool| {
            let config = SearchConfig {
                algorithm: Algorithm::Puct,
                solver,
                ..SearchConfig::default()
            };
            let stats = RootStats {
                q: vec![0.0; 3],
                completion: completion(t, &config, 0),
                mean_value: 0.0,
                mean_wdl: [0.0, 1.0, 0.0],
            };
            let cx = Ctx {
                tree: t,
                config: &config,
            };
            let out = Puct::default().output(cx, &stats, true);
            t.mv[t.edges(0)]
                .iter()
                .position(|&m| m == out.best)
                .unwrap()
        };
        assert_eq!(best(&t, false), 0, "without the solver: the most visited");
        assert_eq!(best(&t, true), 1, "the most visited of the open moves");
        // A drawn terminal child is no loss.
        let c = t.child[1] as usize;
        t.state[c] = NodeState::Terminal;
        t.raw_value[c] = 0.0;
        assert_eq!(best(&t, true), 1);
        // Every move lost: the most visited after all.
        lose(&mut t, 1);
        lose(&mut t, 2);
        assert_eq!(best(&t, true), 0);
    }
}
