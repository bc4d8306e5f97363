//! What each native decoder reads and takes, in one table: its channels (with the names a
//! channel usually goes by, for guessing), its options (with what each accepts), the decoder
//! it stacks on and the presets its events serve. The spec grammar's help and errors, the
//! decoders' own option checks, the workbench's decoder dialog and the engine's registry all
//! read this table, so a hint can never disagree with what a decoder accepts (a unit test
//! feeds every accepted value in the table to its decoder).

pub use crate::presets::PresetSpec;

/// A channel a decoder reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelSpec {
    /// The spec key (`clk`, `mosi`, …).
    pub key: &'static str,
    pub required: bool,
    /// Names a channel goes by for this role, most specific first; compared as typed names
    /// are resolved (the exact name, else the one name that ends with it after a separator),
    /// without case.
    pub aliases: &'static [&'static str],
}

/// An option a decoder takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    pub key: &'static str,
    /// What it accepts, as the help prints it: alternatives `a|b`, a range `5..9`, or a
    /// placeholder in capitals (`N`).
    pub accepts: &'static str,
    /// The value taken when the option is not given, as text.
    pub default: &'static str,
}

/// A native decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// The name a spec stage uses (`uart`, `sd-spi`).
    pub name: &'static str,
    /// What a menu shows.
    pub label: &'static str,
    pub channels: &'static [ChannelSpec],
    pub options: &'static [OptionSpec],
    /// The decoder whose output this one reads (`sd-spi` reads `spi`'s words); `None` for a
    /// decoder that reads channels.
    pub stacks_on: Option<&'static str>,
    /// What the channel table cannot say (UART needs `tx` or `rx`).
    pub needs: Option<&'static str>,
    pub presets: &'static [PresetSpec],
    /// The rows its annotations are put on (PulseView's rows), each an event pair
    /// ([`crate::event_name`], and `_end`) once attached.
    pub rows: &'static [&'static str],
}

impl Descriptor {
    /// The options as `key=ACCEPTS,…`: the dialog's hint and half of [`Descriptor::syntax`].
    pub fn options_hint(&self) -> String {
        self.options.iter().map(|o| format!("{}={}", o.key, o.accepts)).collect::<Vec<_>>().join(",")
    }

    /// The stage's syntax for help and errors: `uart:tx=CH,rx=CH,baud=N|auto,…`; a stacked
    /// decoder shows the decoder under it (`spi:… | sd-spi:block=1..4096`).
    pub fn syntax(&self) -> String {
        let mut keys: Vec<String> = self
            .channels
            .iter()
            .map(|c| if c.required { format!("{}=CH", c.key) } else { format!("[{}=CH]", c.key) })
            .collect();
        keys.extend(self.options.iter().map(|o| format!("[{}={}]", o.key, o.accepts)));
        let own =
            if keys.is_empty() { self.name.to_owned() } else { format!("{}:{}", self.name, keys.join(",")) };
        match self.stacks_on.and_then(native) {
            Some(base) => format!("{} | {own}", base.syntax()),
            None => own,
        }
    }

    pub fn channel(&self, key: &str) -> Option<&ChannelSpec> {
        self.channels.iter().find(|c| c.key == key)
    }

    /// The events its annotations become: each row's start and `_end` event.
    pub fn events(&self) -> Vec<String> {
        self.rows
            .iter()
            .flat_map(|row| {
                let start = crate::event_name(self.name, row);
                [format!("{start}_end"), start]
            })
            .collect()
    }

    pub fn option(&self, key: &str) -> Option<&OptionSpec> {
        self.options.iter().find(|o| o.key == key)
    }

    /// Every key a stage of this decoder may give: channels, then options.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.channels.iter().map(|c| c.key).chain(self.options.iter().map(|o| o.key))
    }
}

// Most specific first: a simulated SD host has both a `CMD` phase line and its bus line
// `SD_CMD`, and the bus is what the decoder reads.
const CLK: &[&str] = &["SD_CLK", "SDCLK", "CLK", "SCK", "SCLK", "CLOCK"];
const FLAG: &str = "0|1";

