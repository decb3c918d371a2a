//! One game's tree search, driven leaf by leaf so that many games can share network batches.
//!
//! Protocol (the self-play driver runs it over many games in lockstep):
//!
//! ```text
//! search.start(simulations, noise);
//! while !search.finished() {
//!     if search.select() {                       // a leaf needs the network
//!         let (logits, wdl) = net(search.leaf_position(), search.leaf_moves());
//!         search.expand(&logits, wdl);
//!     }                                          // else: a terminal leaf was scored by the
//! }                                              // rules, or the budget is spent
//! let result = search.result();
//! search.play(result.best);
//! ```

use crate::config::SearchConfig;
use crate::evaluator::Request;
use crate::parts::{completed_q, completion, parts_for, Ctx, Parts, RootStats};
use crate::rng::Rng;
use crate::tree::{NodeState, Tree, NONE};
use rules::{Move, Position};

/// The outcome of a search: root statistics, the training target and the move to play.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The root's legal moves (its children), in move-generation order.
    pub moves: Vec<Move>,
    /// Visits of each child (including visits kept from a reused tree).
    pub visits: Vec<u32>,
    /// Training target over `moves`, summing to 1. PUCT: the visit distribution (the priors
    /// when no child was visited, e.g. a single legal move). Gumbel: the completed-Q improved
    /// policy `softmax(logits + sigma(completed_q))` (Danihelka et al. 2022), no Gumbel noise.
    pub policy_target: Vec<f32>,
    /// The move to play. PUCT: most visits (ties: higher prior). Gumbel: the sequential-halving
    /// winner, argmax of `g + logits + sigma(q)` over the actions still in the halving.
    pub best: Move,
    /// Value of the root in [-1, 1] for the side to move there. PUCT: the mean backed-up
    /// value. Gumbel: the improved policy's value `sum_a policy_target(a) * q(a)` (the mean
    /// over visits would be dragged down by the visits sequential halving forces on weak
    /// moves).
    pub root_value: f32,
    /// Win/draw/loss of the root for the side to move there, sums to 1. PUCT: the mean
    /// backed-up WDL. Gumbel: `sum_a policy_target(a) * wdl(a)`, wdl(a) the child's mean WDL
    /// (the root's mean WDL for an unvisited child).
    pub root_wdl: [f32; 3],
    /// Per child, the mean value in [-1, 1] from the root player's point of view. An unvisited
    /// child gets the completed value: the root's mixed value approximation `v_mix` (Gumbel
    /// MuZero), never NaN.
    pub q: Vec<f32>,
    /// The network's prior of each child (its policy over `moves`, before any root noise).
    pub prior: Vec<f32>,
    /// `best` forces a win (`search.mate_plies`): the search stopped there, the policy target
    /// holds the winning moves alone and the root value is a win.
    pub forced_win: bool,
}

/// One game's search tree and search state.
///
/// The root is always node 0 of the arena; `play` moves the root by copying the kept subtree
/// into a second arena (then swapping), so memory stays proportional to the live tree and no
/// buffer is reallocated once warm.
pub struct Search {
    /// Settings.
    config: SearchConfig,
    /// The game position at the root (with the game's history, for repetitions).
    root_pos: Position,
    /// Working position: `root_pos` plus the moves of `path_edges`.
    pos: Position,
    /// The arena (node 0 is the root).
    tree: Tree,
    /// Second arena, the target of the subtree copy in `play`.
    spare: Tree,
    /// `[<= nodes]` scratch stack (old node, new node) for the subtree copy.
    copy_stack: Vec<(u32, u32)>,
    /// Noise source.
    rng: Rng,
    /// Whether `start` was called since the last `play` / `new`.
    started: bool,
    /// Noise on for the current search.
    noise: bool,
    /// Simulations to add in the current search.
    budget: u32,
    /// Simulations completed in the current search (root expansion excluded).
    done: u32,
    /// Root-only state (noisy priors, Gumbel, halving) initialised for the current search.
    root_ready: bool,
    /// `[depth + 1]` nodes of the current path, root first.
    path_nodes: Vec<u32>,
    /// `[depth]` edges of the current path.
    path_edges: Vec<u32>,
    /// A leaf waits for `expand`.
    pending: bool,
    /// `[leaf legal moves]` the pending leaf's legal moves (also the move-generation buffer).
    leaf_moves: Vec<Move>,
    /// The algorithm's root preparation, selection rules and outputs.
    parts: Box<dyn Parts>,
    /// Leaves of [`Search::select_batch`] waiting for [`Search::expand_batch`].
    batch: Batch,
    /// `[root edges]` the root moves that force a win (`mate_plies`), found when the root is
    /// prepared; a search with any is over.
    root_wins: Vec<usize>,
}

