//! The `.nnue` file: Fairy-Stockfish's quantised network and its byte layout.
//!
//! Read order of its src/nnue/evaluate_nnue.cpp (`read_parameters`), every integer little
//! endian:
//!
//! ```text
//! u32 version 0x7AF32F20, u32 network hash, u32 n, n bytes of description
//! u32 feature transformer hash (0x5f234cb8 ^ 1024)
//!     i16 biases[512], i16 weights[dims][512], i32 psqt weights[dims][8]
//! 8 times (one per layer stack): u32 hash of the layers, then from the input up:
//!     i32 biases[16], i8 weights[16][1024]
//!     i32 biases[32], i8 weights[32][32]      (inputs padded from 16 to 32 with zeros)
//!     i32 bias[1],    i8 weights[1][32]
//! ```
//!
//! and nothing after it (Fairy-Stockfish refuses a file with trailing bytes). `dims` is not in
//! the file: the engine takes it from the variant ([`super::FeatureLayout::dims`]).

use super::error::NnueError;
use super::{L1, L2, L3, LAYER_STACKS, PSQT_BUCKETS};

/// `Version` of src/nnue/nnue_common.h.
pub const VERSION: u32 = 0x7AF3_2F20;
/// `HalfKAv2Variants::HashValue`.
pub const FEATURE_HASH: u32 = 0x5f23_4cb8;

/// Inputs of the second hidden layer as stored: padded to a multiple of 32.
pub const L2_PADDED: usize = 32;

/// Hash of the feature transformer (`FeatureTransformer::get_hash_value`).
pub const fn transformer_hash() -> u32 {
    FEATURE_HASH ^ (2 * L1 as u32)
}

/// Hash of `AffineTransform<prev, out>`.
const fn affine_hash(prev: u32, out: u32) -> u32 {
    let mut h = 0xCC03_DAE4u32.wrapping_add(out);
    h ^= prev >> 1;
    h ^= prev << 31;
    h
}

/// Hash of `ClippedReLU<prev>`.
const fn clipped_relu_hash(prev: u32) -> u32 {
    0x538D_24C7u32.wrapping_add(prev)
}

/// Hash of the layer stack (`Network::get_hash_value`): input slice, 16, 32, 1.
pub const fn layers_hash() -> u32 {
    let input = 0xEC42_E90Du32 ^ (2 * L1 as u32);
    let h1 = clipped_relu_hash(affine_hash(input, L2 as u32));
    let h2 = clipped_relu_hash(affine_hash(h1, L3 as u32));
    affine_hash(h2, 1)
}

/// The network hash of the header.
pub const fn network_hash() -> u32 {
    transformer_hash() ^ layers_hash()
}

/// One layer stack: three affine layers with their quantised weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerStack {
    /// First hidden layer biases `[16]` (scale 127 * 64).
    pub l1_bias: Vec<i32>,
    /// Its weights `[16][1024]` (scale 64).
    pub l1_weight: Vec<i8>,
    /// Second hidden layer biases `[32]`.
    pub l2_bias: Vec<i32>,
    /// Its weights `[32][32]`, the last 16 inputs of each row zero (padding).
    pub l2_weight: Vec<i8>,
    /// Output bias (scale 9600).
    pub out_bias: i32,
    /// Output weights `[32]` (scale 9600 / 127).
    pub out_weight: Vec<i8>,
}

impl LayerStack {
    /// All zero.
    pub fn zeros() -> LayerStack {
        LayerStack {
            l1_bias: vec![0; L2],
            l1_weight: vec![0; L2 * 2 * L1],
            l2_bias: vec![0; L3],
            l2_weight: vec![0; L3 * L2_PADDED],
            out_bias: 0,
            out_weight: vec![0; L3],
        }
    }

    /// Bytes of one stack in the file, its hash included.
    const BYTES: usize = 4 + 4 * L2 + L2 * 2 * L1 + 4 * L3 + L3 * L2_PADDED + 4 + L3;
}

/// A quantised network as Fairy-Stockfish reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NnueNet {
    /// Free text of the header.
    pub description: String,
    /// Number of input features.
    pub dims: usize,
    /// Feature transformer biases `[512]` (scale 127).
    pub ft_bias: Vec<i16>,
    /// Feature transformer weights `[dims][512]` (scale 127).
    pub ft_weight: Vec<i16>,
    /// PSQT weights `[dims][8]` (scale 9600).
    pub psqt_weight: Vec<i32>,
    /// The 8 layer stacks.
    pub stacks: Vec<LayerStack>,
}

