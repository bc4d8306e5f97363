//! The decoder spec grammar, parsed with nom:
//!
//! ```text
//! spec  := stage ( '|' stage )*
//! stage := NAME [ ':' ID ] [ ':' param ( ',' param )* ]     ':' ID only after `sigrok`
//! param := KEY '=' VALUE            VALUE runs to the next ',' or '|', trimmed
//! ```
//!
//! `uart:tx=DIN 4 (UART),baud=auto` is one stage; `spi:clk=CLK,mosi=MOSI | sd-spi` stacks
//! `sd-spi` on `spi`. Channel names may hold spaces and parentheses (sigrok probe names do),
//! so a value is everything up to the separator. `sigrok:i2c:scl=SCL,sda=SDA | sigrok:eeprom24xx`
//! runs libsigrokdecode's decoders `i2c` and `eeprom24xx` (through sigrok-cli), with channels
//! and options as sigrok names them. Errors give the 1-based column.

use nom::{
    IResult, Parser,
    bytes::complete::{take_till, take_while1},
    character::complete::{char, space0},
};

/// One `KEY=VALUE` of a stage, with the columns of its key and value for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub key: String,
    pub value: String,
    pub key_column: usize,
    pub value_column: usize,
}

/// One decoder of a stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    pub name: String,
    /// The sigrok decoder's id of a `sigrok:ID` stage; `None` for every other decoder.
    pub id: Option<String>,
    pub column: usize,
    pub params: Vec<Param>,
}

/// A decoder stack as typed and as parsed: what a front end passes around once it has
/// checked the text (the engine decodes by the text, which it parses again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    pub text: String,
    pub stages: Vec<Stage>,
}

impl Stack {
    pub fn parse(text: &str) -> Result<Stack, SpecError> {
        Ok(Stack { text: text.to_owned(), stages: parse(text)? })
    }

    /// The first stage's decoder (the one that reads channels).
    pub fn first(&self) -> Option<&str> {
        self.stages.first().map(|s| s.name.as_str())
    }
}

/// A spec that does not parse: what was expected, and the 1-based column where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("decoder spec, column {column}: {message}")]
pub struct SpecError {
    pub column: usize,
    pub message: String,
}

/// The stage name that runs a sigrok decoder, `sigrok:ID`.
pub const SIGROK: &str = "sigrok";

fn name(i: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-').parse(i)
}

fn value(i: &str) -> IResult<&str, &str> {
    take_till(|c| c == ',' || c == '|').parse(i)
}

