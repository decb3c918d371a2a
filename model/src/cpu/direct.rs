//! Direct convolutions for the CPU forward: `out[row] = bias + sum over taps t of
//! x[src(row, t)] * w[t]`, sixteen outputs of a tile of rows kept in registers while the
//! inputs stream past.
//!
//! A 3x3 convolution as patches times weights copies each input nine times into the patches
//! and the SGEMM then copies the patches once more into its packed panels: on a 5x5 board at
//! batch 16 the copies cost nearly as much time as the multiply-adds. Here each tap reads its
//! source row where it lies, and a padding tap reads a row of zeros. The same loops are
//! compiled for AVX2 + FMA and for AVX-512, chosen at run time; CPUs without AVX2 keep the
//! SGEMM path.

/// Outputs computed together: a multiple of 16 is what a layer needs to take this path.
pub(crate) const LANES: usize = 16;

/// A padding tap in a source table: it reads zeros.
pub(crate) const PAD: u32 = u32::MAX;

/// The environment variable that chooses the CPU forward's convolution kernel (`auto`, the
/// default, or `gemm`: patches and SGEMM everywhere, the reference).
pub const KERNEL_ENV: &str = "TRAINER_CPU_KERNEL";

/// Which loops compute the layers of a multiple of [`LANES`] outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Patches and `matrixmultiply`'s SGEMM (every layer; CPUs without AVX2 and FMA).
    Gemm,
    /// Direct convolutions, AVX2 and FMA.
    Avx2,
    /// Direct convolutions, AVX-512.
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs, unless [`KERNEL_ENV`] says `gemm`.
    pub(crate) fn detect() -> Kernel {
        if kernel_from_env() == Ok(false) {
            return Kernel::Gemm;
        }
        Kernel::available().pop().unwrap_or(Kernel::Gemm)
    }

    /// The kernels this CPU runs, slowest first (always [`Kernel::Gemm`]).
    pub(crate) fn available() -> Vec<Kernel> {
        [Kernel::Gemm, Kernel::Avx2, Kernel::Avx512]
            .into_iter()
            .filter(|k| k.supported())
            .collect()
    }

    /// Whether this CPU has the instructions the kernel is compiled for (the detection is
    /// cached by the standard library).
    fn supported(self) -> bool {
        match self {
            Kernel::Gemm => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => Kernel::Avx2.supported() && is_x86_feature_detected!("avx512f"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
}

/// The name of the kernel a network opened now computes with: `avx512`, `avx2` (direct
/// convolutions) or `gemm`.
pub fn cpu_kernel() -> &'static str {
    match Kernel::detect() {
        Kernel::Gemm => "gemm",
        Kernel::Avx2 => "avx2",
        Kernel::Avx512 => "avx512",
    }
}

/// Whether [`KERNEL_ENV`] lets the direct kernels run (unset, empty or `auto`: yes; `gemm`:
/// no), or why its value is neither.
pub fn kernel_from_env() -> Result<bool, String> {
    match std::env::var(KERNEL_ENV) {
        Ok(v) if v == "gemm" => Ok(false),
        Ok(v) if v.is_empty() || v == "auto" => Ok(true),
        Ok(v) => Err(format!("{KERNEL_ENV}: expected auto or gemm, got {v:?}")),
        Err(std::env::VarError::NotPresent) => Ok(true),
        Err(e) => Err(format!("{KERNEL_ENV}: {e}")),
    }
}

/// One layer's operands: `x` holds rows of `cin` floats; row `r`'s tap `t` reads row
/// `src[r * taps + t]` of `x` ([`PAD`]: zeros), or row `r` itself when `src` is `None` (a 1x1
/// convolution or a linear layer, `taps` 1); `w` is `[taps * cin, cout]` row-major.
pub(crate) struct Conv<'a> {
    pub x: &'a [f32],
    pub cin: usize,
    pub src: Option<&'a [u32]>,
    pub taps: usize,
    pub w: &'a [f32],
    pub bias: &'a [f32],
    pub cout: usize,
}

impl Conv<'_> {
    /// `out[rows, cout]`, overwritten. `kernel` must be one of [`Kernel::available`] other
    /// than [`Kernel::Gemm`], and `cout` a multiple of [`LANES`].
    #[allow(unsafe_code)]
    pub(crate) fn run(&self, kernel: Kernel, rows: usize, out: &mut Vec<f32>) {
        assert!(
            kernel.supported(),
            "{kernel:?} kernel on a CPU without its instructions"
        );
        assert!(self.cout.is_multiple_of(LANES) && self.bias.len() == self.cout);
        assert_eq!(self.w.len(), self.taps * self.cin * self.cout);
        match self.src {
            Some(s) => assert!(
                s.len() >= rows * self.taps
                    && s[..rows * self.taps]
                        .iter()
                        .all(|&i| i == PAD || (i as usize + 1) * self.cin <= self.x.len())
            ),
            None => assert!(self.taps == 1 && rows * self.cin <= self.x.len()),
        }
        out.clear();
        out.resize(rows * self.cout, 0.0);
        let zeros = vec![0.0f32; self.cin];
        match kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU has the kernel's features (asserted above, detected at run
            // time), and the asserts above bound every index the loops use:
            // the rows of `x` the table names, `w`, `bias`, `zeros` (`cin`) and `out`.
            Kernel::Avx512 => unsafe { avx512::run(self, rows, &zeros, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Kernel::Avx2 => unsafe { avx2::run(self, rows, &zeros, out) },
            _ => panic!("no direct convolution kernel {kernel:?} on this CPU"),
        }
    }
}

