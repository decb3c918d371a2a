//! The tables move generation reads, derived from a variant's kinds and rules once they are
//! compiled: rays, leaps, reverse attacks, zones, drop squares and Zobrist keys.

use crate::betza::{MoveAtom, MAX_HOPS};
use crate::bitset::SquareSet;
use crate::spec::PieceDropSpec;
use crate::types::{Color, Square};
use crate::variant::{BoardLeg, KindSet, RayMove, RayScan, Variant, CAPTURE, MAX_HAND_COUNT, MOVE};

/// A leap on the board: (file, rank) vector and its MOVE/CAPTURE modes.
type BoardLeap = ((i8, i8), u8);

/// Reverse leap attacks being collected: per (attacking colour, target), the squares attacking
/// it and a bit per attacking kind.
type LeapAttacks = Vec<Vec<(Square, KindSet)>>;

/// Board vector of a piece-relative step for a colour: sente faces rank a (y decreasing).
pub(crate) fn board_vec(c: Color, dx: i8, dy: i8) -> (i8, i8) {
    match c {
        Color::Sente => (dx, -dy),
        Color::Gote => (-dx, dy),
    }
}

/// Whether (x, y) is on the board.
fn on_board(v: &Variant, x: i32, y: i32) -> bool {
    x >= 0 && y >= 0 && x < v.files as i32 && y < v.ranks as i32
}

/// The MOVE/CAPTURE modes of a leap atom (a leap jumps: it needs no hop).
fn atom_mode(a: &MoveAtom) -> u8 {
    let mut mode = 0;
    if a.can_move && a.hops & 1 != 0 {
        mode |= MOVE;
    }
    if a.can_capture && a.hops & 1 != 0 {
        mode |= CAPTURE;
    }
    mode
}