pub const UART: Descriptor = Descriptor {
    name: "uart",
    label: "UART",
    channels: &[
        ChannelSpec { key: "rx", required: false, aliases: &["RX", "RXD"] },
        ChannelSpec { key: "tx", required: false, aliases: &["TX", "TXD"] },
    ],
    options: &[
        OptionSpec { key: "baud", accepts: "N|auto", default: "auto" },
        OptionSpec { key: "bits", accepts: "5..9", default: "8" },
        OptionSpec { key: "parity", accepts: "none|even|odd", default: "none" },
        OptionSpec { key: "stop", accepts: "1|1.5|2", default: "1" },
        OptionSpec { key: "invert", accepts: FLAG, default: "0" },
    ],
    stacks_on: None,
    needs: Some("tx=CH or rx=CH (or both)"),
    presets: &[],
    rows: &["data", "warnings"],
};

pub const SPI: Descriptor = Descriptor {
    name: "spi",
    label: "SPI",
    channels: &[
        ChannelSpec { key: "clk", required: true, aliases: CLK },
        ChannelSpec { key: "mosi", required: false, aliases: &["MOSI", "COPI", "SDI", "DI"] },
        ChannelSpec { key: "miso", required: false, aliases: &["MISO", "CIPO", "SDO", "DO"] },
        ChannelSpec { key: "cs", required: false, aliases: &["CS", "NCS", "CSN", "SS", "NSS", "CE"] },
    ],
    options: &[
        OptionSpec { key: "cpol", accepts: FLAG, default: "0" },
        OptionSpec { key: "cpha", accepts: FLAG, default: "0" },
        OptionSpec { key: "cs_active", accepts: "low|high", default: "low" },
        OptionSpec { key: "order", accepts: "msb|lsb", default: "msb" },
        OptionSpec { key: "bits", accepts: "1..64", default: "8" },
    ],
    stacks_on: None,
    needs: Some("mosi=CH or miso=CH (or both)"),
    presets: &[],
    rows: &["mosi", "miso", "transfer", "warnings"],
};

pub const I2C: Descriptor = Descriptor {
    name: "i2c",
    label: "I2C",
    channels: &[
        ChannelSpec { key: "scl", required: true, aliases: &["SCL", "SCK"] },
        ChannelSpec { key: "sda", required: true, aliases: &["SDA"] },
    ],
    options: &[],
    stacks_on: None,
    needs: None,
    presets: &[],
    rows: &["start", "stop", "address", "address10", "rw", "data", "ack", "warnings"],
};

pub const SD: Descriptor = Descriptor {
    name: "sd",
    label: "SD (native: CMD, DAT0-3)",
    channels: &[
        ChannelSpec { key: "clk", required: true, aliases: CLK },
        ChannelSpec { key: "cmd", required: true, aliases: &["SD_CMD", "SDCMD", "CMD"] },
        ChannelSpec { key: "dat0", required: false, aliases: &["SD_DAT0", "SDDAT0", "DAT0", "DATA0"] },
        ChannelSpec { key: "dat1", required: false, aliases: &["SD_DAT1", "SDDAT1", "DAT1", "DATA1"] },
        ChannelSpec { key: "dat2", required: false, aliases: &["SD_DAT2", "SDDAT2", "DAT2", "DATA2"] },
        ChannelSpec { key: "dat3", required: false, aliases: &["SD_DAT3", "SDDAT3", "DAT3", "DATA3"] },
    ],
    options: &[
        // 4 when dat0..dat3 are all given.
        OptionSpec { key: "width", accepts: "1|4", default: "1" },
        OptionSpec { key: "block", accepts: "1..4096", default: "512" },
    ],
    stacks_on: None,
    needs: None,
    presets: crate::presets::PRESETS,
    rows: &["cmd", "response", "data", "busy", "crc-status", "warnings"],
};

pub const SD_SPI: Descriptor = Descriptor {
    name: "sd-spi",
    label: "SD over SPI",
    channels: &[],
    options: &[OptionSpec { key: "block", accepts: "1..4096", default: "512" }],
    stacks_on: Some("spi"),
    needs: None,
    presets: &[],
    rows: &["cmd", "response", "token", "data", "data-response", "busy", "warnings"],
};

/// Every native decoder, in the order menus list them.
pub const NATIVE: &[Descriptor] = &[UART, SPI, I2C, SD, SD_SPI];

/// The native decoder named `name`.
pub fn native(name: &str) -> Option<&'static Descriptor> {
    NATIVE.iter().find(|d| d.name == name)
}

