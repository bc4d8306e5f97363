//! The decoder spec grammar, parsed with nom:
//!
//! ```text
//! spec  := stage ( '|' stage )*
//! stage := NAME [ ':' param ( ',' param )* ]
//! param := KEY '=' VALUE            VALUE runs to the next ',' or '|', trimmed
//! ```
//!
//! `uart:tx=DIN 4 (UART),baud=auto` is one stage; `spi:clk=CLK,mosi=MOSI | sd-spi` stacks
//! `sd-spi` on `spi`. Channel names may hold spaces and parentheses (sigrok probe names do),
//! so a value is everything up to the separator. Errors give the 1-based column.

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
            params: Vec::new(),
        };
        let (mut r, _) = space0::<_, nom::error::Error<&str>>.parse(r).unwrap_or((r, ""));
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
