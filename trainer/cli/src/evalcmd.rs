//! `trainer eval`: what a network thinks of a position (its WDL and its policy over the legal
//! moves) and, with `--nodes`, what its search finds.

use ::arena::NetView;
use anyhow::{Context, Result};
use rules::{Position, Variant};
use search::SearchResult;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

/// `trainer eval` arguments.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// Model weights (.safetensors with its .json sidecar); the variant comes from the sidecar.
    #[arg(long)]
    model: PathBuf,
    /// The position as SFEN (default: the variant's start position).
    #[arg(long)]
    sfen: Option<String>,
    /// Evaluate every position of this file instead: one SFEN per line, optionally followed
    /// by `moves` and USI moves (`-`: standard input); one report (JSON line) per position.
    #[arg(long, conflicts_with_all = ["sfen", "moves"], value_name = "FILE")]
    positions: Option<PathBuf>,
    /// Moves in USI notation played from that position (several values, or one quoted list).
    #[arg(long, num_args = 1..)]
    moves: Vec<String>,
    /// Moves listed, most likely first (default: 10; with --json, every legal move).
    #[arg(long)]
    top: Option<usize>,
    /// Also search this many simulations (Gumbel, no noise): visits and the best move.
    #[arg(long, default_value_t = 0)]
    nodes: u32,
    /// One JSON object on stdout: `wdl`, `moves` (`usi`, `prob`), and `search` with --nodes.
    #[arg(long)]
    json: bool,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = model::parse_device)]
    device: model::Device,
}

/// Runs `trainer eval`.
pub fn run(a: EvalArgs) -> Result<()> {
    let meta = model::read_meta(&a.model)
        .with_context(|| format!("reading the sidecar of {}", a.model.display()))?;
    let variant = Arc::new(
        Variant::compile_named(
            meta.variant_spec.clone(),
            &format!("{} (sidecar)", a.model.display()),
        )
        .with_context(|| format!("compiling the variant of {}", a.model.display()))?,
    );
    let opener = &pipeline::ModelOpener;
    let mut searcher = ::arena::Searcher::network(&variant, &a.model, a.nodes, a.device, opener)?;
    let Some(file) = &a.positions else {
        let mut pos = match &a.sfen {
            Some(s) => Position::from_sfen(&variant, s)?,
            None => Position::start(variant.clone()),
        };
        pos.play_usi(&a.moves.join(" "))?;
        return report(&a, &mut searcher, &pos);
    };
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading the positions from stdin")?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
    };
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", file.display(), n + 1);
        let pos = ::arena::parse_game_line(line, &variant)
            .with_context(at)?
            .position();
        report(&a, &mut searcher, &pos)?;
    }
    Ok(())
}

/// Prints what the network (and with --nodes its search) thinks of `pos`.
fn report(a: &EvalArgs, searcher: &mut ::arena::Searcher, pos: &Position) -> Result<()> {
    let view = searcher.net_view(pos)?;
    let search = if a.nodes > 0 {
        searcher.analyse(pos, a.nodes, None)?
    } else {
        None
    };
    let top = a
        .top
        .unwrap_or(if a.json { usize::MAX } else { 10 })
        .min(view.moves.len());
    let outcome = pos.outcome().map(|o| {
        format!(
            "{} ({})",
            match o.winner {
                Some(c) => format!("{c:?} wins"),
                None => "draw".into(),
            },
            o.reason.name()
        )
    });
    if a.json {
        print_json(a, pos, &view, search.as_ref(), outcome.as_deref(), top);
    } else {
        print_text(pos, &view, outcome.as_deref(), top);
        if let Some(r) = &search {
            print_search_text(a.nodes, pos, r, top);
        }
    }
    Ok(())
}

/// The report as one JSON line.
fn print_json(
    a: &EvalArgs,
    pos: &Position,
    view: &NetView,
    search: Option<&SearchResult>,
    outcome: Option<&str>,
    top: usize,
) {
    let mut out = json!({
        "sfen": pos.to_sfen(),
        "side_to_move": format!("{:?}", pos.side_to_move()).to_lowercase(),
        "wdl": view.wdl,
        "value": view.wdl[0] - view.wdl[2],
        "legal_moves": view.moves.len(),
        "moves": view.moves[..top].iter().map(|(m, p)| json!({
            "usi": pos.move_to_usi(*m),
            "prob": p,
        })).collect::<Vec<_>>(),
    });
    if let Some(o) = outcome {
        out["outcome"] = json!(o);
    }
    if let Some(r) = search {
        let mut order: Vec<usize> = (0..r.moves.len()).collect();
        order.sort_by(|&x, &y| {
            r.visits[y]
                .cmp(&r.visits[x])
                .then(r.policy_target[y].total_cmp(&r.policy_target[x]))
        });
        out["search"] = json!({
            "nodes": a.nodes,
            "best": pos.move_to_usi(r.best),
            "value": r.root_value,
            "wdl": r.root_wdl,
            "moves": order.iter().take(top).map(|&i| json!({
                "usi": pos.move_to_usi(r.moves[i]),
                "visits": r.visits[i],
                "policy": r.policy_target[i],
                "q": r.q[i],
            })).collect::<Vec<_>>(),
        });
    }
    println!("{out}");
}

/// The position, its outcome if over, the network's WDL and its `top` moves as text.
fn print_text(pos: &Position, view: &NetView, outcome: Option<&str>, top: usize) {
    println!("position {}", pos.to_sfen());
    if let Some(o) = outcome {
        println!("game over: {o}");
    }
    println!(
        "network: win {:.3} draw {:.3} loss {:.3} for {:?} (value {:+.3}), {} legal moves",
        view.wdl[0],
        view.wdl[1],
        view.wdl[2],
        pos.side_to_move(),
        view.wdl[0] - view.wdl[2],
        view.moves.len()
    );
    for (m, p) in &view.moves[..top] {
        println!("  {:<8} {:>6.2}%", pos.move_to_usi(*m), 100.0 * p);
    }
}

/// The search's best move and its `top` most visited moves as text.
fn print_search_text(nodes: u32, pos: &Position, r: &SearchResult, top: usize) {
    println!(
        "search, {} simulations: best {} (value {:+.3}; win {:.3} draw {:.3} loss {:.3})",
        nodes,
        pos.move_to_usi(r.best),
        r.root_value,
        r.root_wdl[0],
        r.root_wdl[1],
        r.root_wdl[2]
    );
    let mut order: Vec<usize> = (0..r.moves.len()).collect();
    order.sort_by(|&x, &y| r.visits[y].cmp(&r.visits[x]));
    for &i in order.iter().take(top) {
        println!(
            "  {:<8} {:>6} visits  policy {:>6.2}%  q {:+.3}",
            pos.move_to_usi(r.moves[i]),
            r.visits[i],
            100.0 * r.policy_target[i],
            r.q[i]
        );
    }
}