/// The leaves of one batched descent: their paths and legal moves back to back.
#[derive(Default)]
struct Batch {
    /// Path nodes of every leaf, root first, leaf last.
    nodes: Vec<u32>,
    /// Path edges of every leaf.
    edges: Vec<u32>,
    /// Legal moves of every leaf.
    moves: Vec<Move>,
    /// Per leaf: the ends of its runs in `nodes`, `edges` and `moves`.
    ends: Vec<[u32; 3]>,
}

impl Batch {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The runs of leaf `i` in `nodes`, `edges` and `moves`.
    fn ranges(&self, i: usize) -> [std::ops::Range<usize>; 3] {
        let start = if i == 0 { [0; 3] } else { self.ends[i - 1] };
        let end = self.ends[i];
        [0, 1, 2].map(|k| start[k] as usize..end[k] as usize)
    }

    fn has_leaf(&self, node: u32) -> bool {
        (0..self.len()).any(|i| self.nodes[self.ends[i][0] as usize - 1] == node)
    }

    fn clear(&mut self) {
        self.nodes.clear();
        self.edges.clear();
        self.moves.clear();
        self.ends.clear();
    }
}

/// What one descent found.
enum Descent {
    /// A terminal position, scored by the rules and backed up (the path is unwound).
    Scored,
    /// An unexpanded leaf: the working position is there and its legal moves are generated.
    Leaf,
}

impl Search {
    /// A search over a fresh tree rooted at `root`; `seed` drives the noise.
    pub fn new(config: SearchConfig, root: Position, seed: u64) -> Search {
        let mut tree = Tree::default();
        tree.add_node();
        Search {
            pos: root.clone(),
            root_pos: root,
            tree,
            spare: Tree::default(),
            copy_stack: Vec::new(),
            rng: Rng::new(seed),
            started: false,
            noise: false,
            budget: 0,
            done: 0,
            root_ready: false,
            path_nodes: Vec::with_capacity(64),
            path_edges: Vec::with_capacity(64),
            pending: false,
            leaf_moves: Vec::with_capacity(256),
            parts: parts_for(config.algorithm),
            batch: Batch::default(),
            root_wins: Vec::new(),
            config,
        }
    }

    /// The settings.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The position at the root.
    pub fn root(&self) -> &Position {
        &self.root_pos
    }

    /// Visits of the root node: its own evaluation plus every simulation through it, kept
    /// ones from a reused tree included (0 for a fresh, unevaluated root).
    pub fn root_visits(&self) -> u32 {
        self.tree.visits[0]
    }

    /// Nodes in the tree (for memory statistics).
    pub fn tree_size(&self) -> usize {
        self.tree.num_nodes()
    }

    /// Starts a search of `simulations` visits from the current root (noise: Dirichlet at
    /// the root for PUCT / Gumbel sampling for Gumbel; when false, Gumbel noise is zero and
    /// no Dirichlet — for evaluation games). A fresh root's own evaluation is not counted in
    /// `simulations`. Noise is drawn anew at every start, also on a reused root.
    ///
    /// Panics if the root position is terminal (the driver checks before searching).
    pub fn start(&mut self, simulations: u32, noise: bool) {
        self.abandon_leaf();
        assert!(
            self.root_pos.outcome().is_none(),
            "Search::start: the root position is terminal"
        );
        self.started = true;
        self.noise = noise;
        self.budget = simulations;
        self.done = 0;
        self.root_ready = false;
        if self.tree.state[0] == NodeState::Expanded {
            self.init_root();
        }
    }

    /// Descends to the next leaf. Returns true when the leaf needs a network evaluation (then
    /// call [`leaf_position`](Self::leaf_position) / [`leaf_moves`](Self::leaf_moves) and
    /// [`expand`](Self::expand)); returns false when the simulation completed without the
    /// network (terminal leaf scored by the rules via `Position::outcome()`, or the budget is
    /// exhausted — check [`finished`](Self::finished) and call again if not finished).
    /// Called again while a leaf is pending, it returns true for the same leaf.
    pub fn select(&mut self) -> bool {
        if self.pending {
            return true;
        }
        if self.finished() {
            return false;
        }
        self.path_nodes.clear();
        self.path_edges.clear();
        self.path_nodes.push(0);
        if self.tree.state[0] != NodeState::Expanded {
            // A fresh root: evaluate it first.
            self.pos.generate_legal(&mut self.leaf_moves);
            self.pending = true;
            return true;
        }
        match self.descend() {
            Descent::Scored => false,
            Descent::Leaf => {
                self.pending = true;
                true
            }
        }
    }

