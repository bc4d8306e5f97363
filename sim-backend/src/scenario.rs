//! Scenario files: TOML with the model's name, its settings at the top level
//! and calibration constants in tables. Built-in scenarios are embedded in the binary; any
//! key can be overridden with `KEY=VALUE` (dotted for tables: `pcie.drain_ns=800`).

use latscope_model::{PS_PER_NS, PS_PER_S, PS_PER_US, Ps};
use serde::de::DeserializeOwned;
use std::path::Path;

/// The scenarios that ship with latscope: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("e1000e-mta", include_str!("../../samples/scenarios/e1000e-mta.toml")),
    ("litesdcard", include_str!("../../samples/scenarios/litesdcard.toml")),
    ("imx8mq-cpuidle", include_str!("../../samples/scenarios/imx8mq-cpuidle.toml")),
    ("axienet-napi", include_str!("../../samples/scenarios/axienet-napi.toml")),
];

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("no scenario {name:?}: built in are {known}, or give a path to a .toml file")]
    Unknown { name: String, known: String },
    #[error("{file}: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: no setting {key:?} to override (known: {known})")]
    UnknownKey { file: String, key: String, known: String },
    #[error("{file}: {key}: {message}")]
    BadValue { file: String, key: String, message: String },
    #[error("{file}: unknown model {model:?} in `scenario`")]
    UnknownModel { file: String, model: String },
}

/// Which model a scenario file configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    E1000eMta,
    LiteSdCard,
    Imx8mqCpuidle,
    AxienetNapi,
}

/// A loaded scenario with its overrides applied.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The scenario's name (`scenario` key).
    pub name: String,
    /// Where it came from, for messages: a path or `builtin:NAME`.
    pub file: String,
    pub kind: Kind,
    table: toml::Table,
    /// The real question the scenario answers (`question`), taken out of the settings.
    question: Option<String>,
    /// What each top-level setting changes (`[help]`), taken out of the settings.
    help: std::collections::BTreeMap<String, String>,
    pub seed: u64,
    /// Stop the run at this simulated time.
    pub duration: Option<Ps>,
}

