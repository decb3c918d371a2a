//! Link settings for libtorch: an rpath to the pinned wheel (so the binary runs without
//! LD_LIBRARY_PATH), and `torch_cuda` linked with `--no-as-needed`: nothing references its
//! symbols directly, so without it the linker drops it and CUDA is never found at run time.

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    let Ok(root) = std::env::var("LIBTORCH") else {
        return;
    };
    let lib = std::path::Path::new(&root).join("lib");
    let lib = lib.canonicalize().unwrap_or(lib);
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    if lib.join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-search=native={}", lib.display());
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
}