    /// Descends from the expanded root to a leaf, scoring a terminal one on the way.
    fn descend(&mut self) -> Descent {
        self.path_nodes.clear();
        self.path_edges.clear();
        self.path_nodes.push(0);
        let mut node = 0u32;
        loop {
            let e = if node == 0 {
                self.select_root_edge()
            } else {
                self.select_interior_edge(node)
            };
            self.path_edges.push(e as u32);
            self.pos.make_move(self.tree.mv[e]);
            let mut child = self.tree.child[e];
            let fresh = child == NONE;
            if fresh {
                child = self.tree.add_node();
                self.tree.child[e] = child;
            }
            self.path_nodes.push(child);
            match self.tree.state[child as usize] {
                NodeState::Expanded => node = child,
                NodeState::Terminal => {
                    let v = self.tree.raw_value[child as usize];
                    self.backup(v, terminal_wdl(v));
                    self.prove();
                    self.unwind();
                    return Descent::Scored;
                }
                NodeState::Unexpanded => {
                    self.pos.generate_legal(&mut self.leaf_moves);
                    if fresh {
                        let mut score = None;
                        if self.maybe_terminal() {
                            score = self
                                .pos
                                .outcome()
                                .map(|o| o.score_for(self.pos.side_to_move()) as f32);
                        }
                        let plies = self.config.mate_plies;
                        if score.is_none()
                            && plies > 0
                            && self.pos.forced_win(&self.leaf_moves, plies).is_some()
                        {
                            score = Some(1.0);
                        }
                        if let Some(v) = score {
                            let c = child as usize;
                            self.tree.state[c] = NodeState::Terminal;
                            self.tree.raw_value[c] = v;
                            self.backup(v, terminal_wdl(v));
                            self.prove();
                            self.unwind();
                            return Descent::Scored;
                        }
                    }
                    return Descent::Leaf;
                }
            }
        }
    }

    /// The position to encode for the pending leaf (the root while no leaf is pending).
    pub fn leaf_position(&self) -> &Position {
        &self.pos
    }

    /// The pending leaf's legal moves, in the order [`expand`](Self::expand) expects logits.
    pub fn leaf_moves(&self) -> &[Move] {
        &self.leaf_moves
    }

    /// Expands the pending leaf and backs its value up. `logits[i]` is the policy logit of
    /// `leaf_moves()[i]`; `wdl` is win/draw/loss for the side to move at the leaf.
    ///
    /// Panics without a pending leaf or when `logits` and `leaf_moves()` differ in length.
    pub fn expand(&mut self, logits: &[f32], wdl: [f32; 3]) {
        assert!(self.pending, "Search::expand: no leaf is pending");
        assert_eq!(
            logits.len(),
            self.leaf_moves.len(),
            "Search::expand: one logit per leaf move"
        );
        let leaf = *self.path_nodes.last().expect("path has the leaf");
        let value = wdl[0] - wdl[2];
        let inv_t = self.config.policy_temperature.recip();
        self.tree
            .expand(leaf, &self.leaf_moves, logits, inv_t, value);
        self.backup(value, wdl);
        self.unwind();
        self.pending = false;
        if leaf == 0 && self.started {
            self.init_root();
        }
    }

    /// Descends to up to `max` leaves before any is evaluated, so that one network call
    /// serves them all (lc0's minibatch): each descent leaves a virtual loss on its path (one
    /// visit counted as a loss for the mover at every edge), which sends the next one
    /// elsewhere. `leaf(position, legal_moves)` is called for each leaf in turn while the
    /// search stands there (encode it then); answer them, in that order, with
    /// [`expand_batch`](Self::expand_batch). Terminal leaves are scored on the way. The
    /// batch ends early at a leaf already in it, where a Gumbel halving phase ends (its cut
    /// must see real values, not virtual losses) and when the budget is spent. A fresh root
    /// is a batch of one. Returns the number of leaves (0: nothing to evaluate; check
    /// [`finished`](Self::finished)).
    ///
    /// Panics while a leaf of [`select`](Self::select) or a batch is pending.
    pub fn select_batch(&mut self, max: usize, mut leaf: impl FnMut(&Position, &[Move])) -> usize {
        assert!(
            !self.pending && self.batch.len() == 0,
            "Search::select_batch: leaves are pending"
        );
        if self.finished() {
            return 0;
        }
        if self.tree.state[0] != NodeState::Expanded {
            self.pos.generate_legal(&mut self.leaf_moves);
            leaf(&self.pos, &self.leaf_moves);
            self.path_nodes.clear();
            self.path_nodes.push(0);
            self.path_edges.clear();
            self.push_batch_leaf();
            return 1;
        }
        while self.batch.len() < max && !self.finished() {
            if self.batch.len() > 0 && self.parts.phase_over() {
                break;
            }
            if let Descent::Leaf = self.descend() {
                let node = *self.path_nodes.last().expect("path has the leaf");
                if self.batch.has_leaf(node) {
                    self.take_back_path();
                    break;
                }
                leaf(&self.pos, &self.leaf_moves);
                self.push_batch_leaf();
                self.take_back_path();
            }
        }
        self.batch.len()
    }