impl Scenario {
    /// A built-in name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Self, ScenarioError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Self::parse(&format!("builtin:{name_or_path}"), text);
        }
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") || path.exists() {
            let text = std::fs::read_to_string(path)
                .map_err(|source| ScenarioError::Io { file: name_or_path.to_owned(), source })?;
            return Self::parse(name_or_path, &text);
        }
        Err(ScenarioError::Unknown {
            name: name_or_path.to_owned(),
            known: BUILTIN.iter().map(|b| b.0).collect::<Vec<_>>().join(", "),
        })
    }

    pub fn parse(file: &str, text: &str) -> Result<Self, ScenarioError> {
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| ScenarioError::Parse {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        let bad = |message: String| ScenarioError::Parse { file: file.to_owned(), message };
        // The scenario's own explanation is no setting: the models never see it.
        let question = match table.remove("question") {
            None => None,
            Some(toml::Value::String(q)) => Some(q),
            Some(_) => return Err(bad("`question` is text".into())),
        };
        let mut help = std::collections::BTreeMap::new();
        match table.remove("help") {
            None => {}
            Some(toml::Value::Table(t)) => {
                for (key, text) in t {
                    match text {
                        toml::Value::String(text) => {
                            help.insert(key, text);
                        }
                        _ => return Err(bad(format!("[help] {key}: the help of a setting is text"))),
                    }
                }
            }
            Some(_) => return Err(bad("`[help]` is a table of texts, one per setting".into())),
        }
        if let Some(key) = help.keys().find(|k| !table.contains_key(k.as_str())) {
            return Err(bad(format!("[help] {key}: no such setting")));
        }
        let name = match table.get("scenario") {
            Some(toml::Value::String(s)) => s.clone(),
            _ => {
                return Err(ScenarioError::Parse {
                    file: file.to_owned(),
                    message: "missing `scenario = \"NAME\"`".into(),
                });
            }
        };
        let kind = match name.as_str() {
            "e1000e-mta" => Kind::E1000eMta,
            "litesdcard" => Kind::LiteSdCard,
            "imx8mq-cpuidle" => Kind::Imx8mqCpuidle,
            "axienet-napi" => Kind::AxienetNapi,
            _ => return Err(ScenarioError::UnknownModel { file: file.to_owned(), model: name }),
        };
        let seed = match table.get("seed") {
            Some(toml::Value::Integer(i)) => *i as u64,
            _ => 1,
        };
        Ok(Self { name, file: file.to_owned(), kind, table, question, help, seed, duration: None })
    }

    /// The real question this scenario answers (`question` in its file), when it says.
    pub fn question(&self) -> Option<&str> {
        self.question.as_deref()
    }

    /// The scenario's one-line description (`description` in its file).
    pub fn description(&self) -> Option<&str> {
        match self.table.get("description") {
            Some(toml::Value::String(d)) => Some(d),
            _ => None,
        }
    }

    /// Overrides `key` (dotted for tables) with `value`, parsed as a TOML value when it is
    /// one (numbers, booleans, arrays) and as a string otherwise. The key must exist and the
    /// new value must have the old one's type (an integer may replace a float).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ScenarioError> {
        let file = self.file.clone();
        let known = self.keys().join(", ");
        let mut parts = key.split('.').peekable();
        let mut table = &mut self.table;
        let slot = loop {
            let Some(part) = parts.next() else {
                return Err(ScenarioError::UnknownKey { file, key: key.into(), known });
            };
            let Some(v) = table.get_mut(part) else {
                return Err(ScenarioError::UnknownKey { file, key: key.into(), known });
            };
            if parts.peek().is_none() {
                break v;
            }
            match v {
                toml::Value::Table(t) => table = t,
                _ => return Err(ScenarioError::UnknownKey { file, key: key.into(), known }),
            }
        };
        let parsed = format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_owned()));
        let new = match (&*slot, parsed) {
            (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
            (toml::Value::String(_), toml::Value::String(s)) => toml::Value::String(s),
            (toml::Value::String(_), _) => toml::Value::String(value.to_owned()),
            (old, new) if std::mem::discriminant(old) == std::mem::discriminant(&new) => new,
            (old, new) => {
                return Err(ScenarioError::BadValue {
                    file,
                    key: key.into(),
                    message: format!("expected {}, got {} {value:?}", old.type_str(), new.type_str()),
                });
            }
        };
        *slot = new;
        if let (true, toml::Value::Integer(i)) = (key == "seed", &*slot) {
            self.seed = *i as u64;
        }
        Ok(())
    }

    /// Every overridable key, dotted.
    pub fn keys(&self) -> Vec<String> {
        fn walk(prefix: &str, t: &toml::Table, out: &mut Vec<String>) {
            for (k, v) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                match v {
                    toml::Value::Table(inner) => walk(&key, inner, out),
                    _ if key == "scenario" || key == "description" => {}
                    _ => out.push(key),
                }
            }
        }
        let mut out = Vec::new();
        walk("", &self.table, &mut out);
        out
    }

    /// The scenario as a model's typed configuration.
    pub fn config<T: DeserializeOwned>(&self) -> Result<T, ScenarioError> {
        toml::Value::Table(self.table.clone()).try_into().map_err(|e: toml::de::Error| ScenarioError::Parse {
            file: self.file.clone(),
            message: e.to_string(),
        })
    }

    /// A top-level setting as text, for reports.
    pub fn setting(&self, key: &str) -> Option<String> {
        self.table.get(key).map(|v| match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    pub fn bad_value(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::BadValue { file: self.file.clone(), key: key.to_owned(), message: message.into() }
    }
}

/// A top-level setting of a scenario, typed for an editor (the workbench's simulator panel).
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub key: String,
    pub value: SettingValue,
    /// The values a word setting may take; empty when any text goes.
    pub choices: Vec<String>,
    /// A number's unit, from the key's suffix (`_us`: µs, `_kib`: KiB).
    pub unit: Option<&'static str>,
    /// The range a number must lie in.
    pub range: (f64, f64),
    /// What the setting changes, from the scenario's `[help]` table.
    pub help: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    Text(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
}

impl SettingValue {
    /// As `--set KEY=VALUE` writes it.
    pub fn to_arg(&self) -> String {
        match self {
            SettingValue::Text(t) => t.clone(),
            SettingValue::Integer(i) => i.to_string(),
            SettingValue::Float(f) => format!("{f:?}"),
            SettingValue::Bool(b) => b.to_string(),
        }
    }
}

/// The unit a key's suffix names.
fn unit_of(key: &str) -> Option<&'static str> {
    const UNITS: &[(&str, &str)] = &[
        ("_ps", "ps"),
        ("_ns", "ns"),
        ("_us", "µs"),
        ("_ms", "ms"),
        ("_s", "s"),
        ("_kib", "KiB"),
        ("_mib", "MiB"),
        ("_mbps", "Mbit/s"),
        ("_probability", ""),
    ];
    UNITS.iter().find(|(suffix, _)| key.ends_with(suffix)).map(|(_, unit)| *unit).filter(|u| !u.is_empty())
}

