//! The key path (`end.stalemate`, `pieces[3].promotion`) of the place a TOML error points at,
//! so that a config error names its key the way the compiler's own errors do.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// A TOML document's shape: its keys with where they are written, values left out.
enum Node {
    Table(Vec<(Spanned<String>, Node)>),
    Array(Vec<Node>),
    Leaf,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(n) = seq.next_element()? {
            items.push(n);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<Spanned<String>>()? {
            entries.push((k, map.next_value()?));
        }
        Ok(Node::Table(entries))
    }
}

/// One key of the document: where it is written, its path, and the extent of its table's keys
/// if its value is a table.
struct Key {
    span: Range<usize>,
    path: String,
    table: Option<Range<usize>>,
}

/// Appends the keys under `node` (path `prefix`) to `out`, parents before their children.
fn collect(node: &Node, prefix: &str, out: &mut Vec<Key>) {
    match node {
        Node::Table(entries) => {
            for (k, v) in entries {
                let path = match prefix {
                    "" => k.get_ref().clone(),
                    p => format!("{p}.{}", k.get_ref()),
                };
                out.push(Key {
                    span: k.span(),
                    path: path.clone(),
                    table: extent(v),
                });
                collect(v, &path, out);
            }
        }
        Node::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let path = format!("{prefix}[{i}]");
                if let Some(t) = extent(item) {
                    out.push(Key {
                        span: t.start..t.start,
                        path: path.clone(),
                        table: Some(t),
                    });
                }
                collect(item, &path, out);
            }
        }
        Node::Leaf => {}
    }
}

/// From the first to the last key written directly in a table.
fn extent(node: &Node) -> Option<Range<usize>> {
    let Node::Table(entries) = node else {
        return None;
    };
    let start = entries.iter().map(|(k, _)| k.span().start).min()?;
    let end = entries.iter().map(|(k, _)| k.span().end).max()?;
    Some(start..end)
}

/// The key path of what `span` points at in `text`: the key itself (an unknown key), the table
/// whose keys it spans (a missing key), or the key written on the same line before it (a bad
/// value). `None` when the text does not parse or nothing fits.
pub(crate) fn key_path(text: &str, span: Range<usize>) -> Option<String> {
    let root: Node = toml::from_str(text).ok()?;
    let mut keys = Vec::new();
    collect(&root, "", &mut keys);
    if let Some(k) = keys.iter().find(|k| k.span == span) {
        return Some(k.path.clone());
    }
    let within = |t: &Range<usize>| span.start <= t.start && t.end <= span.end;
    if let Some(k) = keys.iter().find(|k| k.table.as_ref().is_some_and(within)) {
        return Some(k.path.clone());
    }
    let before = keys
        .iter()
        .filter(|k| k.span.end <= span.start && k.span.start < k.span.end)
        .max_by_key(|k| k.span.start)?;
    let between = text.get(before.span.end..span.start)?;
    (between.trim_start().starts_with('=') && !between.contains('\n')).then(|| before.path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of(text: &str, at: &str) -> Option<String> {
        let start = text.find(at).unwrap();
        key_path(text, start..start + at.len())
    }

    #[test]
    fn names_the_key_of_a_value_a_key_or_a_table() {
        let text = "name = \"a\"\n[end]\nstalemate = \"maybe\"\n[[pieces]]\nletter = \"K\"\n\
                    [[pieces]]\nletter = \"G\"\ndrop = { nifu = 7, forbidden_ranks = [1, 300] }\n";
        assert_eq!(path_of(text, "\"maybe\"").as_deref(), Some("end.stalemate"));
        assert_eq!(path_of(text, "\"G\"").as_deref(), Some("pieces[1].letter"));
        assert_eq!(path_of(text, "7").as_deref(), Some("pieces[1].drop.nifu"));
        assert_eq!(
            path_of(text, "300").as_deref(),
            Some("pieces[1].drop.forbidden_ranks")
        );
        assert_eq!(
            path_of(text, "nifu").as_deref(),
            Some("pieces[1].drop.nifu")
        );
        // A missing key: the error spans the table.
        let item = "[[pieces]]\nletter = \"G\"\ndrop";
        assert_eq!(path_of(text, item).as_deref(), Some("pieces[1]"));
        let dotted = "name = \"a\"\nend.stalemate = \"maybe\"\n";
        assert_eq!(
            path_of(dotted, "\"maybe\"").as_deref(),
            Some("end.stalemate")
        );
        assert_eq!(path_of("files = = 9", "="), None);
    }
}
