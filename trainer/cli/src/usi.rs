//! `trainer usi`: the USI engine of the `arena` crate ([`arena::UsiEngine`]) on stdin/stdout.
//! Every line written is flushed.

use anyhow::Result;
use arena::UsiEngine;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// `trainer usi [--model M] [--variant V]`: runs the engine until `quit` or end of input.
pub fn run(model: Option<&Path>, variant: Option<&str>) -> Result<()> {
    let opener = Arc::new(pipeline::ModelOpener);
    let mut engine = UsiEngine::new(model, variant, opener, |line: &str| {
        // Errors (e.g. a closed pipe) are ignored: the GUI is gone.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    })?
    .with_thread_control(|n| ::model::set_threads(n as usize));
    engine.run(&mut std::io::stdin().lock());
    Ok(())
}
