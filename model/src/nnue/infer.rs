//! Integer inference of a `.nnue` network, step for step as Fairy-Stockfish computes it, and
//! the numbers of its `eval` command written as it writes them.
//!
//! From its src/nnue/ (`FeatureTransformer::transform`, `AffineTransform`, `ClippedReLU`,
//! `evaluate`): the accumulator of each perspective is the biases plus the weight rows of the
//! active features in 16-bit wrapping arithmetic (its SIMD adds wrap), the PSQT sums in 32
//! bits; the side to move's half comes first, each clamped to 0..=127; the PSQT term is
//! `(own - other) / 2` of the bucket; each hidden layer is a 32-bit dot product plus bias,
//! shifted right by 6 and clamped to 0..=127; the output plus the PSQT term, divided by 16, is
//! the evaluation in Fairy-Stockfish's internal units for the side to move.

use super::error::NnueError;
use super::file::{LayerStack, NnueNet, L2_PADDED};
use super::layout::FeatureLayout;
use super::{L1, L2, L3, LAYER_STACKS, OUTPUT_SCALE, PSQT_BUCKETS, WEIGHT_SCALE_BITS};
use rules::{Color, Position};

/// Fairy-Stockfish's `PawnValueEg`, the unit of the pawns its `eval` prints.
pub const PAWN_VALUE_EG: i32 = 208;

/// A position's evaluation in every bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The bucket the position uses.
    pub bucket: usize,
    /// The PSQT term per bucket (`materialist`, before the division by 16).
    pub psqt: [i32; PSQT_BUCKETS],
    /// The layer stack's output per bucket (`positional`, before the division by 16).
    pub positional: [i32; LAYER_STACKS],
    /// The side to move.
    pub side: Color,
}

impl Evaluation {
    /// `NNUE::evaluate(pos, false)`: internal units, for the side to move.
    pub fn value(&self) -> i32 {
        let b = self.bucket;
        // (128 * materialist + 128 * positional) / 128, as its 32-bit arithmetic does.
        let sum = 128i32
            .wrapping_mul(self.psqt[b])
            .wrapping_add(128i32.wrapping_mul(self.positional[b]))
            / 128;
        sum / OUTPUT_SCALE
    }

    /// [`Evaluation::value`] from sente's ("white's") side, as `eval` prints it.
    pub fn value_sente(&self) -> i32 {
        match self.side {
            Color::Sente => self.value(),
            Color::Gote => -self.value(),
        }
    }

    /// The line `NNUE evaluation` of Fairy-Stockfish's `eval`: pawns with two decimals, from
    /// sente's side (`+0.38`).
    pub fn fsf_eval_text(&self) -> String {
        pawns_text(self.value_sente())
    }

    /// The three columns of its bucket table (`NNUE network contributions`) for each bucket:
    /// PSQT, layers and their total, from the side to move's view (`+ 12.34`).
    pub fn fsf_bucket_texts(&self) -> [[String; 3]; LAYER_STACKS] {
        std::array::from_fn(|b| {
            let m = self.psqt[b] / OUTPUT_SCALE;
            let p = self.positional[b] / OUTPUT_SCALE;
            [
                aligned_cp_text(m),
                aligned_cp_text(p),
                aligned_cp_text(m.wrapping_add(p)),
            ]
        })
    }
}

/// `to_cp(v)` printed with `std::fixed`, `std::setprecision(2)` and `std::showpos`: `v / 208`
/// rounded to two decimals, ties to even (the tie values are exact in binary, and printf
/// rounds them to even); a negative value keeps its sign even when it rounds to zero.
pub fn pawns_text(v: i32) -> String {
    let n = i64::from(v).unsigned_abs() * 25; // hundredths times 52
    let (mut cents, rest) = (n / 52, n % 52);
    if 2 * rest > 52 || (2 * rest == 52 && cents % 2 == 1) {
        cents += 1;
    }
    let sign = if v < 0 { '-' } else { '+' };
    format!("{sign}{}.{:02}", cents / 100, cents % 100)
}