/// A kernel for one instruction set: `$vec` registers of `$width` floats, tiles of `$rows`
/// rows (then 4, then 1) by [`LANES`] outputs, the sums in registers.
#[cfg(target_arch = "x86_64")]
macro_rules! kernel {
    ($name:ident, $feature:literal, $vec:ty, $width:literal, $rows:literal,
     $zero:ident, $load:ident, $set1:ident, $fma:ident, $store:ident) => {
        /// `out` for `rows` rows of `c` (see [`Conv::run`], which checks every index).
        #[target_feature(enable = $feature)]
        #[allow(unsafe_code)]
        pub(super) unsafe fn $name(c: &Conv<'_>, rows: usize, zeros: &[f32], out: &mut [f32]) {
            let mut r0 = 0;
            while r0 + $rows <= rows {
                tile::<$rows>(c, r0, zeros, out);
                r0 += $rows;
            }
            while r0 + 4 <= rows {
                tile::<4>(c, r0, zeros, out);
                r0 += 4;
            }
            while r0 < rows {
                tile::<1>(c, r0, zeros, out);
                r0 += 1;
            }
        }

        /// Rows `r0..r0 + R`, every output.
        #[target_feature(enable = $feature)]
        #[allow(unsafe_code)]
        unsafe fn tile<const R: usize>(c: &Conv<'_>, r0: usize, zeros: &[f32], out: &mut [f32]) {
            use std::arch::x86_64::*;
            const V: usize = LANES / $width;
            let (cin, cout, taps) = (c.cin, c.cout, c.taps);
            let (x, w, o) = (c.x.as_ptr(), c.w.as_ptr(), out.as_mut_ptr());
            for c0 in (0..cout).step_by(LANES) {
                let mut acc: [[$vec; V]; R] = [[$zero(); V]; R];
                for row in acc.iter_mut() {
                    for (v, a) in row.iter_mut().enumerate() {
                        *a = $load(c.bias.as_ptr().add(c0 + v * $width));
                    }
                }
                for t in 0..taps {
                    let mut xs = [zeros.as_ptr(); R];
                    for (r, p) in xs.iter_mut().enumerate() {
                        let s = match c.src {
                            Some(table) => *table.get_unchecked((r0 + r) * taps + t),
                            None => (r0 + r) as u32,
                        };
                        if s != PAD {
                            *p = x.add(s as usize * cin);
                        }
                    }
                    let wt = w.add(t * cin * cout + c0);
                    for ci in 0..cin {
                        let mut wv = [$zero(); V];
                        for (v, a) in wv.iter_mut().enumerate() {
                            *a = $load(wt.add(ci * cout + v * $width));
                        }
                        for (row, p) in acc.iter_mut().zip(&xs) {
                            let xv = $set1(*p.add(ci));
                            for (a, &wv) in row.iter_mut().zip(&wv) {
                                *a = $fma(xv, wv, *a);
                            }
                        }
                    }
                }
                for (r, row) in acc.iter().enumerate() {
                    for (v, &a) in row.iter().enumerate() {
                        $store(o.add((r0 + r) * cout + c0 + v * $width), a);
                    }
                }
            }
        }
    };
}

/// AVX2 and FMA: 6 rows x 16 outputs, 12 of the 16 vector registers for the sums.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Conv, LANES, PAD};
    kernel!(
        run,
        "avx2,fma",
        __m256,
        8,
        6,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_set1_ps,
        _mm256_fmadd_ps,
        _mm256_storeu_ps
    );
}

/// AVX-512: 8 rows x 16 outputs (measured faster than 6 or 12 on an AMD EPYC).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Conv, LANES, PAD};
    kernel!(
        run,
        "avx512f,avx2,fma",
        __m512,
        16,
        8,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps,
        _mm512_storeu_ps
    );
}

/// The source table of a 3x3 convolution with padding 1 over `n` boards of `ranks x files`
/// (rows ordered board, rank, file): nine taps a row, `(ky, kx)` row-major.
pub(crate) fn taps3(n: usize, ranks: usize, files: usize, out: &mut Vec<u32>) {
    out.clear();
    let sq = ranks * files;
    for b in 0..n {
        for r in 0..ranks as isize {
            for f in 0..files as isize {
                for ky in -1..=1isize {
                    for kx in -1..=1isize {
                        let (rr, ff) = (r + ky, f + kx);
                        out.push(
                            if rr < 0 || ff < 0 || rr >= ranks as isize || ff >= files as isize {
                                PAD
                            } else {
                                (b * sq + rr as usize * files + ff as usize) as u32
                            },
                        );
                    }
                }
            }
        }
    }
}