    /// Expands the leaves of the last [`select_batch`](Self::select_batch) with the answers
    /// of `r` (position `i` answers leaf `i`: the logits of its legal moves in the order
    /// given, and its WDL) and backs their values up, the virtual losses taken back.
    ///
    /// Panics when `r` does not answer the batch.
    pub fn expand_batch(&mut self, r: &Request) {
        assert_eq!(
            r.len(),
            self.batch.len(),
            "Search::expand_batch: one answer a leaf"
        );
        assert_eq!(r.wdl.len(), r.len(), "Search::expand_batch: one WDL a leaf");
        self.take_back_virtual_losses();
        let mut b = std::mem::take(&mut self.batch);
        let mut root = false;
        let inv_t = self.config.policy_temperature.recip();
        for i in 0..b.len() {
            let [nodes, edges, moves] = b.ranges(i);
            let logits = &r.logits[r.range(i)];
            assert_eq!(
                logits.len(),
                moves.len(),
                "Search::expand_batch: one logit per leaf move"
            );
            let (nodes, edges) = (&b.nodes[nodes], &b.edges[edges]);
            let leaf = *nodes.last().expect("path has the leaf");
            let wdl = r.wdl[i];
            let value = wdl[0] - wdl[2];
            self.tree
                .expand(leaf, &b.moves[moves], logits, inv_t, value);
            backup_along(&mut self.tree, nodes, edges, value, wdl);
            if !edges.is_empty() {
                self.done += 1;
            }
            root |= leaf == 0;
        }
        b.clear();
        self.batch = b;
        if root && self.started {
            self.init_root();
        }
    }

    /// Whether the started budget is spent (also true before the first `start` after `new` or
    /// `play`, and as soon as the root turns out to have a single legal move). Leaves of a
    /// pending batch count as spent.
    pub fn finished(&self) -> bool {
        if !self.started {
            return true;
        }
        self.root_ready
            && (self.spent() >= self.budget || self.tree.num_edges[0] <= 1 || self.forced_win())
    }

    /// Whether the current search found a root move that forces a win (`mate_plies`): it is
    /// over, and another start would find the same.
    pub fn forced_win(&self) -> bool {
        self.root_ready && !self.root_wins.is_empty()
    }

    /// The root statistics, training target and chosen move.
    ///
    /// Panics if the root has not been evaluated.
    pub fn result(&self) -> SearchResult {
        assert!(
            self.tree.state[0] == NodeState::Expanded,
            "Search::result: the root has not been evaluated"
        );
        let t = &self.tree;
        let range = t.edges(0);
        let comp = completion(t, &self.config, 0);
        let q: Vec<f32> = range
            .clone()
            .map(|e| completed_q(t, e, comp.v_mix))
            .collect();
        let n = t.visits[0].max(1) as f32;
        let w = t.wdl_sum[0];
        let stats = RootStats {
            q,
            completion: comp,
            mean_value: t.value_sum[0] / n,
            mean_wdl: [w[0] / n, w[1] / n, w[2] / n],
        };
        let mut out = self.parts.output(self.ctx(), &stats, self.root_ready);
        let forced_win = self.forced_win();
        if forced_win {
            // Every winning move shares the target; the most likely one by the network is played.
            let first = range.start;
            let share = 1.0 / self.root_wins.len() as f32;
            out.policy_target.iter_mut().for_each(|p| *p = 0.0);
            for &e in &self.root_wins {
                out.policy_target[e - first] = share;
            }
            let best = self.root_wins.iter().copied();
            let best = best.max_by(|&a, &b| t.prior[a].total_cmp(&t.prior[b]));
            out.best = t.mv[best.expect("a winning move")];
            out.root_value = 1.0;
            out.root_wdl = [1.0, 0.0, 0.0];
        }
        SearchResult {
            moves: t.mv[range.clone()].to_vec(),
            visits: t.edge_visits[range.clone()].to_vec(),
            prior: t.prior[range].to_vec(),
            policy_target: out.policy_target,
            best: out.best,
            root_value: out.root_value,
            root_wdl: out.root_wdl,
            q: stats.q,
            forced_win,
        }
    }