/// `format_cp_aligned_dot` of its src/nnue/evaluate_nnue.cpp: sign (or a space for zero) and
/// the integer centipawns `|100 v / 208|` in seven characters (`+ 12.34`, `+  0.05`).
pub fn aligned_cp_text(v: i32) -> String {
    let sign = match v.signum() {
        -1 => '-',
        1 => '+',
        _ => ' ',
    };
    let cp = (100i64 * i64::from(v) / i64::from(PAWN_VALUE_EG)).unsigned_abs();
    let d = |x: u64| char::from(b'0' + (x % 10) as u8);
    if cp >= 10000 {
        format!(
            "{sign}{}{}{}.{}{}",
            d(cp / 10000),
            d(cp / 1000),
            d(cp / 100),
            d(cp / 10),
            d(cp)
        )
    } else if cp >= 1000 {
        format!(
            "{sign} {}{}.{}{}",
            d(cp / 1000),
            d(cp / 100),
            d(cp / 10),
            d(cp)
        )
    } else {
        format!("{sign}  {}.{}{}", d(cp / 100), d(cp / 10), d(cp))
    }
}

/// One perspective's accumulator.
struct Accumulator {
    values: Vec<i16>,
    psqt: [i32; PSQT_BUCKETS],
}

impl NnueNet {
    fn accumulate(&self, features: &[u32]) -> Accumulator {
        let mut values = self.ft_bias.clone();
        let mut psqt = [0i32; PSQT_BUCKETS];
        for &f in features {
            let f = f as usize;
            let row = &self.ft_weight[f * L1..(f + 1) * L1];
            for (a, &w) in values.iter_mut().zip(row) {
                *a = a.wrapping_add(w);
            }
            let prow = &self.psqt_weight[f * PSQT_BUCKETS..(f + 1) * PSQT_BUCKETS];
            for (a, &w) in psqt.iter_mut().zip(prow) {
                *a = a.wrapping_add(w);
            }
        }
        Accumulator { values, psqt }
    }

    /// The evaluation of `pos` in every bucket. The network must have the layout's number of
    /// features.
    pub fn evaluate(
        &self,
        layout: &FeatureLayout,
        pos: &Position,
    ) -> Result<Evaluation, NnueError> {
        if self.dims != layout.dims() {
            return Err(NnueError::File {
                reason: format!(
                    "the network has {} features, {} has {}",
                    self.dims,
                    layout.rules().name,
                    layout.dims()
                ),
            });
        }
        self.check_shapes()?;
        let side = pos.side_to_move();
        let (mut own, mut other) = (Vec::new(), Vec::new());
        layout.features(pos, side, &mut own);
        layout.features(pos, side.flip(), &mut other);
        let (input, psqt) = self.transform(&own, &other);
        let positional = std::array::from_fn(|b| self.stacks[b].propagate(&input));
        Ok(Evaluation {
            bucket: layout.bucket(pos),
            psqt,
            positional,
            side,
        })
    }

    /// The feature transformer: the clamped accumulators (side to move first) and the PSQT
    /// term of every bucket.
    fn transform(&self, own: &[u32], other: &[u32]) -> ([u8; 2 * L1], [i32; PSQT_BUCKETS]) {
        let acc = [self.accumulate(own), self.accumulate(other)];
        let mut input = [0u8; 2 * L1];
        for (half, a) in acc.iter().enumerate() {
            for (x, &v) in input[half * L1..(half + 1) * L1].iter_mut().zip(&a.values) {
                *x = v.clamp(0, 127) as u8;
            }
        }
        let psqt = std::array::from_fn(|b| acc[0].psqt[b].wrapping_sub(acc[1].psqt[b]) / 2);
        (input, psqt)
    }

    /// `NNUE::evaluate(pos, false)` of a position given by its features (side to move first)
    /// and bucket. Features past the network's rows are ignored; the network's arrays must
    /// have their sizes ([`NnueNet::check_shapes`]).
    pub fn evaluate_features(&self, own: &[u32], other: &[u32], bucket: usize) -> i32 {
        let keep = |f: &[u32]| -> Vec<u32> {
            f.iter()
                .copied()
                .filter(|&x| (x as usize) < self.dims)
                .collect()
        };
        let (input, psqt) = self.transform(&keep(own), &keep(other));
        let b = bucket.min(LAYER_STACKS - 1);
        let mut positional = [0; LAYER_STACKS];
        positional[b] = self.stacks[b].propagate(&input);
        Evaluation {
            bucket: b,
            psqt,
            positional,
            side: Color::Sente,
        }
        .value()
    }
}

/// A clipped ReLU of a 32-bit sum: `clamp(x >> 6, 0, 127)`.
fn clipped(x: i32) -> u8 {
    (x >> WEIGHT_SCALE_BITS).clamp(0, 127) as u8
}

fn dot(weights: &[i8], input: &[u8]) -> i32 {
    weights.iter().zip(input).fold(0i32, |s, (&w, &x)| {
        s.wrapping_add(i32::from(w) * i32::from(x))
    })
}

