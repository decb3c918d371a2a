//! Resolving a variant name given on a command line or in a USI option.

use crate::error::ArenaError;
use rules::Variant;
use std::path::Path;
use std::sync::Arc;

/// Resolves a variant name: a path (ends in `.toml` or contains `/`), a file stem in
/// `./configs/variants`, or a built-in variant.
pub fn load_variant(name: &str) -> Result<Arc<Variant>, ArenaError> {
    let p = Path::new(name);
    if name.ends_with(".toml") || name.contains('/') {
        return Ok(Arc::new(Variant::load(p)?));
    }
    let local = Path::new("configs/variants").join(format!("{name}.toml"));
    if local.exists() {
        return Ok(Arc::new(Variant::load(&local)?));
    }
    Ok(Arc::new(Variant::builtin(name)?))
}