    /// The replies searched after the root move `mv`: each legal move of the position after
    /// `mv` with its visits and prior, in move-generation order. Empty when that child has not
    /// been evaluated (never visited, or the game is over there) or `mv` is no root move.
    pub fn replies(&self, mv: Move) -> Vec<(Move, u32, f32)> {
        let t = &self.tree;
        if t.state[0] != NodeState::Expanded {
            return Vec::new();
        }
        let child = t.edges(0).find(|&e| t.mv[e] == mv).map(|e| t.child[e]);
        match child {
            Some(c) if c != NONE && t.state[c as usize] == NodeState::Expanded => t
                .edges(c)
                .map(|e| (t.mv[e], t.edge_visits[e], t.prior[e]))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Bytes the tree's nodes and edges take (both arenas). Their buffers grow by doubling,
    /// so they reserve at most about twice this.
    pub fn memory_bytes(&self) -> usize {
        tree_bytes(&self.tree) + tree_bytes(&self.spare)
    }

    /// Plays `mv` (a legal move) at the root; keeps the subtree when `reuse_tree` (else a fresh
    /// tree). The next search needs a new `start`.
    pub fn play(&mut self, mv: Move) {
        self.abandon_leaf();
        debug_assert!(
            self.root_pos.is_legal(mv),
            "Search::play: illegal move {mv:?}"
        );
        let kept = if self.config.reuse_tree && self.tree.state[0] == NodeState::Expanded {
            self.tree
                .edges(0)
                .find(|&e| self.tree.mv[e] == mv)
                .map(|e| self.tree.child[e])
                // A node the solver proved is searched afresh as a root.
                .filter(|&c| c != NONE && self.tree.state[c as usize] != NodeState::Terminal)
        } else {
            None
        };
        match kept {
            Some(c) => {
                self.spare.copy_subtree(&self.tree, c, &mut self.copy_stack);
                std::mem::swap(&mut self.tree, &mut self.spare);
                self.spare.clear();
            }
            None => {
                self.tree.clear();
                self.tree.add_node();
            }
        }
        self.root_pos.make_move(mv);
        self.pos.make_move(mv);
        self.started = false;
        self.root_ready = false;
        self.parts.clear();
        self.root_wins.clear();
    }

    // ---- internals ----

    /// Drops a pending leaf or batch (the nodes stay unexpanded and are evaluated when
    /// reached again).
    fn abandon_leaf(&mut self) {
        if self.pending {
            self.unwind();
            self.pending = false;
        }
        self.take_back_virtual_losses();
        self.batch.clear();
    }

    /// Simulations done plus those of a pending batch.
    fn spent(&self) -> u32 {
        // A batch of the fresh root alone adds no simulation.
        let in_flight = if self.batch.edges.is_empty() {
            0
        } else {
            self.batch.len()
        };
        self.done + in_flight as u32
    }

    /// Records the current path and leaf moves as a batch leaf, with its virtual loss.
    fn push_batch_leaf(&mut self) {
        let b = &mut self.batch;
        b.nodes.extend_from_slice(&self.path_nodes);
        b.edges.extend_from_slice(&self.path_edges);
        b.moves.extend_from_slice(&self.leaf_moves);
        b.ends
            .push([b.nodes.len(), b.edges.len(), b.moves.len()].map(|n| n as u32));
        virtual_loss(&mut self.tree, &self.path_nodes, &self.path_edges, 1);
    }

    /// Takes back the moves of the current path without counting a simulation.
    fn take_back_path(&mut self) {
        for _ in 0..self.path_edges.len() {
            self.pos.unmake_move();
        }
        self.path_edges.clear();
    }

    /// Removes the virtual losses of the pending batch's paths.
    fn take_back_virtual_losses(&mut self) {
        let b = &self.batch;
        for i in 0..b.len() {
            let [nodes, edges, _] = b.ranges(i);
            virtual_loss(&mut self.tree, &b.nodes[nodes], &b.edges[edges], -1);
        }
    }

    /// Takes back the path's moves and counts the simulation.
    fn unwind(&mut self) {
        for _ in 0..self.path_edges.len() {
            self.pos.unmake_move();
        }
        if !self.path_edges.is_empty() {
            self.done += 1;
        }
        self.path_edges.clear();
    }

    /// A necessary condition for `Position::outcome()` to report a result, checked with
    /// `leaf_moves` already generated (outcome() regenerates moves and allocates, so it is
    /// called only when this holds): no legal move, a repetition count at the variant's
    /// threshold, or the ply limit reached.
    fn maybe_terminal(&self) -> bool {
        let v = self.pos.variant();
        self.leaf_moves.is_empty()
            || (v.repetition > 0 && self.pos.repetition_count() >= v.repetition as usize)
            || (v.max_plies > 0 && self.pos.ply() >= v.max_plies as usize)
    }

    /// Adds `value`/`wdl` (side to move at the leaf) along the path, flipping at every ply.
    fn backup(&mut self, value: f32, wdl: [f32; 3]) {
        backup_along(
            &mut self.tree,
            &self.path_nodes,
            &self.path_edges,
            value,
            wdl,
        );
    }

    /// MCTS-solver (`search.solver`): what the terminal node that ends the current path
    /// proves about its ancestors; a root move proven to win ends the search like the mate
    /// check's.
    fn prove(&mut self) {
        if !self.config.solver {
            return;
        }
        if let Some(e) = prove_along(&mut self.tree, &self.path_nodes, &self.path_edges) {
            if self.root_ready && !self.root_wins.contains(&e) {
                self.root_wins.push(e);
            }
        }
    }

    /// What the algorithm's parts read: the tree and the settings.
    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            tree: &self.tree,
            config: &self.config,
        }
    }

