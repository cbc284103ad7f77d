//! Finds the summaries inside any experiment's data, without knowing its type.
//!
//! A harness [`Summary`](harness::Summary) is an object with `n`, `p50`, `mean` and
//! `ci999`; a [`MeanCi`](harness::MeanCi) one with `n`, `mean` and `half_width`. Both
//! carry nanoseconds. Each one found is labelled by the path that leads to it: for an
//! element of a list, the fields that tell it apart from its siblings (`Mpsc Std
//! Block`, `gap 10.0 ms`), for a field of an object, the field's name.

use harness::render::fmt_ns;
use serde_json::{Map, Value};

/// One summary found in a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    /// Where it sits in the data, readable: `Mpsc Std Block · summary`.
    pub label: String,
    pub n: u64,
    /// The median, when the summary has one (a `MeanCi` has none).
    pub p50: Option<f64>,
    pub mean: f64,
    /// Half-width of the 99.9 % confidence interval of the mean.
    pub ci: f64,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

impl Stat {
    /// The central value compared between runs: the median if there is one, else the mean.
    pub fn center(&self) -> f64 {
        self.p50.unwrap_or(self.mean)
    }

    pub fn center_name(&self) -> &'static str {
        if self.p50.is_some() { "p50" } else { "mean" }
    }
}

fn num(o: &Map<String, Value>, k: &str) -> Option<f64> {
    o.get(k).and_then(Value::as_f64)
}

fn as_stat(o: &Map<String, Value>, label: String) -> Option<Stat> {
    let n = o.get("n")?.as_u64()?;
    let mean = num(o, "mean")?;
    if let (Some(p50), Some(ci)) = (num(o, "p50"), num(o, "ci999")) {
        return Some(Stat {
            label,
            n,
            p50: Some(p50),
            mean,
            ci,
            p99: num(o, "p99"),
            max: num(o, "max"),
        });
    }
    num(o, "half_width").map(|ci| Stat {
        label,
        n,
        p50: None,
        mean,
        ci,
        p99: None,
        max: None,
    })
}

/// How one scalar field reads in a label.
fn show(key: &str, v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(format!("{key} {b}")),
        Value::Number(n) => {
            let x = n.as_f64()?;
            if x.fract() != 0.0 {
                return None; // a measured quantity, not a parameter
            }
            let name = key.trim_end_matches("_ns").trim_end_matches("_ms");
            Some(if key.ends_with("_ns") {
                format!("{name} {}", fmt_ns(x))
            } else if key.ends_with("_ms") {
                format!("{name} {} ms", x)
            } else {
                format!("{name} {x}")
            })
        }
        _ => None,
    }
}

/// Labels for the objects of one list: the fewest fields (strings first, then flags,
/// then whole numbers) that tell the elements apart; an index if nothing does.
fn element_labels(items: &[&Map<String, Value>]) -> Vec<String> {
    let mut keys: Vec<&String> = Vec::new();
    for o in items {
        for (k, v) in o.iter() {
            if matches!(v, Value::String(_) | Value::Bool(_) | Value::Number(_))
                && !keys.contains(&k)
            {
                keys.push(k);
            }
        }
    }
    let rank = |k: &str| match items.iter().find_map(|o| o.get(k)) {
        Some(Value::String(_)) => 0,
        Some(Value::Bool(_)) => 1,
        _ => 2,
    };
    keys.sort_by_key(|k| rank(k)); // stable: keeps the data's own order within a rank
    let cell = |o: &Map<String, Value>, k: &str| o.get(k).and_then(|v| show(k, v));
    let distinct = |chosen: &[&String]| {
        let mut seen: Vec<Vec<Option<String>>> = items
            .iter()
            .map(|o| chosen.iter().map(|k| cell(o, k)).collect())
            .collect();
        seen.sort();
        seen.dedup();
        seen.len()
    };
    let mut chosen: Vec<&String> = Vec::new();
    let mut count = 1;
    for k in keys {
        if count == items.len() {
            break;
        }
        let mut with = chosen.clone();
        with.push(k);
        let c = distinct(&with);
        if c > count {
            chosen = with;
            count = c;
        }
    }
    items
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut parts: Vec<String> = chosen.iter().filter_map(|k| cell(o, k)).collect();
            if count < items.len() || parts.is_empty() {
                parts.push(format!("#{}", i + 1));
            }
            parts.join(" ")
        })
        .collect()
}

fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<Stat>) {
    match v {
        Value::Object(o) => {
            if let Some(s) = as_stat(o, path.join(" · ")) {
                out.push(s);
                return;
            }
            for (k, child) in o {
                match child {
                    Value::Object(_) => {
                        path.push(k.clone());
                        walk(child, path, out);
                        path.pop();
                    }
                    // A list's elements are labelled by themselves; the list's name adds nothing.
                    Value::Array(_) => walk(child, path, out),
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            let objects: Vec<&Map<String, Value>> =
                items.iter().filter_map(Value::as_object).collect();
            if objects.is_empty() {
                return; // numbers or pairs: a curve, not a summary
            }
            for (o, label) in objects.iter().zip(element_labels(&objects)) {
                path.push(label);
                walk(&Value::Object((*o).clone()), path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Every summary in an experiment's data, in the data's order.
pub fn stats(data: &Value) -> Vec<Stat> {
    let mut out = Vec::new();
    walk(data, &mut Vec::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(p50: f64) -> Value {
        json!({"n": 10, "min": 1.0, "p50": p50, "mean": p50, "p99": p50, "p999": null,
               "max": p50, "stddev": 1.0, "ci999": 2.0})
    }

    #[test]
    fn labels_use_the_fewest_fields_that_tell_elements_apart() {
        let data = json!({"runs": [
            {"transport": "Mpsc", "wait": "Block", "placement": "Unpinned", "gap_ns": 0.0,
             "cpu_ns": 12.5, "summary": summary(100.0)},
            {"transport": "Mpsc", "wait": "Spin", "placement": "Unpinned", "gap_ns": 0.0,
             "cpu_ns": 13.5, "summary": summary(50.0)},
            {"transport": "Mpsc", "wait": "Block", "placement": "Unpinned", "gap_ns": 1e6,
             "cpu_ns": 14.5, "summary": summary(200.0)},
        ]});
        let s = stats(&data);
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Block gap 0 ns · summary",
                "Spin gap 0 ns · summary",
                "Block gap 1.00 ms · summary"
            ]
        );
        assert_eq!(s[2].center(), 200.0);
        assert_eq!(s[0].ci, 2.0);
    }

    #[test]
    fn mean_ci_objects_and_nested_fields_are_found() {
        let data = json!({
            "rows": [{"with_send": true, "per_op": {"n": 6, "mean": 5.0, "stddev": 1.0, "half_width": 0.5}},
                     {"with_send": false, "per_op": {"n": 6, "mean": 4.0, "stddev": 1.0, "half_width": 0.5}}],
            "from_send": summary(3.0),
            "curve": [[1.0, 2.0], [3.0, 4.0]],
        });
        let s = stats(&data);
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            // serde_json orders an object's fields by name
            [
                "from_send",
                "with_send true · per_op",
                "with_send false · per_op",
            ]
        );
        assert_eq!(s[1].p50, None);
        assert_eq!(s[1].center_name(), "mean");
    }

    #[test]
    fn identical_elements_get_an_index() {
        let data = json!([{"s": summary(1.0)}, {"s": summary(2.0)}]);
        let labels: Vec<String> = stats(&data).into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["#1 · s", "#2 · s"]);
    }
}