/// The events the native decoder stacks `specs` add (each row's start and `_end` events),
/// known before any decode; a spec that does not parse, or a stage found at run time
/// (sigrok's), adds none here.
pub fn events_of_stacks(specs: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for spec in specs {
        for stage in crate::spec::parse(spec).unwrap_or_default() {
            for e in native(&stage.name).map(|d| d.events()).unwrap_or_default() {
                if !out.contains(&e) {
                    out.push(e);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DecodeError, Inputs};
    use latscope_model::{DigitalTrack, Source, SourceKind};

    /// A source with one silent digital channel per name.
    fn channels(names: &[&str]) -> Source {
        let mut s = Source::new("t", "t", SourceKind::File);
        for n in names {
            s.digital.push(DigitalTrack::new((*n).to_owned(), 0));
        }
        s
    }

    /// A spec of `d` with every channel given and `extra` options.
    fn spec_of(d: &Descriptor, extra: &str) -> (String, Source) {
        let (stage_of, base) = match d.stacks_on.and_then(native) {
            Some(base) => (d, base),
            None => (d, d),
        };
        let names: Vec<String> = base.channels.iter().map(|c| c.key.to_uppercase()).collect();
        let mut params: Vec<String> =
            base.channels.iter().map(|c| format!("{}={}", c.key, c.key.to_uppercase())).collect();
        let source = channels(&names.iter().map(String::as_str).collect::<Vec<_>>());
        if std::ptr::eq(stage_of, base) {
            params.extend(extra.split(',').filter(|e| !e.is_empty()).map(str::to_owned));
            (format!("{}:{}", d.name, params.join(",")), source)
        } else {
            let own = if extra.is_empty() { d.name.to_owned() } else { format!("{}:{extra}", d.name) };
            (format!("{}:{} | {own}", base.name, params.join(",")), source)
        }
    }

    /// The values an `accepts` text names: each alternative, a range's two ends.
    fn accepted_values(accepts: &str) -> Vec<String> {
        accepts
            .split('|')
            .flat_map(|alt| match alt.split_once("..") {
                Some((lo, hi)) => vec![lo.to_owned(), hi.to_owned()],
                None if alt.chars().all(|c| c.is_ascii_uppercase()) => vec!["1000000".to_owned()],
                None => vec![alt.to_owned()],
            })
            .collect()
    }

    #[test]
    fn every_value_the_table_names_is_accepted_and_one_past_a_range_is_refused() {
        for d in NATIVE {
            let decode = |extra: &str| {
                let (spec, source) = spec_of(d, extra);
                crate::decode(&spec, &Inputs::of_source(&source, Some(1_000_000))).map(|_| ())
            };
            assert_eq!(decode(""), Ok(()), "{}: every channel given, no option", d.name);
            for o in d.options {
                // The width of four DAT lines is the default only with all of them.
                for v in accepted_values(o.accepts).into_iter().chain([o.default.to_owned()]) {
                    assert_eq!(decode(&format!("{}={v}", o.key)), Ok(()), "{}: {}={v}", d.name, o.key);
                }
                if let Some((_, hi)) = o.accepts.split_once("..") {
                    let past = hi.parse::<u64>().unwrap() + 1;
                    let refused = decode(&format!("{}={past}", o.key));
                    assert!(
                        matches!(refused, Err(DecodeError::Option { .. })),
                        "{}: {}={past}: {refused:?}",
                        d.name,
                        o.key
                    );
                }
            }
            let unknown = decode("nonsense=1");
            let Err(DecodeError::Option { message, .. }) = unknown else { panic!("{}: {unknown:?}", d.name) };
            for k in d.keys() {
                assert!(message.contains(k), "{}: the unknown-key error lists {k}: {message}", d.name);
            }
        }
    }

    #[test]
    fn syntax_and_hints_come_from_the_table() {
        assert_eq!(UART.options_hint(), "baud=N|auto,bits=5..9,parity=none|even|odd,stop=1|1.5|2,invert=0|1");
        assert_eq!(SD_SPI.syntax(), format!("{} | sd-spi:[block=1..4096]", SPI.syntax()));
        assert!(SD.syntax().starts_with("sd:clk=CH,cmd=CH,[dat0=CH]"), "{}", SD.syntax());
        assert_eq!(native("sd").map(|d| d.presets.len()), Some(4));
    }
}