impl Scenario {
    /// The top-level settings (not the calibration tables, not `seed`), typed: words with
    /// their valid values (a word that names a table `<key>s`, like `cpu` and `[cpus.*]`,
    /// takes that table's keys), numbers with their unit and limits.
    pub fn settings(&self) -> Vec<Setting> {
        let (choices, ranges) = crate::scenarios::constraints(self.kind);
        let mut out = Vec::new();
        for (key, v) in &self.table {
            if matches!(key.as_str(), "scenario" | "description" | "seed") {
                continue;
            }
            let value = match v {
                toml::Value::String(s) => SettingValue::Text(s.clone()),
                toml::Value::Integer(i) => SettingValue::Integer(*i),
                toml::Value::Float(f) => SettingValue::Float(*f),
                toml::Value::Boolean(b) => SettingValue::Bool(*b),
                _ => continue,
            };
            let mut words: Vec<String> = choices
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, c)| c.iter().map(|w| (*w).to_owned()).collect())
                .unwrap_or_default();
            if words.is_empty()
                && matches!(value, SettingValue::Text(_))
                && let Some(toml::Value::Table(t)) = self.table.get(&format!("{key}s"))
            {
                words = t.keys().cloned().collect();
            }
            let range = ranges
                .iter()
                .find(|(k, _, _)| k == key)
                .map_or((0.0, f64::INFINITY), |&(_, lo, hi)| (lo, hi));
            let help = self.help.get(key).cloned();
            out.push(Setting { key: key.clone(), value, choices: words, unit: unit_of(key), range, help });
        }
        out
    }
}

/// Parses `10ms`, `250us`, `3s`, `500ns`, `42ps` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Option<Ps> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.trim().parse().ok()?;
    let scale = match unit {
        "ps" => 1.0,
        "ns" => PS_PER_NS as f64,
        "us" => PS_PER_US as f64,
        "ms" => 1e9,
        "s" | "" => PS_PER_S as f64,
        _ => return None,
    };
    (v.is_finite() && v >= 0.0).then(|| (v * scale).round() as Ps)
}

/// What `latscope sim` does before running: load `name_or_path`, apply `KEY=VALUE`
/// overrides in order, then the seed and duration. Tests call this too, so they measure
/// exactly what the command line measures.
pub fn prepare(
    name_or_path: &str,
    sets: &[String],
    seed: Option<u64>,
    duration: Option<&str>,
) -> Result<Scenario, ScenarioError> {
    let mut s = Scenario::load(name_or_path)?;
    for kv in sets {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(s.bad_value(kv, "expected KEY=VALUE"));
        };
        s.set(k.trim(), v.trim())?;
    }
    if let Some(seed) = seed {
        s.seed = seed;
    }
    if let Some(d) = duration {
        s.duration = Some(
            parse_duration(d).ok_or_else(|| s.bad_value("--duration", format!("not a duration: {d:?}")))?,
        );
    }
    Ok(s)
}

#[cfg(test)]
mod tests {