    /// Root state for the current search (noise, and the algorithm's own root state), and
    /// the root moves that force a win. The working position is at the root.
    fn init_root(&mut self) {
        self.root_wins.clear();
        let plies = self.config.mate_plies;
        if plies > 0 {
            // Immediate wins first, then the longer forced ones.
            let edges = self.tree.edges(0);
            for e in edges.clone() {
                if self.pos.wins_at_once(self.tree.mv[e]) {
                    self.root_wins.push(e);
                }
            }
            if self.root_wins.is_empty() && plies >= 3 {
                for e in edges {
                    if self.pos.forces_win(self.tree.mv[e], plies) {
                        self.root_wins.push(e);
                    }
                }
            }
        }
        if self.config.solver && self.root_wins.is_empty() {
            // Proofs kept from the last search (a reused tree).
            let t = &self.tree;
            let lost = |e: usize| t.child[e] != NONE && proven(t, t.child[e]) == Some(false);
            self.root_wins.extend(t.edges(0).filter(|&e| lost(e)));
        }
        let cx = Ctx {
            tree: &self.tree,
            config: &self.config,
        };
        self.parts
            .init_root(cx, self.budget, self.noise, &mut self.rng);
        self.root_ready = true;
    }

    fn select_root_edge(&mut self) -> usize {
        let cx = Ctx {
            tree: &self.tree,
            config: &self.config,
        };
        let remaining = self.budget.saturating_sub(self.spent());
        self.parts.select_root(cx, remaining)
    }

    fn select_interior_edge(&mut self, node: u32) -> usize {
        let cx = Ctx {
            tree: &self.tree,
            config: &self.config,
        };
        self.parts.select_interior(cx, node)
    }
}

/// Adds `value`/`wdl` (side to move at the leaf, the last of `nodes`) along a path of `nodes`
/// joined by `edges`, flipping at every ply.
fn backup_along(t: &mut Tree, nodes: &[u32], edges: &[u32], value: f32, wdl: [f32; 3]) {
    let mut v = value;
    let mut w = wdl;
    for i in (0..nodes.len()).rev() {
        let n = nodes[i] as usize;
        t.visits[n] += 1;
        t.value_sum[n] += v;
        t.value_sq_sum[n] += v * v;
        let s = &mut t.wdl_sum[n];
        s[0] += w[0];
        s[1] += w[1];
        s[2] += w[2];
        if i > 0 {
            let e = edges[i - 1] as usize;
            t.edge_visits[e] += 1;
            t.edge_value_sum[e] -= v;
        }
        v = -v;
        w = [w[2], w[1], w[0]];
    }
}

/// Whether `node` is proven (terminal, or marked by the solver) a win (`Some(true)`) or a loss
/// (`Some(false)`) for its side to move; `None` while open or drawn.
pub(crate) fn proven(t: &Tree, node: u32) -> Option<bool> {
    let n = node as usize;
    if t.state[n] != NodeState::Terminal {
        return None;
    }
    let v = t.raw_value[n];
    (v != 0.0).then_some(v > 0.0)
}