/// Parses a whole spec into its stages, in stacking order.
pub fn parse(spec: &str) -> Result<Vec<Stage>, SpecError> {
    let column = |rest: &str| spec[..spec.len() - rest.len()].chars().count() + 1;
    let err = |rest: &str, message: String| SpecError { column: column(rest), message };
    let mut stages = Vec::new();
    let mut rest = spec;
    loop {
        let (r, _) = space0::<_, nom::error::Error<&str>>.parse(rest).unwrap_or((rest, ""));
        let Ok((r, stage_name)) = name(r) else {
            return Err(err(r, "expected a decoder name (uart, spi, i2c, sd, sd-spi)".into()));
        };
        let mut stage = Stage {
            name: stage_name.to_ascii_lowercase(),
            column: column(r) - stage_name.len(),
            id: None,
            params: Vec::new(),
        };
        let (mut r, _) = space0::<_, nom::error::Error<&str>>.parse(r).unwrap_or((r, ""));
        if stage.name == SIGROK {
            let Ok((after, _)) = char::<_, nom::error::Error<&str>>(':').parse(r) else {
                return Err(err(
                    r,
                    "expected `:ID` after `sigrok` (a sigrok decoder's id: sigrok:i2c)".into(),
                ));
            };
            let (after, _) = space0::<_, nom::error::Error<&str>>.parse(after).unwrap_or((after, ""));
            let Ok((after, id)) = name(after) else {
                return Err(err(after, "expected a sigrok decoder's id after `sigrok:` (sigrok:i2c)".into()));
            };
            if after.trim_start().starts_with('=') {
                return Err(err(
                    after,
                    format!("`sigrok:{id}=…`: give the decoder's id first (sigrok:ID:{id}=…)"),
                ));
            }
            stage.id = Some(id.to_owned());
            r = space0::<_, nom::error::Error<&str>>.parse(after).map_or(after, |(a, _)| a);
        }
        if let Ok((after, _)) = char::<_, nom::error::Error<&str>>(':').parse(r) {
            r = after;
            loop {
                let (p, _) = space0::<_, nom::error::Error<&str>>.parse(r).unwrap_or((r, ""));
                let Ok((p, key)) = name(p) else {
                    return Err(err(p, "expected KEY=VALUE".into()));
                };
                let key_column = column(p) - key.chars().count();
                let (p, _) = space0::<_, nom::error::Error<&str>>.parse(p).unwrap_or((p, ""));
                let Ok((p, _)) = char::<_, nom::error::Error<&str>>('=').parse(p) else {
                    return Err(err(p, format!("expected `=` after `{key}`")));
                };
                let Ok((p, v)) = value(p) else {
                    return Err(err(p, format!("expected a value for `{key}`")));
                };
                let trimmed = v.trim();
                if trimmed.is_empty() {
                    return Err(err(p, format!("`{key}` has an empty value")));
                }
                let lead = v.len() - v.trim_start().len();
                let value_column = column(p) - v.chars().count() + v[..lead].chars().count();
                stage.params.push(Param {
                    key: key.to_ascii_lowercase(),
                    value: trimmed.to_owned(),
                    key_column,
                    value_column,
                });
                r = p;
                match char::<_, nom::error::Error<&str>>(',').parse(r) {
                    Ok((after, _)) => r = after,
                    Err(_) => break,
                }
            }
        }
        stages.push(stage);
        let (r, _) = space0::<_, nom::error::Error<&str>>.parse(r).unwrap_or((r, ""));
        if r.is_empty() {
            return Ok(stages);
        }
        match char::<_, nom::error::Error<&str>>('|').parse(r) {
            Ok((after, _)) => rest = after,
            Err(_) => return Err(err(r, "expected `,`, `|` or the end of the spec".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sigrok_stage_takes_its_decoders_id_then_its_params() {
        let s = parse("sigrok:i2c:scl=SCL,sda=SDA | sigrok:eeprom24xx").unwrap_or_default();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].name.as_str(), s[0].id.as_deref()), ("sigrok", Some("i2c")));
        assert_eq!(
            s[0].params.iter().map(|p| (p.key.as_str(), p.value.as_str())).collect::<Vec<_>>(),
            [("scl", "SCL"), ("sda", "SDA")]
        );
        assert_eq!((s[1].id.as_deref(), s[1].params.len()), (Some("eeprom24xx"), 0));
        let s = parse("sigrok:can:can_rx=CAN_RX,nominal_bitrate=125000").unwrap_or_default();
        assert_eq!(s[0].params[1].value, "125000");
        // `:ID` follows only `sigrok`; without one, or with a parameter in its place, it is an error.
        assert_eq!(parse("uart:rx=RX").unwrap_or_default()[0].id, None);
        assert!(parse("sigrok").is_err_and(|e| e.message.contains("`:ID`")));
        assert!(parse("sigrok:scl=SCL").is_err_and(|e| e.message.contains("id first") && e.column == 11));
    }

    #[test]
    fn stages_params_and_columns() {
        let s = parse("uart:tx=DIN 4 (UART), baud=auto").unwrap_or_default();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "uart");
        assert_eq!(s[0].params[0].value, "DIN 4 (UART)");
        assert_eq!((s[0].params[1].key.as_str(), s[0].params[1].key_column), ("baud", 23));
        assert_eq!(s[0].params[1].value_column, 28);
        let s = parse("spi:clk=CLK,mosi=MOSI | sd-spi").unwrap_or_default();
        assert_eq!(s.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["spi", "sd-spi"]);
        assert_eq!(s[1].column, 25);
        assert!(s[1].params.is_empty());
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(parse("").map_err(|e| e.column), Err(1));
        assert_eq!(parse("uart:tx").map_err(|e| e.column), Err(8));
        assert_eq!(parse("uart:tx=").map_err(|e| e.column), Err(9));
        assert_eq!(parse("uart:tx=A,").map_err(|e| e.column), Err(11));
        assert_eq!(parse("spi | ").map_err(|e| e.column), Err(7));
        assert_eq!(parse("i2c x").map_err(|e| e.column), Err(5));
        let e = parse("uart:=3").err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(e, "decoder spec, column 6: expected KEY=VALUE");
    }
}