    /// Every built-in scenario says which real question it answers, and every top-level
    /// setting (what the workbench's panel and `sim --list` show) says what it changes.
    #[test]
    fn every_builtin_scenario_explains_itself_and_every_setting() {
        for (name, _) in BUILTIN {
            let s = Scenario::load(name).unwrap();
            let q = s.question().unwrap_or_else(|| panic!("{name}: no `question`"));
            assert!(q.ends_with('?') && q.len() > 40, "{name}: {q}");
            let settings = s.settings();
            assert!(!settings.is_empty(), "{name}");
            for setting in &settings {
                let help =
                    setting.help.as_deref().unwrap_or_else(|| panic!("{name}: {} has no help", setting.key));
                assert!(help.len() > 15, "{name}: {}: {help}", setting.key);
            }
            // The help is no setting: `--set help.mode=x` and the models never see it.
            assert!(!s.keys().iter().any(|k| k.starts_with("help") || k == "question"), "{name}");
        }
    }

    #[test]
    fn help_for_a_setting_that_does_not_exist_is_an_error() {
        let text = "scenario = \"axienet-napi\"\ntx_completion = \"napi\"\n[help]\ntx_complete = \"typo\"\n";
        let e = Scenario::parse("t.toml", text).unwrap_err().to_string();
        assert!(e.contains("tx_complete") && e.contains("no such setting"), "{e}");
        let text = "scenario = \"axienet-napi\"\nquestion = 3\n";
        assert!(Scenario::parse("t.toml", text).unwrap_err().to_string().contains("question"));
    }

    use super::*;

    #[test]
    fn settings_are_typed_with_their_valid_values_and_units() {
        let s = Scenario::load("litesdcard").expect("built in");
        let settings = s.settings();
        let get =
            |k: &str| settings.iter().find(|x| x.key == k).unwrap_or_else(|| panic!("{k} in {settings:?}"));
        assert_eq!(get("mode").choices, ["cmd-irq", "dma-irq", "all-irq", "poll-5us", "poll-0us"]);
        assert_eq!(get("mode").value, SettingValue::Text("cmd-irq".into()));
        // A word naming one of the `[cpus.*]` tables offers those tables.
        assert_eq!(get("cpu").choices, ["microwatt-100mhz", "rocket-50mhz"]);
        assert_eq!(
            (get("sd_sleep_us").unit, get("sd_sleep_us").value.clone()),
            (Some("µs"), SettingValue::Float(5.0))
        );
        assert_eq!(get("request_kib").range.0, 1.0);
        assert!(settings.iter().all(|x| x.key != "seed" && !x.key.contains('.')));
        // Every valid value is accepted by the model, every offered word included.
        for setting in &settings {
            for word in &setting.choices {
                let mut t = s.clone();
                t.set(&setting.key, word).expect("a valid word");
            }
        }
        let imx = Scenario::load("imx8mq-cpuidle").expect("built in").settings();
        let soc = imx.iter().find(|x| x.key == "soc").expect("soc");
        assert_eq!(soc.choices, ["imx8mq", "imx93"]);
        let p = imx.iter().find(|x| x.key == "idle_probability").expect("idle_probability");
        assert_eq!(p.range, (0.0, 1.0));
    }

    #[test]
    fn overrides_are_checked_against_the_file() {
        let mut s = Scenario::parse(
            "t.toml",
            "scenario = \"e1000e-mta\"\nwrites = 128\nmode = \"a\"\n[pcie]\ndrain_ns = 800.0\n",
        )
        .expect("parse");
        s.set("writes", "64").expect("int");
        s.set("pcie.drain_ns", "700").expect("int for float");
        s.set("mode", "poll-5us").expect("bare string");
        let e = s.set("flush_evry", "8").expect_err("unknown key");
        assert!(e.to_string().contains("t.toml") && e.to_string().contains("flush_evry"), "{e}");
        let e = s.set("writes", "many").expect_err("type");
        assert!(e.to_string().contains("writes"), "{e}");
        assert_eq!(s.setting("writes").as_deref(), Some("64"));
        assert_eq!(parse_duration("2.5ms"), Some(2_500_000_000));
        assert_eq!(parse_duration("x"), None);
        assert!(matches!(Scenario::load("nope"), Err(ScenarioError::Unknown { .. })));
    }
}