/// MCTS-solver step after a simulation ended at the terminal (or proven) last node of a path:
/// walks up while each node proves its parent, a child lost for its mover making the parent a
/// win, and the last of its children won for their movers a loss. A proven node becomes
/// terminal with the exact value, which every later visit backs up (the statistics gathered
/// before stay: the edge's mean moves towards the exact value visit by visit). The root is
/// never marked: a root edge proven to win is returned instead.
fn prove_along(t: &mut Tree, nodes: &[u32], edges: &[u32]) -> Option<usize> {
    for i in (1..nodes.len()).rev() {
        let e = edges[i - 1] as usize;
        let parent = nodes[i - 1];
        let parent_wins = match proven(t, nodes[i])? {
            false => true,
            true => {
                let lost = |f: usize| t.child[f] != NONE && proven(t, t.child[f]) == Some(true);
                if !t.edges(parent).all(lost) {
                    return None;
                }
                false
            }
        };
        if parent == 0 {
            return parent_wins.then_some(e);
        }
        let p = parent as usize;
        t.state[p] = NodeState::Terminal;
        t.raw_value[p] = if parent_wins { 1.0 } else { -1.0 };
    }
    None
}

/// Adds (`sign` 1) or removes (-1) a virtual loss on a path: a visit of every node and edge,
/// each edge's a loss for the mover who takes it. Node values are left alone (selection reads
/// the edges).
fn virtual_loss(t: &mut Tree, nodes: &[u32], edges: &[u32], sign: i32) {
    for &n in nodes {
        t.visits[n as usize] = t.visits[n as usize].wrapping_add_signed(sign);
    }
    for &e in edges {
        let e = e as usize;
        t.edge_visits[e] = t.edge_visits[e].wrapping_add_signed(sign);
        t.edge_value_sum[e] -= sign as f32;
    }
}

/// Bytes the nodes and edges of `t` take.
fn tree_bytes(t: &Tree) -> usize {
    fn b<T>(v: &[T]) -> usize {
        std::mem::size_of_val(v)
    }
    b(&t.visits)
        + b(&t.value_sum)
        + b(&t.value_sq_sum)
        + b(&t.wdl_sum)
        + b(&t.raw_value)
        + b(&t.first_edge)
        + b(&t.num_edges)
        + b(&t.state)
        + b(&t.mv)
        + b(&t.log_prior)
        + b(&t.prior)
        + b(&t.child)
        + b(&t.edge_visits)
        + b(&t.edge_value_sum)
}

fn terminal_wdl(v: f32) -> [f32; 3] {
    if v > 0.0 {
        [1.0, 0.0, 0.0]
    } else if v < 0.0 {
        [0.0, 0.0, 1.0]
    } else {
        [0.0, 1.0, 0.0]
    }
}

/// Picks a move from a search result with a temperature, for PUCT self-play openings:
/// probability proportional to `visits^(1 / temperature)`; `rng_u01` is a uniform number in
/// [0, 1). Temperature 0 (or no visits at all) gives `result.best`.
pub fn sample_move(result: &SearchResult, temperature: f32, rng_u01: f32) -> Move {
    let visits: Vec<f64> = result.visits.iter().map(|&v| v as f64).collect();
    sample_weighted(result, &visits, temperature, rng_u01)
}

/// Picks a move from a search result's improved policy (`policy_target`) with a temperature,
/// for diverse Gumbel self-play openings: probability proportional to
/// `policy_target^(1 / temperature)`. Temperature 0 gives `result.best`.
pub fn sample_policy(result: &SearchResult, temperature: f32, rng_u01: f32) -> Move {
    let p: Vec<f64> = result.policy_target.iter().map(|&p| p as f64).collect();
    sample_weighted(result, &p, temperature, rng_u01)
}

