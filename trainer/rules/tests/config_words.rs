//! Keys whose value is one of a fixed set of words: a word outside the set is refused as the
//! file is read, naming the file, the key and the allowed words; `extends` merges them like
//! any other key.

use rules::{Error, MatchRule, PromotionMode, StalemateValue, Variant, VariantSpec};
use std::path::PathBuf;

fn shogi_text() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/variants/shogi.toml"
    ))
    .unwrap()
}

/// The config error for `text` read as `file`: (file, key, reason).
fn config_error(text: &str, file: &str) -> (String, String, String) {
    match VariantSpec::from_toml(text, file) {
        Err(Error::Config { file, key, reason }) => (file, key, reason),
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn a_word_outside_its_set_names_the_file_key_and_allowed_words() {
    let shogi = shogi_text();
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "stalemate = \"loss\"",
            "stalemate = \"maybe\"",
            "end.stalemate",
            &["`loss`", "`draw`", "`win`"],
        ),
        (
            "perpetual_check = \"loss\"",
            "perpetual_check = \"win\"",
            "end.perpetual_check",
            &["`loss`", "`draw`"],
        ),
        (
            "repetition = 4",
            "repetition = 4\nrepetition_result = \"lose\"",
            "end.repetition_result",
            &["`loss`", "`draw`", "`win`"],
        ),
        (
            "repetition = 4",
            "repetition = 4\nrepetition_result_for = \"gote\"",
            "end.repetition_result_for",
            &["`side-to-move`", "`sente`"],
        ),
        (
            "[promotion]\n",
            "[promotion]\nflip_on = \"drop\"\n",
            "promotion.flip_on",
            &["`move`", "`capture`"],
        ),
        (
            "[promotion]\n",
            "[promotion]\nmoves = \"inside\"\n",
            "promotion.moves",
            &["`touching`", "`entering`"],
        ),
        (
            "[promotion]\n",
            "moves_from = \"front\"\n[promotion]\n",
            "moves_from",
            &["`own`", "`behind`"],
        ),
        (
            "[promotion]\n",
            "match = \"best-of:3\"\n[promotion]\n",
            "match",
            &["single", "consecutive-wins:N"],
        ),
        (
            "[promotion]\n",
            "match = \"consecutive-wins:0\"\n[promotion]\n",
            "match",
            &["single", "consecutive-wins:N"],
        ),
        (
            "letter = \"N\"\n",
            "letter = \"N\"\npromotion = \"maybe\"\n",
            "pieces[5].promotion",
            &["`none`", "`optional`", "`forced`", "`flip`"],
        ),
    ];
    for &(from, to, key, allowed) in cases {
        assert!(shogi.contains(from), "{from}");
        let text = shogi.replacen(from, to, 1);
        let (file, k, reason) = config_error(&text, "x.toml");
        assert_eq!((file.as_str(), k.as_str()), ("x.toml", key), "{to}");
        let bad = to.rsplit('"').nth(1).unwrap();
        assert!(reason.contains(bad), "{to}: {reason}");
        for word in allowed {
            assert!(reason.contains(word), "{to}: {reason} lacks {word}");
        }
        let shown = Error::Config {
            file,
            key: k,
            reason,
        }
        .to_string();
        assert!(shown.starts_with(&format!("x.toml: {key}: ")), "{shown}");
    }
}

#[test]
fn other_toml_errors_name_their_key_or_table() {
    let shogi = shogi_text();
    // A value of the wrong type, an unknown key, a missing one (its table is named).
    let (_, key, reason) = config_error(&shogi.replacen("files = 9", "files = \"9\"", 1), "x");
    assert_eq!(key, "files", "{reason}");
    let (_, key, _) = config_error(&format!("bogus_key = 1\n{shogi}"), "x");
    assert_eq!(key, "bogus_key");
    let text = shogi.replacen("letter = \"N\"\n", "", 1);
    let (_, key, reason) = config_error(&text, "x");
    assert_eq!(key, "pieces[5]", "{reason}");
    assert!(reason.contains("letter"), "{reason}");
    // Bad syntax has no key: the place is given as bytes.
    let (_, key, _) = config_error("files = = 9", "x");
    assert!(key.starts_with("byte "), "{key}");
}

/// A fresh directory with these variant files.
fn files(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rules-words-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

#[test]
fn extends_merges_words_key_by_key() {
    let dir = files(
        "merge",
        &[
            (
                "parent.toml",
                "extends = \"shogi\"\nmatch = \"consecutive-wins:2\"\n\
                 [end]\nstalemate = \"draw\"\nrepetition_result = \"win\"\n",
            ),
            (
                "child.toml",
                "extends = \"parent\"\n[end]\nstalemate = \"win\"\n\
                 [promotion]\nmoves = \"entering\"\n\
                 [[pieces]]\nletter = \"N\"\nbetza = \"ffN\"\npromotion = \"forced\"\n\
                 promoted = { betza = \"WfF\" }\ndrop = { forbidden_ranks = [1, 2] }\n",
            ),
        ],
    );
    let v = Variant::load(&dir.join("child.toml")).unwrap();
    // The child's words, the parent's, the grandparent's, and the defaults.
    assert_eq!(v.stalemate, StalemateValue::Win);
    assert!(v.promotion_entering);
    assert_eq!(v.repetition_result, StalemateValue::Win);
    assert_eq!(v.match_rule, MatchRule::ConsecutiveWins(2));
    assert!(v.perpetual_check_loses);
    assert!(!v.flip_on_capture && !v.moves_from_behind);
    let n = v.kind_by_letter('N', false).unwrap();
    assert_eq!(v.kinds[n as usize].promotion, PromotionMode::Forced);
    let spec = VariantSpec::load(&dir.join("child.toml")).unwrap();
    assert_eq!(spec.match_rule, Some(MatchRule::ConsecutiveWins(2)));
    // Written back, the words are those of the file.
    let text = toml::to_string(&spec).unwrap();
    assert!(text.contains("match = \"consecutive-wins:2\""), "{text}");
    assert!(text.contains("stalemate = \"win\""), "{text}");
    assert!(text.contains("promotion = \"forced\""), "{text}");
    assert_eq!(VariantSpec::from_toml(&text, "back").unwrap(), spec);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_bad_word_in_an_extending_file_names_that_file() {
    let dir = files(
        "bad",
        &[
            (
                "parent.toml",
                "extends = \"shogi\"\n[end]\nstalemate = \"nope\"\n",
            ),
            (
                "child.toml",
                "extends = \"parent\"\n[end]\nstalemate = \"draw\"\n",
            ),
        ],
    );
    // Every file of the chain is read whole, so the parent's bad word is refused too.
    match VariantSpec::load(&dir.join("child.toml")) {
        Err(Error::Config { file, key, reason }) => {
            assert!(file.ends_with("parent.toml"), "{file}");
            assert_eq!(key, "end.stalemate");
            assert!(
                reason.contains("`nope`") && reason.contains("`loss`"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(dir).unwrap();
}