/// A kind's atoms for colour `c` as rays merged per direction and leaps merged per vector
/// (minus what a ray already gives at distance one), and whether a leap left lands on a square
/// one of the rays also reaches (then the two may give the same move: see
/// [`Variant::shadowed_leaps`]).
fn merge_moves(
    dirs: &[(i8, i8)],
    c: Color,
    katoms: &[MoveAtom],
) -> (Vec<RayMove>, Vec<BoardLeap>, bool) {
    // Rays merged per direction.
    let mut rays: Vec<RayMove> = Vec::new();
    for a in katoms.iter().filter(|a| a.range != 1) {
        let bv = board_vec(c, a.dx, a.dy);
        let d = dirs.iter().position(|&x| x == bv).unwrap() as u8;
        let r = match rays.iter_mut().find(|r| r.dir == d) {
            Some(r) => r,
            None => {
                rays.push(RayMove {
                    dir: d,
                    ..Default::default()
                });
                rays.last_mut().unwrap()
            }
        };
        let range = if a.range == 0 { u8::MAX } else { a.range };
        for h in 0..=MAX_HOPS {
            if a.hops >> h & 1 != 0 {
                if a.can_move {
                    r.move_range[h] = r.move_range[h].max(range);
                }
                if a.can_capture {
                    r.cap_range[h] = r.cap_range[h].max(range);
                }
                r.max_hop = r.max_hop.max(h as u8);
                r.max_range = r.max_range.max(range);
            }
        }
    }
    // Leaps merged per vector, minus what a ray already gives at distance one.
    let mut leaps: Vec<BoardLeap> = Vec::new();
    let mut shadowed = false;
    for a in katoms.iter().filter(|a| a.range == 1) {
        let bv = board_vec(c, a.dx, a.dy);
        let mut mode = atom_mode(a);
        if let Some(r) = rays.iter().find(|r| dirs[r.dir as usize] == bv) {
            if r.move_range[0] >= 1 {
                mode &= !MOVE;
            }
            if r.cap_range[0] >= 1 {
                mode &= !CAPTURE;
            }
        }
        // A jump to the k-th square of a ride (`QD`, the lion hawk's `BA`, a Lion Dog's `KADGH`
        // with a queen's ride) is the ride's own move when the squares before it are empty: it
        // becomes the ride's jump over the pieces there, so that the move is not generated
        // twice. Past the second square this needs the jumps to every nearer square of the line
        // too (after one hop the ride may then stop anywhere up to the k-th square).
        let k = bv.0.abs().max(bv.1.abs());
        let unit = (bv.0 / k.max(1), bv.1 / k.max(1));
        let straight = k >= 2 && (unit.0 * k, unit.1 * k) == bv && k as usize <= MAX_HOPS + 1;
        let nearer = |m: u8| {
            (2..k).all(|j| {
                katoms.iter().any(|b| {
                    b.range == 1
                        && board_vec(c, b.dx, b.dy) == (unit.0 * j, unit.1 * j)
                        && atom_mode(b) & m == m
                })
            })
        };
        if let Some(r) = rays
            .iter_mut()
            .find(|r| straight && dirs[r.dir as usize] == unit)
        {
            let k = k as u8;
            if mode & MOVE != 0 && r.move_range[0] >= k && nearer(MOVE) {
                for h in 1..k as usize {
                    r.move_range[h] = r.move_range[h].max(k);
                }
                r.max_hop = r.max_hop.max(k - 1);
                mode &= !MOVE;
            }
            if mode & CAPTURE != 0 && r.cap_range[0] >= k && nearer(CAPTURE) {
                for h in 1..k as usize {
                    r.cap_range[h] = r.cap_range[h].max(k);
                }
                r.max_hop = r.max_hop.max(k - 1);
                mode &= !CAPTURE;
            }
        }
        // A leap the merge above could not take (it lacks the jumps to the nearer squares) may
        // still land where the ride stops, after as many hops as there are pieces between.
        let aligned = k >= 2 && (unit.0 * k, unit.1 * k) == bv;
        if let Some(r) = rays
            .iter()
            .find(|r| aligned && dirs[r.dir as usize] == unit)
        {
            let reaches = |ranges: &[u8; MAX_HOPS + 1]| {
                (0..(k as usize).min(MAX_HOPS + 1)).any(|h| ranges[h] >= k as u8)
            };
            shadowed |= (mode & MOVE != 0 && reaches(&r.move_range))
                || (mode & CAPTURE != 0 && reaches(&r.cap_range));
        }
        match leaps.iter_mut().find(|l| l.0 == bv) {
            Some(l) => l.1 |= mode,
            None => leaps.push((bv, mode)),
        }
    }
    leaps.retain(|l| l.1 != 0);
    (rays, leaps, shadowed)
}

/// Derives every table move generation reads from the variant's kinds (`atoms`: each kind's
/// moves, `extras`: its extra moves on the last rank) and rules.
pub(crate) fn build_tables(v: &mut Variant, atoms: &[Vec<MoveAtom>], extras: &[Vec<MoveAtom>]) {
    build_rays(v, atoms, extras);
    v.legs = board_legs(v);
    let leap_att = build_move_tables(v, atoms, extras);
    let (n, nk) = (v.n, v.kinds.len());
    for c in Color::ALL {
        v.dead_squares[c.index()] = (0..n)
            .filter(|&sq| (0..nk).any(|k| v.immobile[(c.index() * nk + k) * n + sq]))
            .count();
    }
    for c in Color::ALL {
        v.ray_scans[c.index()] = ray_scans(v, c);
    }
    v.leap_attack_index = Vec::with_capacity(2 * n);
    // Each distinct set of attacking kinds is stored once: a few hundred sets serve every
    // square of the board.
    let mut set_ids = std::collections::HashMap::new();
    let mut small = Vec::new();
    for e in leap_att {
        let s = v.leap_attackers.len() as u32;
        for (sq, set) in e {
            let id = *set_ids.entry(set).or_insert_with(|| {
                v.kind_sets.push(set);
                v.kind_sets.len() as u32 - 1
            });
            v.leap_attackers.push((sq, id));
            if v.n <= 256 {
                small.push((sq as u8, set.low()));
            }
        }
        v.leap_attack_index.push((s, v.leap_attackers.len() as u32));
    }
    if v.n <= 256 {
        let byte = |sq: crate::types::Square| sq as u8;
        v.small.ray_squares = v.ray_squares.iter().map(|&s| byte(s)).collect();
        v.small.leaps = v.leaps.iter().map(|&(s, m)| (byte(s), m)).collect();
        v.small.leap_attackers = small;
    }
    build_square_sets(v);
    v.leap_checks = leap_checks(v);
    build_zobrist(v);
}

