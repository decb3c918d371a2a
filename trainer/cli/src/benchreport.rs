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
        ("judkins", Some("judkins"), 5),
        ("yari", None, 5),
        ("tori", None, 5),
        ("kyoto", Some("kyotoshogi"), 6),
        ("micro", Some("micro"), 6),
        ("sho", None, 4),
        ("cannon", None, 4),
        ("annan", None, 4),
        ("unashogi", None, 2),
        ("chu", None, 4),
        ("wa", None, 4),
        ("heian", None, 5),
        ("whale", None, 7),
        ("heian-dai", None, 5),
        ("dai", None, 4),
        ("hasami", None, 4),
        ("dai-hasami", None, 4),
        ("tenjiku", None, 4),
        ("dai-dai", None, 3),
        ("maka-dai-dai", None, 3),
        ("tai", None, 3),
        ("taikyoku", None, 3),
        ("ko", None, 3),
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

pub(crate) fn bench_selfplay(o: &pipeline::bench::SelfplayOptions) -> Result<()> {
    let b = pipeline::bench::selfplay_efficiency(o)?;
    let s = &b.stats;
    let how = match o.simulate_ms {
        Some(ms) => format!("a simulated device answering every batch after {ms} ms"),
        None => format!("{} on {}", o.model, o.device),
    };
    println!(
        "{} with {how}: {} search threads x {} groups x {} games, {}, batch {}, {} intra-op threads, {} simulations/move{}, {:.0} s",
        o.variant,
        b.threads,
        b.groups,
        o.selfplay.parallel_games,
        if b.server {
            "one inference server"
        } else {
            "a network per thread"
        },
        b.batch,
        b.intra_op,
        o.simulations,
        match o.mate_plies {
            0 => String::new(),
            n => format!(" with a mate check of {n} plies at new leaves"),
        },
        s.seconds
    );
    match o.simulate_ms {
        Some(ms) => println!(
            "device capacity, batch {} / {ms} ms: {:>10.0} evals/s",
            b.batch, b.raw
        ),
        None => println!(
            "raw forward, batch {}{}, legal logits and WDL back: {:>10.0} evals/s",
            b.batch,
            if b.server {
                String::new()
            } else {
                format!(" on each of {} threads at once", b.threads)
            },
            b.raw
        ),
    }
    println!(
        "self-play ({} games finished, {} evals, {} batches of {:.1}{}): {:>10.0} evals/s, {:.0}% of the threads' time waiting on the network",
        s.games,
        s.evals,
        s.batches,
        s.evals as f64 / s.batches.max(1) as f64,
        b.server_batch
            .map_or(String::new(), |m| format!(", server batches of {m:.1}")),
        b.loop_rate(),
        100.0 * s.eval_seconds / (s.seconds * b.threads as f64).max(1e-9)
    );
    if s.cache_hits > 0 {
        println!(
            "evaluation cache: {} leaves answered without the network ({:.1}% of the leaves), {:.0} leaves/s in all",
            s.cache_hits,
            100.0 * s.cache_hits as f64 / (s.evals + s.cache_hits).max(1) as f64,
            (s.evals + s.cache_hits) as f64 / s.seconds.max(1e-9)
        );
    }
    if let (Some(busy), Some(pass)) = (b.server_busy, b.server_pass) {
        println!(
            "the inference server evaluated {:.1}% of the time, {:.3} ms a pass",
            100.0 * busy,
            1000.0 * pass
        );
    }
    println!("ratio {:.3}", b.ratio());
    Ok(())
}
