//! `trainer perft` and `trainer check`: printing around the rules and config checks.

use crate::load_variant;
use anyhow::{bail, Result};
use rules::{perft, perft_divide, Position, MAX_PERFT_DEPTH};
use std::path::PathBuf;
use std::time::Instant;

pub(crate) fn run_perft(
    variant: &str,
    sfen: Option<&str>,
    moves: &str,
    depth: u32,
    divide: bool,
) -> Result<()> {
    if depth > MAX_PERFT_DEPTH {
        bail!("--depth {depth}: at most {MAX_PERFT_DEPTH} (a perft that deep could never finish)");
    }
    let v = load_variant(variant)?;
    let mut pos = match sfen {
        Some(s) => Position::from_sfen_composed(&v, s)?,
        None => Position::start(v),
    };
    pos.play_usi(moves)?;
    let t = Instant::now();
    let nodes = if divide {
        let mut total = 0;
        for (mv, n) in perft_divide(&mut pos, depth) {
            println!("{mv} {n}");
            total += n;
        }
        total
    } else {
        perft(&mut pos, depth)
    };
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "time {:.3}s, {:.0} leaves/s",
        secs,
        nodes as f64 / secs.max(1e-9)
    );
    println!("nodes {nodes}");
    Ok(())
}

pub(crate) fn run_check(paths: &[PathBuf], verbose: bool) -> Result<()> {
    let paths = if paths.is_empty() {
        vec![PathBuf::from("configs")]
    } else {
        paths.to_vec()
    };
    let files = pipeline::check::collect_tomls(&paths)?;
    let mut bad = 0;
    for f in &files {
        match pipeline::check::check_file(f) {
            Ok(c) => {
                if verbose {
                    if let Some(d) = &c.details {
                        println!("{d}");
                    }
                }
                println!("ok    {}  ({})", f.display(), c.summary);
            }
            Err(e) => {
                bad += 1;
                println!("error {}", e.chain());
            }
        }
    }
    if bad > 0 {
        bail!("{bad} of {} config files have errors", files.len());
    }
    println!("{} config files checked, all valid", files.len());
    Ok(())
}
