//! The search tree: an arena of nodes and edges in struct-of-arrays layout, indexed by `u32`.
//!
//! A node is a position reached in the search; its children are a contiguous run of edges
//! (`first_edge .. first_edge + num_edges`), one per legal move, in the order of the legal
//! move list given to the expansion. An edge's child node is allocated on its first visit.
//! Edge statistics duplicate the child's node statistics from the parent's point of view so
//! that selection reads one contiguous run instead of chasing child indices.

use rules::Move;

/// "No node": the child of an edge never visited.
pub(crate) const NONE: u32 = u32::MAX;

/// What is known about a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// Allocated, waiting for (or never given) its network evaluation.
    Unexpanded,
    /// Evaluated; its edges exist.
    Expanded,
    /// The game is over here; `raw_value` holds the rules' score.
    Terminal,
}

/// Arena of nodes and edges (mctx-style struct of arrays).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tree {
    // ---- nodes: index 0 is the root ----
    /// `[nodes]` visits: the node's own evaluation plus every simulation through it.
    pub visits: Vec<u32>,
    /// `[nodes]` sum of backed-up values, side to move at the node, each in [-1, 1].
    pub value_sum: Vec<f32>,
    /// `[nodes]` sum of the squares of the backed-up values (their spread, for the LCB move
    /// choice).
    pub value_sq_sum: Vec<f32>,
    /// `[nodes][3]` sum of backed-up win/draw/loss, side to move at the node.
    pub wdl_sum: Vec<[f32; 3]>,
    /// `[nodes]` the network's value (win - loss) for the side to move, or the rules' score
    /// for a terminal node; 0 while unexpanded.
    pub raw_value: Vec<f32>,
    /// `[nodes]` index of the first edge (meaningful when expanded).
    pub first_edge: Vec<u32>,
    /// `[nodes]` number of edges (legal moves; 0 unless expanded).
    pub num_edges: Vec<u32>,
    /// `[nodes]` expansion state.
    pub state: Vec<NodeState>,
    // ---- edges ----
    /// `[edges]` the move.
    pub mv: Vec<Move>,
    /// `[edges]` normalised policy log-probability (network logit minus the node's
    /// log-sum-exp): same softmax as the logits, finite, at most 0.
    pub log_prior: Vec<f32>,
    /// `[edges]` policy probability, `exp(log_prior)`.
    pub prior: Vec<f32>,
    /// `[edges]` child node, or [`NONE`] before its first visit.
    pub child: Vec<u32>,
    /// `[edges]` visits of the child (equals the child's `visits`).
    pub edge_visits: Vec<u32>,
    /// `[edges]` sum of the child's backed-up values from the parent's point of view
    /// (the negated child `value_sum`).
    pub edge_value_sum: Vec<f32>,
}

impl Tree {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.visits.len()
    }

    /// Empties the arena, keeping the capacity.
    pub fn clear(&mut self) {
        self.visits.clear();
        self.value_sum.clear();
        self.value_sq_sum.clear();
        self.wdl_sum.clear();
        self.raw_value.clear();
        self.first_edge.clear();
        self.num_edges.clear();
        self.state.clear();
        self.mv.clear();
        self.log_prior.clear();
        self.prior.clear();
        self.child.clear();
        self.edge_visits.clear();
        self.edge_value_sum.clear();
    }

    /// Appends an unexpanded, unvisited node and returns its index.
    pub fn add_node(&mut self) -> u32 {
        let i = self.visits.len() as u32;
        self.visits.push(0);
        self.value_sum.push(0.0);
        self.value_sq_sum.push(0.0);
        self.wdl_sum.push([0.0; 3]);
        self.raw_value.push(0.0);
        self.first_edge.push(0);
        self.num_edges.push(0);
        self.state.push(NodeState::Unexpanded);
        i
    }

    /// The edge range of a node.
    #[inline]
    pub fn edges(&self, node: u32) -> std::ops::Range<usize> {
        let f = self.first_edge[node as usize] as usize;
        f..f + self.num_edges[node as usize] as usize
    }

    /// Expands `node` with one edge per move; priors are the softmax of `logits * inv_t`
    /// (`inv_t`: the inverse of the policy temperature, 1 for the network's own policy).
    pub fn expand(
        &mut self,
        node: u32,
        moves: &[Move],
        logits: &[f32],
        inv_t: f32,
        raw_value: f32,
    ) {
        let n = node as usize;
        let first = self.mv.len();
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let max = if max.is_finite() { max } else { 0.0 };
        let mut sum = 0.0f32;
        for (&m, &l) in moves.iter().zip(logits) {
            // A -inf logit (masked move) gets a tiny prior rather than NaNs.
            let l = if l.is_nan() {
                0.0
            } else {
                ((l - max) * inv_t).max(-80.0)
            };
            let p = l.exp();
            sum += p;
            self.mv.push(m);
            self.log_prior.push(l);
            self.prior.push(p);
            self.child.push(NONE);
            self.edge_visits.push(0);
            self.edge_value_sum.push(0.0);
        }
        let ln_sum = sum.ln();
        for e in first..self.mv.len() {
            self.log_prior[e] -= ln_sum;
            self.prior[e] /= sum;
        }
        self.first_edge[n] = first as u32;
        self.num_edges[n] = moves.len() as u32;
        self.state[n] = NodeState::Expanded;
        self.raw_value[n] = raw_value;
    }

    /// Copies the subtree under `old_root` of `src` into `self` (cleared first), `old_root`
    /// becoming node 0. `stack` is scratch space.
    pub fn copy_subtree(&mut self, src: &Tree, old_root: u32, stack: &mut Vec<(u32, u32)>) {
        self.clear();
        stack.clear();
        let r = self.copy_node(src, old_root);
        stack.push((old_root, r));
        while let Some((o, n)) = stack.pop() {
            if src.state[o as usize] != NodeState::Expanded {
                continue;
            }
            let first = self.mv.len();
            self.first_edge[n as usize] = first as u32;
            self.num_edges[n as usize] = src.num_edges[o as usize];
            for e in src.edges(o) {
                self.mv.push(src.mv[e]);
                self.log_prior.push(src.log_prior[e]);
                self.prior.push(src.prior[e]);
                self.edge_visits.push(src.edge_visits[e]);
                self.edge_value_sum.push(src.edge_value_sum[e]);
                let c = src.child[e];
                if c == NONE {
                    self.child.push(NONE);
                } else {
                    let nc = self.copy_node(src, c);
                    self.child.push(nc);
                    stack.push((c, nc));
                }
            }
        }
    }

    fn copy_node(&mut self, src: &Tree, o: u32) -> u32 {
        let o = o as usize;
        let n = self.add_node();
        let i = n as usize;
        self.visits[i] = src.visits[o];
        self.value_sum[i] = src.value_sum[o];
        self.value_sq_sum[i] = src.value_sq_sum[o];
        self.wdl_sum[i] = src.wdl_sum[o];
        self.raw_value[i] = src.raw_value[o];
        self.state[i] = src.state[o];
        n
    }
}