/// Samples `result.moves` with probability proportional to `weights^(1 / temperature)`
/// (zero weights never); `result.best` at temperature 0, without a positive weight, or when
/// it forces a win.
fn sample_weighted(result: &SearchResult, weights: &[f64], temperature: f32, rng_u01: f32) -> Move {
    let wmax = weights.iter().copied().fold(0.0, f64::max);
    if temperature <= 0.0 || wmax <= 0.0 || !wmax.is_finite() || result.forced_win {
        return result.best;
    }
    let inv_t = 1.0 / temperature as f64;
    let weight = |w: f64| {
        if w > 0.0 {
            ((w / wmax).ln() * inv_t).exp()
        } else {
            0.0
        }
    };
    let total: f64 = weights.iter().map(|&w| weight(w)).sum();
    let target = (rng_u01 as f64).clamp(0.0, 1.0) * total;
    let mut cum = 0.0;
    let mut last = result.best;
    for (&m, &w) in result.moves.iter().zip(weights) {
        let w = weight(w);
        if w > 0.0 {
            cum += w;
            last = m;
            if target < cum {
                return m;
            }
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;
    use std::sync::Arc;

    /// Every expanded node's visits are its own evaluation plus its edges' visits; every
    /// edge's statistics are its child's, from the parent's side; every node's squared values
    /// sum to at most its visits and at least its mean's square times its visits.
    fn assert_consistent(t: &Tree) {
        for n in 0..t.num_nodes() {
            let (v, s, sq) = (t.visits[n] as f32, t.value_sum[n], t.value_sq_sum[n]);
            assert!(sq <= v + 1e-3, "node {n}: {sq} squared over {v} visits");
            assert!(
                v == 0.0 || sq >= s * s / v - 1e-3,
                "node {n}: {sq} against {s}, {v}"
            );
            if t.state[n] != NodeState::Expanded {
                continue;
            }
            let edges = t.edges(n as u32);
            let below: u32 = t.edge_visits[edges.clone()].iter().sum();
            assert_eq!(t.visits[n], below + 1, "node {n}");
            for e in edges {
                let c = t.child[e];
                if c == NONE {
                    assert_eq!(t.edge_visits[e], 0);
                    continue;
                }
                assert_eq!(t.edge_visits[e], t.visits[c as usize], "edge {e}");
                let (ev, cv) = (t.edge_value_sum[e], t.value_sum[c as usize]);
                assert!((ev + cv).abs() < 1e-3, "edge {e}: {ev} against {cv}");
            }
        }
    }

    fn answer(s: &mut Search, max: usize) -> usize {
        let mut r = Request::default();
        let n = s.select_batch(max, |p, moves| {
            r.add_position(0);
            r.moves.extend(0..moves.len() as u32);
            r.end_position();
            r.logits.extend(moves.iter().map(|m| (m.to() as f32).sin()));
            let v = (p.ply() as f32 * 0.37).sin() * 0.5;
            r.wdl.push([0.5 + v / 2.0, 0.0, 0.5 - v / 2.0]);
        });
        if n > 0 {
            s.expand_batch(&r);
        }
        n
    }

    #[test]
    fn virtual_losses_leave_no_trace() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        for algorithm in [crate::Algorithm::Puct, crate::Algorithm::Gumbel] {
            let config = SearchConfig {
                algorithm,
                ..SearchConfig::default()
            };
            let mut s = Search::new(config, Position::start(v.clone()), 1);
            s.start(300, true);
            while !s.finished() {
                answer(&mut s, 12);
            }
            assert_consistent(&s.tree);
            assert_eq!(s.root_visits(), 301);
            // A batch abandoned by a new start leaves its nodes unexpanded and no visit.
            s.start(40, false);
            let mut r = Request::default();
            let n = s.select_batch(8, |_, moves| {
                r.moves.extend(0..moves.len() as u32);
            });
            assert!(n > 1, "{algorithm:?}: {n} leaves");
            s.start(40, false);
            assert_consistent(&s.tree);
            assert_eq!(s.root_visits(), 301);
            while !s.finished() {
                answer(&mut s, 8);
            }
            assert_consistent(&s.tree);
            assert_eq!(s.root_visits(), 341);
            // Playing a move keeps a consistent subtree.
            let best = s.result().best;
            s.play(best);
            assert_consistent(&s.tree);
        }
    }

    /// Every node the solver marked (terminal with edges) is what its children prove.
    fn assert_proofs(t: &Tree) -> usize {
        let mut marked = 0;
        for n in 1..t.num_nodes() as u32 {
            let Some(wins) = proven(t, n) else { continue };
            if t.num_edges[n as usize] == 0 {
                continue;
            }
            marked += 1;
            let child = |e: usize| {
                (t.child[e] != NONE)
                    .then(|| proven(t, t.child[e]))
                    .flatten()
            };
            if wins {
                assert!(t.edges(n).any(|e| child(e) == Some(false)), "node {n}");
            } else {
                assert!(t.edges(n).all(|e| child(e) == Some(true)), "node {n}");
            }
        }
        marked
    }

    #[test]
    fn solver_proofs_hold_and_virtual_losses_leave_no_trace() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let mut rng = crate::rng::Rng::new(7);
        let mut marked = 0;
        for game in 0..12 {
            let mut p = Position::start(v.clone());
            for _ in 0..(16 + 2 * game) {
                let legal = p.legal_moves();
                if legal.is_empty() || p.outcome().is_some() {
                    break;
                }
                p.make_move(legal[(rng.next_u64() % legal.len() as u64) as usize]);
            }
            if p.outcome().is_some() {
                continue;
            }
            let config = SearchConfig {
                algorithm: crate::Algorithm::Puct,
                mate_plies: 1,
                solver: true,
                ..SearchConfig::default()
            };
            let mut s = Search::new(config, p, 1);
            s.start(3000, false);
            while !s.finished() {
                answer(&mut s, 8);
            }
            assert_consistent(&s.tree);
            marked += assert_proofs(&s.tree);
        }
        assert!(marked > 0, "no node proven");
    }
}