/// A little-endian reader that reports where the bytes ran out.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], NnueError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| NnueError::File {
            reason: format!(
                "ends inside {what} (byte {} of {}, {n} more wanted)",
                self.at,
                self.bytes.len()
            ),
        })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, NnueError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn expect_u32(&mut self, want: u32, what: &str) -> Result<(), NnueError> {
        let got = self.u32(what)?;
        if got != want {
            return Err(NnueError::File {
                reason: format!("{what} is {got:#010x}, Fairy-Stockfish wants {want:#010x}"),
            });
        }
        Ok(())
    }

    fn i32s(&mut self, n: usize, what: &str) -> Result<Vec<i32>, NnueError> {
        let b = self.take(n * 4, what)?;
        Ok(b.chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    fn i16s(&mut self, n: usize, what: &str) -> Result<Vec<i16>, NnueError> {
        let b = self.take(n * 2, what)?;
        Ok(b.chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect())
    }

    fn i8s(&mut self, n: usize, what: &str) -> Result<Vec<i8>, NnueError> {
        Ok(self.take(n, what)?.iter().map(|&b| b as i8).collect())
    }
}

impl NnueNet {
    /// An all-zero network of `dims` features.
    pub fn zeros(dims: usize, description: &str) -> NnueNet {
        NnueNet {
            description: description.to_string(),
            dims,
            ft_bias: vec![0; L1],
            ft_weight: vec![0; dims * L1],
            psqt_weight: vec![0; dims * PSQT_BUCKETS],
            stacks: vec![LayerStack::zeros(); LAYER_STACKS],
        }
    }

    /// Bytes of the file apart from the description, for `dims` features.
    fn fixed_bytes(dims: usize) -> Option<usize> {
        let ft = dims.checked_mul(2 * L1 + 4 * PSQT_BUCKETS)?;
        (12 + 4 + 2 * L1 + LAYER_STACKS * LayerStack::BYTES).checked_add(ft)
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let desc = self.description.as_bytes();
        let mut out = Vec::with_capacity(Self::fixed_bytes(self.dims).unwrap_or(0) + desc.len());
        let u32le = |out: &mut Vec<u8>, x: u32| out.extend_from_slice(&x.to_le_bytes());
        u32le(&mut out, VERSION);
        u32le(&mut out, network_hash());
        u32le(&mut out, desc.len() as u32);
        out.extend_from_slice(desc);
        u32le(&mut out, transformer_hash());
        self.ft_bias
            .iter()
            .chain(&self.ft_weight)
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        self.psqt_weight
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        for s in &self.stacks {
            u32le(&mut out, layers_hash());
            let layers: [(&[i32], &[i8]); 3] = [
                (&s.l1_bias, &s.l1_weight),
                (&s.l2_bias, &s.l2_weight),
                (std::slice::from_ref(&s.out_bias), &s.out_weight),
            ];
            for (b, w) in layers {
                b.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
                out.extend(w.iter().map(|&x| x as u8));
            }
        }
        out
    }

    /// Reads a file's bytes, checking version, hashes and size as Fairy-Stockfish does. The
    /// number of features follows from the size; `dims`, when given, must be it.
    pub fn from_bytes(bytes: &[u8], dims: Option<usize>) -> Result<NnueNet, NnueError> {
        let mut r = Reader { bytes, at: 0 };
        r.expect_u32(VERSION, "the version")?;
        r.expect_u32(network_hash(), "the network hash")?;
        let n = r.u32("the description length")? as usize;
        let desc = r.take(n, "the description")?;
        let description = String::from_utf8_lossy(desc).into_owned();
        let fixed = bytes.len() - r.at + 12;
        let per_feature = 2 * L1 + 4 * PSQT_BUCKETS;
        let base = Self::fixed_bytes(0).expect("fits");
        let found = fixed
            .checked_sub(base)
            .filter(|rest| rest % per_feature == 0)
            .map(|rest| rest / per_feature)
            .ok_or_else(|| NnueError::File {
                reason: format!(
                    "{} bytes is no network of this architecture (512x2-16-32-1, 8 buckets) \
                     for any number of features",
                    bytes.len()
                ),
            })?;
        if let Some(d) = dims.filter(|&d| d != found) {
            return Err(NnueError::File {
                reason: format!("has {found} features, the variant has {d}"),
            });
        }
        r.expect_u32(transformer_hash(), "the feature transformer hash")?;
        let ft_bias = r.i16s(L1, "the feature transformer biases")?;
        let ft_weight = r.i16s(found * L1, "the feature transformer weights")?;
        let psqt_weight = r.i32s(found * PSQT_BUCKETS, "the PSQT weights")?;
        let mut stacks = Vec::with_capacity(LAYER_STACKS);
        for i in 0..LAYER_STACKS {
            r.expect_u32(layers_hash(), &format!("the hash of layer stack {i}"))?;
            stacks.push(LayerStack {
                l1_bias: r.i32s(L2, "layer 1 biases")?,
                l1_weight: r.i8s(L2 * 2 * L1, "layer 1 weights")?,
                l2_bias: r.i32s(L3, "layer 2 biases")?,
                l2_weight: r.i8s(L3 * L2_PADDED, "layer 2 weights")?,
                out_bias: r.i32s(1, "the output bias")?[0],
                out_weight: r.i8s(L3, "the output weights")?,
            });
        }
        debug_assert_eq!(r.at, bytes.len());
        Ok(NnueNet {
            description,
            dims: found,
            ft_bias,
            ft_weight,
            psqt_weight,
            stacks,
        })
    }

    /// Checks that every array has its size (a network built in code).
    pub fn check_shapes(&self) -> Result<(), NnueError> {
        let bad = |what: &str, got: usize, want: usize| NnueError::File {
            reason: format!("{what} has {got} values, {want} wanted"),
        };
        let check = |what: &str, got: usize, want: usize| {
            if got == want {
                Ok(())
            } else {
                Err(bad(what, got, want))
            }
        };
        check("ft_bias", self.ft_bias.len(), L1)?;
        check("ft_weight", self.ft_weight.len(), self.dims * L1)?;
        check(
            "psqt_weight",
            self.psqt_weight.len(),
            self.dims * PSQT_BUCKETS,
        )?;
        check("stacks", self.stacks.len(), LAYER_STACKS)?;
        for s in &self.stacks {
            check("l1_bias", s.l1_bias.len(), L2)?;
            check("l1_weight", s.l1_weight.len(), L2 * 2 * L1)?;
            check("l2_bias", s.l2_bias.len(), L3)?;
            check("l2_weight", s.l2_weight.len(), L3 * L2_PADDED)?;
            check("out_weight", s.out_weight.len(), L3)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::SplitMix64;

    #[test]
    fn hashes_are_fairy_stockfishs() {
        assert_eq!(transformer_hash(), 0x5f23_48b8);
        // Written out from the C++ templates by hand: InputSlice<1024> 0xEC42E90D ^ 1024.
        let input = 0xEC42_E90Du32 ^ 1024;
        assert_eq!(input, 0xEC42_ED0D);
        let a1 = (0xCC03_DAE4u32 + 16) ^ (input >> 1) ^ (input << 31);
        let a2 = (0xCC03_DAE4u32 + 32) ^ ((a1 + 0x538D_24C7) >> 1) ^ ((a1 + 0x538D_24C7) << 31);
        let r2 = a2.wrapping_add(0x538D_24C7);
        let out = (0xCC03_DAE4u32 + 1) ^ (r2 >> 1) ^ (r2 << 31);
        assert_eq!(layers_hash(), out);
        assert_eq!(network_hash(), transformer_hash() ^ out);
    }

    fn random_net(dims: usize, seed: u64) -> NnueNet {
        let mut rng = SplitMix64(seed);
        let mut net = NnueNet::zeros(dims, "test");
        net.ft_weight
            .iter_mut()
            .for_each(|w| *w = rng.next_u64() as i16);
        net.psqt_weight
            .iter_mut()
            .for_each(|w| *w = rng.next_u64() as i32);
        net.stacks[3].l2_weight[5] = -7;
        net.stacks[7].out_bias = -123_456;
        net
    }

    #[test]
    fn files_round_trip_and_sizes_add_up() {
        let net = random_net(37, 1);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), NnueNet::fixed_bytes(37).unwrap() + 4);
        assert_eq!(NnueNet::from_bytes(&bytes, Some(37)).unwrap(), net);
        assert_eq!(NnueNet::from_bytes(&bytes, None).unwrap(), net);
        let e = NnueNet::from_bytes(&bytes, Some(38))
            .unwrap_err()
            .to_string();
        assert!(e.contains("37 features"), "{e}");
        net.check_shapes().unwrap();
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let bytes = random_net(5, 2).to_bytes();
        for cut in [0, 3, 11, 12, 15, 40, bytes.len() - 1] {
            assert!(
                NnueNet::from_bytes(&bytes[..cut], None).is_err(),
                "cut {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(NnueNet::from_bytes(&longer, None).is_err());
        // Header: version, hash, description length, "test", transformer hash; then biases.
        let first_weight = 12 + 4 + 4 + 2 * L1;
        for (at, damaged) in [(0, true), (4, true), (8, true), (16, true), (20, false)]
            .into_iter()
            .chain([(first_weight + 100, false), (bytes.len() - 40, false)])
        {
            let mut b = bytes.clone();
            b[at] ^= 0x40;
            let r = NnueNet::from_bytes(&b, None);
            // A flipped weight byte is still a network; a flipped header or hash is not.
            assert_eq!(r.is_err(), damaged, "byte {at}");
        }
        // A description length past the end.
        let mut b = bytes.clone();
        b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(NnueNet::from_bytes(&b, None).is_err());
        let mut rng = SplitMix64(9);
        for _ in 0..200 {
            let n = (rng.next_u64() % 3000) as usize;
            let junk: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            assert!(NnueNet::from_bytes(&junk, None).is_err());
        }
    }
}
