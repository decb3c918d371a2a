//! Build script: rpath to the pinned libtorch (linked through the `model` crate) so the test
//! binaries run without LD_LIBRARY_PATH.
fn main() {
    if let Ok(lib) = std::env::var("LIBTORCH") {
        let lib = std::path::Path::new(&lib).join("lib");
        let lib = lib.canonicalize().unwrap_or(lib);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }
    println!("cargo:rerun-if-env-changed=LIBTORCH");
}
