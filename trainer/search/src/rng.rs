//! The samplers the search needs (uniform, normal, Gamma (Marsaglia–Tsang), Dirichlet and
//! Gumbel) on the project's one generator, `rules::SplitMix64`.
//!
//! Own code rather than `rand` so that a seed gives the same games on every platform and
//! every version of the dependencies.

use rules::SplitMix64;

/// The search's generator: SplitMix64 with the samplers below.
#[derive(Clone, Debug)]
pub(crate) struct Rng(SplitMix64);

impl Rng {
    /// A generator seeded from `seed` (any value, 0 included).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(SplitMix64(seed))
    }

    /// 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in the open interval (0, 1).
    pub(crate) fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Marsaglia polar method; the second value is dropped).
    pub(crate) fn normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.open01() - 1.0;
            let v = 2.0 * self.open01() - 1.0;
            let s = u * u + v * v;
            if s < 1.0 && s > 0.0 {
                return u * (-2.0 * s.ln() / s).sqrt();
            }
        }
    }

    /// Natural log of a Gamma(alpha, 1) sample (alpha > 0). Logs so that tiny alphas, whose
    /// samples underflow, stay usable.
    pub(crate) fn ln_gamma_sample(&mut self, alpha: f64) -> f64 {
        if alpha < 1.0 {
            // Gamma(a) = Gamma(a + 1) * U^(1/a).
            return self.ln_gamma_sample(alpha + 1.0) + self.open01().ln() / alpha;
        }
        // Marsaglia & Tsang (2000).
        let d = alpha - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let t = 1.0 + c * x;
            if t <= 0.0 {
                continue;
            }
            let v = t * t * t;
            let u = self.open01();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return (d * v).ln();
            }
        }
    }

    /// Fills `out` with a Dirichlet(alpha, ..., alpha) sample of its length.
    pub(crate) fn dirichlet(&mut self, alpha: f64, out: &mut [f32]) {
        if out.is_empty() {
            return;
        }
        let mut max = f64::NEG_INFINITY;
        // Logs are kept in `out` (f32 is plenty for a log) and normalised by a softmax.
        for o in out.iter_mut() {
            let l = self.ln_gamma_sample(alpha);
            max = max.max(l);
            *o = l as f32;
        }
        let mut sum = 0.0f64;
        for o in out.iter_mut() {
            let e = ((*o as f64) - max).exp();
            *o = e as f32;
            sum += e;
        }
        for o in out.iter_mut() {
            *o = (*o as f64 / sum) as f32;
        }
    }

    /// A standard Gumbel sample: -ln(-ln U).
    pub(crate) fn gumbel(&mut self) -> f32 {
        (-(-self.open01().ln()).ln()) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..1000 {
            let x = a.open01();
            assert_eq!(x, b.open01());
            assert!(x > 0.0 && x < 1.0);
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn gamma_and_gumbel_moments() {
        let mut r = Rng::new(3);
        for alpha in [0.1f64, 0.5, 1.0, 3.0] {
            let n = 200_000;
            let mean: f64 = (0..n).map(|_| r.ln_gamma_sample(alpha).exp()).sum::<f64>() / n as f64;
            assert!(
                (mean - alpha).abs() < 0.03 * alpha.max(1.0),
                "alpha {alpha}: mean {mean}"
            );
        }
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.gumbel() as f64).sum::<f64>() / n as f64;
        assert!((mean - 0.5772).abs() < 0.02, "gumbel mean {mean}");
    }

    #[test]
    fn dirichlet_sums_to_one_even_for_tiny_alpha() {
        let mut r = Rng::new(5);
        let mut out = vec![0.0f32; 100];
        for alpha in [0.01f64, 0.1, 1.0] {
            r.dirichlet(alpha, &mut out);
            let s: f32 = out.iter().sum();
            assert!((s - 1.0).abs() < 1e-4, "{s}");
            assert!(out.iter().all(|x| x.is_finite() && *x >= 0.0));
        }
    }
}