/// The directions of every riding atom for both colours (closed under negation), their
/// opposites, and the squares along each direction from each square.
fn build_rays(v: &mut Variant, atoms: &[Vec<MoveAtom>], extras: &[Vec<MoveAtom>]) {
    let mut dirs: Vec<(i8, i8)> = Vec::new();
    for a in atoms
        .iter()
        .chain(extras)
        .flatten()
        .filter(|a| a.range != 1)
    {
        for c in Color::ALL {
            let d = board_vec(c, a.dx, a.dy);
            for d in [d, (-d.0, -d.1)] {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
    }
    let (n, nd) = (v.n, dirs.len());
    v.dir_opposite = dirs
        .iter()
        .map(|&(x, y)| dirs.iter().position(|&d| d == (-x, -y)).unwrap() as u8)
        .collect();
    v.ray_start = vec![0; n * nd];
    v.ray_len = vec![0; n * nd];
    for sq in 0..n {
        let (x0, y0) = v.coords(sq);
        for (d, &(dx, dy)) in dirs.iter().enumerate() {
            v.ray_start[sq * nd + d] = v.ray_squares.len() as u32;
            let (mut x, mut y) = (x0 as i32 + dx as i32, y0 as i32 + dy as i32);
            let mut len = 0;
            while on_board(v, x, y) {
                v.ray_squares.push((y * v.files as i32 + x) as Square);
                len += 1;
                x += dx as i32;
                y += dy as i32;
            }
            v.ray_len[sq * nd + d] = len;
        }
    }
    v.dirs = dirs;
}

/// Two-step moves per (colour, kind) as board vectors.
fn board_legs(v: &Variant) -> Vec<Vec<BoardLeg>> {
    Color::ALL
        .iter()
        .flat_map(|&c| {
            v.kinds.iter().map(move |k| {
                k.legs
                    .iter()
                    .map(|l| {
                        (
                            board_vec(c, l.dx1, l.dy1),
                            l.first_captures,
                            board_vec(c, l.dx2, l.dy2),
                        )
                    })
                    .collect()
            })
        })
        .collect()
}

/// The leap, ray, immobility and reverse ray attack tables of every (colour, kind), and each
/// colour's last rank; returns the reverse leap attacks.
fn build_move_tables(
    v: &mut Variant,
    atoms: &[Vec<MoveAtom>],
    extras: &[Vec<MoveAtom>],
) -> LeapAttacks {
    let (n, nk, nd) = (v.n, v.kinds.len(), v.dirs.len());
    v.leap_index = vec![(0, 0); 2 * nk * n];
    v.rays = vec![Vec::new(); 2 * nk];
    v.immobile = vec![false; 2 * nk * n];
    v.ray_attack = vec![[0; MAX_HOPS + 1]; 2 * nk * nd];
    let mut leap_att: LeapAttacks = vec![Vec::new(); 2 * n];
    v.last_rank_rays = vec![Vec::new(); 2 * nk];
    for c in Color::ALL {
        let y = match c {
            Color::Sente => 0,
            Color::Gote => v.ranks as usize - 1,
        };
        let mut last = SquareSet::EMPTY;
        for x in 0..v.files as usize {
            last.insert(v.square(x, y));
        }
        v.last_rank[c.index()] = last;
    }
    for c in Color::ALL {
        for (k, katoms) in atoms.iter().enumerate() {
            kind_tables(v, c, k, katoms, &extras[k], &mut leap_att);
        }
    }
    leap_att
}

/// The tables of kind `k` of colour `c`, with moves `katoms` and last-rank moves `kextras`.
fn kind_tables(
    v: &mut Variant,
    c: Color,
    k: usize,
    katoms: &[MoveAtom],
    kextras: &[MoveAtom],
    leap_att: &mut LeapAttacks,
) {
    let (n, nd) = (v.n, v.dirs.len());
    let ck = c.index() * v.kinds.len() + k;
    let (rays, leaps, shadowed) = merge_moves(&v.dirs, c, katoms);
    let (extra_rays, extra_leaps, extra_shadowed) = merge_moves(&v.dirs, c, kextras);
    if shadowed || extra_shadowed {
        v.kinds[k].shadowed_leaps = true;
        v.has_shadowed_leaps = true;
    }
    for sq in 0..n {
        let start = v.leaps.len() as u32;
        let on_last = v.last_rank[c.index()].contains(sq);
        let here = leaps.iter().chain(extra_leaps.iter().filter(|_| on_last));
        add_leaps(v, c, k, sq, here, leap_att);
        v.leap_index[ck * n + sq] = (start, v.leaps.len() as u32);
        let extra = extra_rays.iter().filter(|_| on_last);
        let ray_moves = rays
            .iter()
            .chain(extra)
            .any(|r| v.ray_len[sq * nd + r.dir as usize] > 0);
        v.immobile[ck * n + sq] = v.leaps.len() as u32 == start && !ray_moves;
    }
    v.last_rank_rays[ck] = extra_rays;
    for r in &rays {
        let scan = v.dir_opposite[r.dir as usize] as usize;
        v.ray_attack[ck * nd + scan] = r.cap_range;
    }
    // A ride that jumps (a cannon's, or one merged with a leap to its second square) can be
    // screened: the pin scan must know.
    v.has_hoppers |= rays.iter().any(|r| r.max_hop > 0);
    v.rays[ck] = rays;
}

/// Appends the leaps `here` of kind `k` of colour `c` from `sq` that land on the board to the
/// leap table, and their captures to the reverse attacks of their targets.
fn add_leaps<'a>(
    v: &mut Variant,
    c: Color,
    k: usize,
    sq: usize,
    here: impl Iterator<Item = &'a BoardLeap>,
    leap_att: &mut LeapAttacks,
) {
    let start = v.leaps.len();
    let (x, y) = v.coords(sq);
    for &((dx, dy), mode) in here {
        let (tx, ty) = (x as i32 + dx as i32, y as i32 + dy as i32);
        if !on_board(v, tx, ty) {
            continue;
        }
        let to = (ty * v.files as i32 + tx) as usize;
        // An extra leap to a square a plain one reaches adds its modes.
        match v.leaps[start..].iter_mut().find(|l| l.0 as usize == to) {
            Some(l) => l.1 |= mode,
            None => v.leaps.push((to as Square, mode)),
        }
        if mode & CAPTURE != 0 {
            let e = &mut leap_att[c.index() * v.n + to];
            match e.iter_mut().find(|e| e.0 as usize == sq) {
                Some(e) => e.1.insert(k),
                None => e.push((sq as Square, KindSet::of(k))),
            }
        }
    }
}

/// The scan directions worth walking from a square to find ray attacks of colour `c`, with the
/// most pieces such an attack may jump.
fn ray_scans(v: &Variant, c: Color) -> Vec<RayScan> {
    let (nk, nd) = (v.kinds.len(), v.dirs.len());
    let mut scans = Vec::new();
    for d in 0..nd {
        let mut max_hop = None;
        for k in 0..nk {
            let r = v.ray_attack[(c.index() * nk + k) * nd + d];
            for (h, &range) in r.iter().enumerate() {
                if range > 0 {
                    max_hop = Some(max_hop.unwrap_or(0).max(h as u8));
                }
            }
        }
        if let Some(max_hop) = max_hop {
            scans.push(RayScan {
                dir: d as u8,
                max_hop,
            });
        }
    }
    scans
}

/// The promotion zones, the squares of each file and of the whole board.
fn build_square_sets(v: &mut Variant) {
    for c in Color::ALL {
        let mut z = SquareSet::EMPTY;
        for sq in 0..v.n {
            let (_, y) = v.coords(sq);
            let inside = match c {
                Color::Sente => y < v.zone_depth as usize,
                Color::Gote => y >= (v.ranks - v.zone_depth) as usize,
            };
            if inside {
                z.insert(sq);
            }
        }
        v.zone[c.index()] = z;
    }
    v.file_squares = (0..v.files as usize)
        .map(|x| {
            let mut s = SquareSet::EMPTY;
            for y in 0..v.ranks as usize {
                s.insert(y * v.files as usize + x);
            }
            s
        })
        .collect();
    for sq in 0..v.n {
        v.all_squares.insert(sq);
    }
}

/// Leap checks of hand kinds: squares from which kind k of colour c attacks the target.
fn leap_checks(v: &Variant) -> Vec<SquareSet> {
    let (n, h) = (v.n, v.hand_kinds.len());
    let mut leap_checks = vec![SquareSet::EMPTY; 2 * h * n];
    for c in Color::ALL {
        for (hi, &k) in v.hand_kinds.iter().enumerate() {
            for from in 0..n {
                for &(to, mode) in v.leaps_of(c, k, from) {
                    if mode & CAPTURE != 0 {
                        leap_checks[(c.index() * h + hi) * n + to as usize].insert(from);
                    }
                }
            }
        }
    }
    leap_checks
}

/// Zobrist keys from a fixed seed, so hashes are stable across runs.
fn build_zobrist(v: &mut Variant) {
    let (n, h) = (v.n, v.hand_kinds.len());
    let mut rng = crate::rng::SplitMix64(0x05EE_D0F5_A061_u64 ^ ((n as u64) << 32));
    // Keys per square: the empty square, then each kind of sente and of gote; 128 per side
    // (the keys of the one-byte pieces of earlier versions) unless there are more kinds.
    v.z_half = 128.max(v.kinds.len() + 1);
    v.z_board = (0..n * 2 * v.z_half).map(|_| rng.next_u64()).collect();
    for sq in 0..n {
        v.z_board[sq * 2 * v.z_half] = 0; // empty square
    }
    v.z_hand = (0..2 * h * (MAX_HAND_COUNT + 1))
        .map(|i| {
            if i % (MAX_HAND_COUNT + 1) == 0 {
                0
            } else {
                rng.next_u64()
            }
        })
        .collect();
    v.z_side = rng.next_u64();
}

/// Per (colour, hand index), then the same for dropping the promoted side: the squares where
/// the rank rules (`drop_specs`: each unpromoted kind's) allow a drop.
pub(crate) fn build_drop_squares(v: &mut Variant, drop_specs: &[PieceDropSpec]) {
    let h = v.hand_kinds.len();
    v.drop_squares = vec![SquareSet::EMPTY; 4 * h];
    for (c, promoted) in Color::ALL.into_iter().flat_map(|c| [(c, false), (c, true)]) {
        for (hi, &base) in v.hand_kinds.clone().iter().enumerate() {
            let info = &v.kinds[base as usize];
            // The kind that lands: the hand piece, or its promoted side.
            let kind = match (promoted, info.promotes_to) {
                (false, _) => base,
                (true, Some(p)) if v.promoted_drops => p,
                (true, _) => continue,
            };
            if !info.droppable {
                continue;
            }
            let set = drop_squares(v, &drop_specs[base as usize], c, kind);
            v.drop_squares[(2 * usize::from(promoted) + c.index()) * h + hi] = set;
        }
    }
}

/// The squares where kind `kind` of colour `c` may be dropped by the rank rules `d`.
fn drop_squares(v: &Variant, d: &PieceDropSpec, c: Color, kind: crate::types::Kind) -> SquareSet {
    let mut set = SquareSet::EMPTY;
    for sq in 0..v.n {
        let (_, y) = v.coords(sq);
        // Rank counted from the owner's far edge, 1 = last rank.
        let far = match c {
            Color::Sente => y + 1,
            Color::Gote => v.ranks as usize - y,
        };
        if let Some(r) = &d.forbidden_ranks {
            if r.iter().any(|&r| r as usize == far) {
                continue;
            }
        }
        if d.in_zone == Some(false) && v.in_zone(c, sq) {
            continue;
        }
        if v.forbid_immobile_drops && v.is_immobile(c, kind, sq) {
            continue;
        }
        set.insert(sq);
    }
    set
}
