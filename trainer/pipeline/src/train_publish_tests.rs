//! A network is recorded in state.json only after its file is on disk: a publication whose
//! weights or sidecar cannot be written leaves the state as it was.

use super::*;
use crate::metrics::NoMetrics;
use std::sync::atomic::AtomicBool;

#[test]
fn a_network_is_recorded_in_the_state_only_after_its_files_are_on_disk() {
    for blocked in ["safetensors", "json"] {
        let root =
            std::env::temp_dir().join(format!("train-publish-{}-{blocked}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let cfg = root.join("publish.toml");
        std::fs::write(
            &cfg,
            "variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 5\n\
             steps_per_generation = 10\n[evaluation]\ngames = 0\n",
        )
        .unwrap();
        let run = Run::open(&cfg, &root.join("runs"), false).unwrap();
        let shared = Shared::new(&run, Arc::new(AtomicBool::new(false))).unwrap();
        let reporter = Reporter::new(None, Box::new(NoMetrics));
        let mut t = TrainLoop::new(&run, &shared, &reporter, None).unwrap();
        // A directory where the file goes: renaming the written file onto it fails.
        let file = run.model_path(1).with_extension(blocked);
        std::fs::create_dir_all(&file).unwrap();
        assert!(t.publish().is_err(), "published without {}", file.display());
        assert_eq!(shared.get().generation, 0);
        assert_eq!(run.load_state().unwrap().generation, 0, "{blocked}");
        std::fs::remove_dir(&file).unwrap();
        assert_eq!(t.publish().unwrap(), 1);
        assert_eq!(run.load_state().unwrap().generation, 1);
        for ext in ["safetensors", "json"] {
            assert!(run.model_path(1).with_extension(ext).is_file());
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