impl LayerStack {
    /// The stack's output for the transformed features.
    pub fn propagate(&self, input: &[u8; 2 * L1]) -> i32 {
        let h1: [u8; L2] = std::array::from_fn(|i| {
            let row = &self.l1_weight[i * 2 * L1..(i + 1) * 2 * L1];
            clipped(self.l1_bias[i].wrapping_add(dot(row, input)))
        });
        let h2: [u8; L3] = std::array::from_fn(|i| {
            // Stored rows are padded to 32 inputs; the padding meets no input.
            let row = &self.l2_weight[i * L2_PADDED..i * L2_PADDED + L2];
            clipped(self.l2_bias[i].wrapping_add(dot(row, &h1)))
        });
        self.out_bias.wrapping_add(dot(&self.out_weight, &h2))
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::FsfRules;
    use super::*;
    use rules::Variant;
    use std::sync::Arc;

    #[test]
    fn pawn_texts_round_as_printf() {
        assert_eq!(pawns_text(0), "+0.00");
        assert_eq!(pawns_text(79), "+0.38"); // 0.3798
        assert_eq!(pawns_text(-1), "-0.00");
        assert_eq!(pawns_text(208), "+1.00");
        // 26 / 208 = 0.125 exactly: ties to even, 0.12; 78 / 208 = 0.375: 0.38.
        assert_eq!(pawns_text(26), "+0.12");
        assert_eq!(pawns_text(78), "+0.38");
        assert_eq!(pawns_text(-26), "-0.12");
        assert_eq!(pawns_text(-20_800), "-100.00");
        assert_eq!(pawns_text(i32::MIN), "-10324440.62");
    }

    #[test]
    fn aligned_texts_as_fairy_stockfish() {
        assert_eq!(aligned_cp_text(0), "   0.00");
        assert_eq!(aligned_cp_text(1), "+  0.00");
        assert_eq!(aligned_cp_text(-3), "-  0.01");
        assert_eq!(aligned_cp_text(2080), "+ 10.00");
        assert_eq!(aligned_cp_text(-25_000), "-120.19");
        assert_eq!(aligned_cp_text(i32::MAX).len(), 7);
    }

    /// A network whose output can be worked out by hand.
    #[test]
    fn a_hand_made_network_evaluates_as_computed() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let rules = FsfRules::for_variant(&v, None).unwrap();
        let layout = FeatureLayout::new(&v, &rules).unwrap();
        let mut net = NnueNet::zeros(layout.dims(), "hand");
        let pos = Position::start(v.clone());
        let mut own = Vec::new();
        layout.features(&pos, Color::Sente, &mut own);
        // Every active feature of sente adds 10 to accumulator 0 and 100 to PSQT bucket 7.
        for &f in &own {
            net.ft_weight[f as usize * L1] = 10;
            net.psqt_weight[f as usize * PSQT_BUCKETS + 7] = 100;
        }
        // Layer 1 neuron 0 reads input 0 with weight 64; layer 2 neuron 0 reads it with 64;
        // the output reads that with 2.
        for s in &mut net.stacks {
            s.l1_weight[0] = 64;
            s.l2_weight[0] = 64;
            s.out_weight[0] = 2;
            s.out_bias = 5;
        }
        let e = net.evaluate(&layout, &pos).unwrap();
        assert_eq!(e.bucket, 7);
        // Sente's accumulator 0 = 12 * 10 = 120 (gote's features differ from sente's except
        // where both see the same pieces... computed below).
        let mut theirs = Vec::new();
        layout.features(&pos, Color::Gote, &mut theirs);
        let shared = theirs.iter().filter(|f| own.contains(f)).count() as i32;
        let x = 120;
        let h1 = (64 * x) >> 6;
        let h2 = (64 * h1) >> 6;
        assert_eq!(e.positional[7], 5 + 2 * h2);
        assert_eq!(e.psqt[7], (1200 - 100 * shared) / 2);
        assert_eq!(e.value(), (e.psqt[7] + e.positional[7]) / 16);
        // Gote to move: the halves swap.
        let g = Position::from_sfen(&v, "rbsgk/4p/5/P4/KGSBR w - 1").unwrap();
        let eg = net.evaluate(&layout, &g).unwrap();
        assert_eq!(eg.psqt[7], -e.psqt[7]);
        assert_eq!(eg.value_sente(), -eg.value());
        assert!(net.evaluate(&layout, &pos).is_ok());
        let small = NnueNet::zeros(10, "x");
        assert!(small.evaluate(&layout, &pos).is_err());
    }
}
