//! Printing of `trainer bench perft` and `trainer bench selfplay`.

use anyhow::{bail, Result};
use std::path::PathBuf;

pub(crate) fn bench_perft(fsf: Option<PathBuf>, repeat: u32, no_fsf: bool) -> Result<()> {
    use pipeline::bench::{find_fsf, perft_fsf, perft_ours};
    let fsf = if no_fsf { None } else { find_fsf(fsf) };
    println!("perft, single thread, bulk counting, best of {repeat}");
    println!(
        "{:<16} {:>5} {:>12} {:>9} {:>14}",
        "variant", "depth", "nodes", "seconds", "leaves/s"
    );
    let row = |who: &str, depth: u32, nodes: u64, secs: f64| {
        println!(
            "{:<16} {:>5} {:>12} {:>9.3} {:>14.0}",
            who,
            depth,
            nodes,
            secs,
            nodes as f64 / secs
        );
    };
    let mut ratios = Vec::new();
    for (variant, fsf_name, depth) in [
        ("shogi", Some("shogi"), 5),
        ("minishogi", Some("minishogi"), 5),
        ("cannon-shosu", None, 4),
        ("cannon-shosu", None, 5),
        ("hand", None, 3),
    ] {
        let (n, s) = perft_ours(variant, depth, repeat)?;
        row(variant, depth, n, s);
        if let (Some(bin), Some(name)) = (&fsf, fsf_name) {
            let (fn_, fs) = perft_fsf(bin, name, depth, repeat)?;
            row(&format!("  fsf {name}"), depth, fn_, fs);
            if fn_ != n {
                bail!("node counts differ: ours {n}, Fairy-Stockfish {fn_}");
            }
            ratios.push((variant, fs / s));
        }
    }
    if fsf.is_none() && !no_fsf {
        println!("(Fairy-Stockfish not found: apt-get install fairy-stockfish to compare)");
    }
    for (v, r) in ratios {
        println!("ratio {v}: ours / Fairy-Stockfish leaves/s = {r:.2}");
    }
    Ok(())
}

pub(crate) fn bench_selfplay(
    variant: &str,
    model_name: &str,
    parallel: usize,
    games: usize,
    simulations: u32,
    device: &str,
) -> Result<()> {
    let b = pipeline::bench::selfplay_efficiency(
        variant,
        model_name,
        parallel,
        games,
        simulations,
        device,
    )?;
    let s = &b.stats;
    println!(
        "{variant} with {model_name} on {device}, {} intra-op threads, {parallel} games in lockstep, {simulations} simulations/move",
        b.threads
    );
    println!(
        "raw forward, batch {parallel}:      {:>10.0} evals/s",
        b.raw
    );
    println!(
        "self-play loop ({} games, {} evals, mean batch {:.1}): {:>10.0} evals/s, {:.1}% of the time in the network",
        s.games,
        s.evals,
        s.evals as f64 / s.batches.max(1) as f64,
        b.loop_rate(),
        100.0 * s.eval_seconds / s.seconds.max(1e-9)
    );
    println!(
        "raw forward, batch {} (the loop's mean): {:>10.0} evals/s",
        b.mean_batch, b.raw_mean
    );
    println!(
        "ratio self-play / raw forward at batch {parallel}: {:.3}",
        b.loop_rate() / b.raw
    );
    println!(
        "ratio self-play / raw forward at the mean batch {}: {:.3}",
        b.mean_batch,
        b.loop_rate() / b.raw_mean
    );
    Ok(())
}
