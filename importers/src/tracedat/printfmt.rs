//! The `print fmt` of an event format, parsed and evaluated as libtraceevent does it for
//! `trace-cmd report`: a C format string and its argument expressions — `REC->field`,
//! integer arithmetic and bit operations, comparisons, `?:`, casts, array indexing, string
//! literals, and the kernel's helpers `__print_symbolic`, `__print_flags`,
//! `__print_hex(_str)`, `__print_array`, `__get_str`, `__get_dynamic_array(_len)`,
//! `__get_bitmask`, `__get_cpumask` (and their `__get_rel_*` forms), plus the helpers
//! trace-cmd's plugins register (`jbd2_dev_to_name`, `jiffies_to_msecs`) and `MAJOR`/`MINOR`
//! of a kernel dev_t (major = dev >> 20, minor = dev & 0xfffff).
//!
//! The text is split into tokens with nom; the expression tree is then built the way
//! libtraceevent's `process_op` builds it, because `trace-cmd report` prints what *that*
//! tree evaluates to: operators of equal priority group to the right, and a parenthesised
//! right operand of lower priority is rotated as if it had no parentheses — the kernel's
//! `timer_start` flags `REC->flags & (A | B | C | D)` evaluate as `(REC->flags & A) | B | C | D`
//! there, so trace-cmd prints `flags=D|P|I` for every timer. Values follow libtraceevent
//! too: a field reads as its bytes zero-extended; casts mask to the width of `u8`…`u32`,
//! `char`, `short` and `int` only; the conversion gives the sign (`%d` prints `(int)value`);
//! a symbol-table entry whose value is a name it does not know (`IOPRIO_CLASS_BE`) never
//! matches, so the value prints as `0x…`; `%p` prints as glibc does (`0x…`, `(nil)`) and `%ps`
//! resolves the address through the file's kallsyms. A format using a helper neither knows
//! does not parse: its events print as `[FAILED TO PARSE]` and raw fields, as trace-cmd's do.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::{char, multispace0, none_of, satisfy};
use nom::combinator::{map, recognize, value};
use nom::multi::many0;
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};
use std::fmt::Write;

/// What the evaluator needs to know about a field of the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldInfo {
    pub name: String,
    /// Bytes of the field in the record (0: to the end of the record).
    pub size: u32,
    /// Bytes of one element of an array (the declared type's size).
    pub elem_size: u32,
    pub array: bool,
    pub dynamic: bool,
    pub string: bool,
    pub signed: bool,
    pub pointer: bool,
    /// `long`/`unsigned long`: raw printing shows these in hex, as libtraceevent does.
    pub long: bool,
}

/// A field's value in one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Raw {
    /// A number as read from the record: zero-extended to 64 bits.
    Num(u64),
    /// An array's bytes (a string without its NUL).
    Bytes(Vec<u8>),
}

/// Where the evaluator reads fields.
pub(crate) trait Record {
    fn field(&self, index: usize) -> Option<Raw>;
}

/// Address → symbol resolution and the printk strings of the file.
pub(crate) trait Symbols {
    /// The function containing `addr` (libtraceevent's `find_func`): name and start address.
    fn function(&self, addr: u64) -> Option<(&str, u64)>;
    /// A string in printk_formats at `addr`.
    fn printk(&self, addr: u64) -> Option<&str>;
}

/// Why a `print fmt` is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FmtError {
    #[error("print fmt does not parse near {0:?}")]
    Syntax(String),
    #[error("print fmt uses `{0}`, a helper trace-cmd does not know either")]
    UnknownHelper(String),
    #[error("print fmt has more conversions than arguments")]
    ArgCount,
}

// ---------------------------------------------------------------------------------------
// Tokens (libtraceevent's token types: items, quoted strings, delimiters `( ) ,`, operators).

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Item(String),
    Str(String),
    Delim(char),
    Op(String),
    End,
}

fn item_tok(i: &str) -> IResult<&str, Tok> {
    map(take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_'), |s: &str| Tok::Item(s.to_string()))
        .parse(i)
}

/// A quoted string with its C escapes resolved.
fn quoted(q: char) -> impl FnMut(&str) -> IResult<&str, String> {
    move |i| {
        delimited(
            char(q),
            map(
                many0(alt((
                    preceded(
                        char('\\'),
                        alt((
                            value('\n', char('n')),
                            value('\t', char('t')),
                            value('\r', char('r')),
                            value('\0', char('0')),
                            satisfy(|_| true),
                        )),
                    ),
                    none_of(if q == '"' { "\"\\" } else { "'\\" }),
                ))),
                |cs: Vec<char>| cs.into_iter().collect(),
            ),
            char(q),
        )
        .parse(i)
    }
}

fn op_tok(i: &str) -> IResult<&str, Tok> {
    let two = alt((
        tag("->"),
        tag("<<"),
        tag(">>"),
        tag("<="),
        tag(">="),
        tag("=="),
        tag("!="),
        tag("&&"),
        tag("||"),
        tag("++"),
        tag("--"),
    ));
    let one =
        recognize(satisfy(|c: char| !c.is_alphanumeric() && !c.is_whitespace() && !"\"'(),_".contains(c)));
    map(alt((two, one)), |s: &str| Tok::Op(s.to_string())).parse(i)
}

fn token(i: &str) -> IResult<&str, Tok> {
    preceded(
        multispace0,
        alt((
            item_tok,
            map(quoted('"'), Tok::Str),
            map(quoted('\''), Tok::Str),
            map(satisfy(|c| matches!(c, '(' | ')' | ',')), Tok::Delim),
            op_tok,
        )),
    )
    .parse(i)
}

fn tokenize(text: &str) -> Result<Vec<Tok>, FmtError> {
    let (rest, toks) =
        many0(token).parse(text).map_err(|_| FmtError::Syntax(text.chars().take(40).collect()))?;
    if !rest.trim().is_empty() {
        return Err(FmtError::Syntax(rest.chars().take(40).collect()));
    }
    Ok(toks)
}

// ---------------------------------------------------------------------------------------
// The argument tree, as libtraceevent's `tep_print_arg`.

#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// The missing left side of a unary operator.
    Null,
    /// Words, numbers and string literals (libtraceevent keeps them all as text), with the
    /// number `strtoull` reads from the text (read once, not per event).
    Atom(String, u64),
    /// `REC->name`: index of the field (`None`: the format has no such field).
    Field(Option<usize>, String),
    /// A cast: `(type) item`.
    Type(String, Box<Node>),
    /// An operator; a unary one has a `Null` left; `?` has a `:` node on its right.
    Op {
        op: String,
        left: Option<Box<Node>>,
        right: Option<Box<Node>>,
        prio: i32,
    },
    Flags {
        field: Box<Node>,
        delim: String,
        table: Vec<(String, String)>,
    },
    Symbols {
        field: Box<Node>,
        table: Vec<(String, String)>,
    },
    Hex {
        buf: Box<Node>,
        len: Box<Node>,
        spaced: bool,
    },
    IntArray {
        buf: Box<Node>,
        count: Box<Node>,
        el_size: Box<Node>,
    },
    /// `__get_str(f)` and friends: what the helper reads and the field.
    Dynamic(DynKind, Option<usize>),
    /// A helper trace-cmd's plugins register, or MAJOR/MINOR.
    Func(String, Vec<Node>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DynKind {
    Str,
    Array,
    ArrayLen,
    Bitmask,
    Cpumask,
}

/// libtraceevent's `get_op_prio` (lower binds tighter; -1 for what it does not know).
fn op_prio(op: &str) -> i32 {
    match op {
        "~" | "!" => 4,
        "*" | "/" | "%" => 6,
        "+" | "-" => 7,
        "<<" | ">>" => 8,
        "<" | ">" | "<=" | ">=" => 9,
        "==" | "!=" => 10,
        "&" => 11,
        "^" => 12,
        "|" => 13,
        "&&" => 14,
        "||" => 15,
        "?" => 16,
        "++" | "--" => 3,
        _ => -1,
    }
}

const BINARY_OPS: &[&str] =
    &[">>", "<<", "&", "|", "&&", "||", "-", "+", "*", "^", "/", "%", "<", ">", "<=", ">=", "==", "!="];

/// Which child of the node `process_op` just built continues the expression when the next
/// operator binds tighter.
#[derive(Clone, Copy)]
enum Cont {
    Left,
    Right,
    Here,
}

struct ArgParser<'f> {
    toks: Vec<Tok>,
    pos: usize,
    fields: &'f [FieldInfo],
}

type PResult<T> = Result<T, FmtError>;

fn syntax(what: &str) -> FmtError {
    FmtError::Syntax(what.to_string())
}

impl ArgParser<'_> {
    fn read(&mut self) -> Tok {
        let t = self.toks.get(self.pos).cloned().unwrap_or(Tok::End);
        self.pos += 1;
        t
    }

    fn expect(&self, t: &Tok, want: &Tok) -> PResult<()> {
        if t == want { Ok(()) } else { Err(FmtError::Syntax(format!("expected {want:?}, found {t:?}"))) }
    }

    fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    fn process_arg(&mut self) -> PResult<(Node, Tok)> {
        let t = self.read();
        self.process_arg_token(t)
    }

    /// One operand (libtraceevent's `process_arg_token`), and the token after it.
    fn process_arg_token(&mut self, t: Tok) -> PResult<(Node, Tok)> {
        match t {
            Tok::Item(s) if s == "REC" => {
                let arrow = self.read();
                self.expect(&arrow, &Tok::Op("->".into()))?;
                let Tok::Item(name) = self.read() else { return Err(syntax("REC-> without a field")) };
                let index = self.field_index(&name);
                Ok((Node::Field(index, name), self.read()))
            }
            Tok::Item(s) => {
                let mut next = self.read();
                if next == Tok::Delim('(') {
                    return self.process_function(&s);
                }
                let mut atom = s;
                while let Tok::Item(w) = &next {
                    atom.push(' ');
                    atom.push_str(w);
                    next = self.read();
                }
                Ok((atom_node(atom), next))
            }
            Tok::Str(s) => {
                let mut atom = s;
                let mut next = self.read();
                while let Tok::Str(w) = &next {
                    atom.push_str(w);
                    next = self.read();
                }
                Ok((atom_node(atom), next))
            }
            Tok::Delim('(') => self.process_paren(),
            Tok::Op(op) => {
                let mut node = Node::Op { op: op.clone(), left: None, right: None, prio: 0 };
                let next = self.process_op(&mut node, Tok::Op(op))?;
                Ok((node, next))
            }
            t => Err(FmtError::Syntax(format!("unexpected {t:?}"))),
        }
    }

    fn process_paren(&mut self) -> PResult<(Node, Tok)> {
        let (mut inner, mut t) = self.process_arg()?;
        if matches!(t, Tok::Op(_)) {
            t = self.process_op(&mut inner, t)?;
        }
        self.expect(&t, &Tok::Delim(')'))?;
        let next = self.read();
        // `(type) item`: a cast when an item or another `(` follows.
        if matches!(next, Tok::Item(_) | Tok::Str(_) | Tok::Delim('(')) {
            let Node::Atom(ty, _) = inner else {
                return Err(syntax("a cast to something that is not a type"));
            };
            let (item, t) = self.process_arg_token(next)?;
            return Ok((Node::Type(ty, Box::new(item)), t));
        }
        Ok((inner, next))
    }

    /// libtraceevent's `process_op`: extends `arg` with the operator `tok` and what follows.
    fn process_op(&mut self, arg: &mut Node, tok: Tok) -> PResult<Tok> {
        let Tok::Op(op) = tok else { return Err(syntax("operator expected")) };
        let next;
        let cont;
        if let Node::Op { left: left @ None, right, .. } = arg {
            if !matches!(op.as_str(), "~" | "!" | "+" | "-") {
                return Err(FmtError::Syntax(format!("bad unary operator {op}")));
            }
            let (r, t) = self.process_arg()?;
            *left = Some(Box::new(Node::Null));
            *right = Some(Box::new(r));
            (next, cont) = (t, Cont::Right);
        } else if op == "?" {
            let cond = std::mem::replace(arg, Node::Null);
            let (mut yes, mut t) = self.process_arg()?;
            while matches!(&t, Tok::Op(o) if o != ":") {
                t = self.process_op(&mut yes, t)?;
            }
            self.expect(&t, &Tok::Op(":".into()))?;
            let (no, t) = self.process_arg()?;
            let branches =
                Node::Op { op: ":".into(), left: Some(Box::new(yes)), right: Some(Box::new(no)), prio: 0 };
            *arg = Node::Op { op, left: Some(Box::new(cond)), right: Some(Box::new(branches)), prio: 0 };
            (next, cont) = (t, Cont::Here);
        } else if BINARY_OPS.contains(&op.as_str()) {
            let left = std::mem::replace(arg, Node::Null);
            let prio = op_prio(&op);
            let t = self.read();
            // `(void *)`: a pointer type, not a multiplication.
            if op == "*" && t == Tok::Delim(')') {
                let Node::Atom(a, _) = left else { return Err(syntax("bad pointer type")) };
                *arg = atom_node(format!("{a} *"));
                return Ok(t);
            }
            let (right, t) = self.process_arg_token(t)?;
            match right {
                Node::Op { op: rop, left: rleft, right: rright, prio: rprio }
                    if op_prio(&op) < op_prio(&rop) =>
                {
                    // libtraceevent rotates a right operand of lower priority, even one that
                    // was written in parentheses.
                    let inner = Node::Op { op, left: Some(Box::new(left)), right: rleft, prio };
                    *arg = Node::Op { op: rop, left: Some(Box::new(inner)), right: rright, prio: rprio };
                    cont = Cont::Left;
                }
                right => {
                    *arg = Node::Op { op, left: Some(Box::new(left)), right: Some(Box::new(right)), prio };
                    cont = Cont::Right;
                }
            }
            next = t;
        } else if op == "[" {
            let left = std::mem::replace(arg, Node::Null);
            let (index, t) = self.process_arg()?;
            self.expect(&t, &Tok::Op("]".into()))?;
            *arg = Node::Op { op, left: Some(Box::new(left)), right: Some(Box::new(index)), prio: 0 };
            (next, cont) = (self.read(), Cont::Here);
        } else {
            return Err(FmtError::Syntax(format!("unknown operator {op}")));
        }
        if let Tok::Op(o) = &next
            && o != ":"
        {
            let prio = op_prio(o);
            let arg_prio = match arg {
                Node::Op { prio, .. } => *prio,
                _ => 0,
            };
            if prio > arg_prio {
                return self.process_op(arg, next);
            }
            let Node::Op { left, right, .. } = arg else { return self.process_op(arg, next) };
            let child = match cont {
                Cont::Left => left.as_deref_mut(),
                Cont::Right => right.as_deref_mut(),
                Cont::Here => None,
            };
            return match child {
                Some(c) => self.process_op(c, next),
                None => Err(syntax("operator after an operand it cannot take")),
            };
        }
        Ok(next)
    }

    /// An operand and every operator after it (libtraceevent's `process_field_arg`).
    fn field_arg(&mut self) -> PResult<(Node, Tok)> {
        let (mut n, mut t) = self.process_arg()?;
        while matches!(t, Tok::Op(_)) {
            t = self.process_op(&mut n, t)?;
        }
        Ok((n, t))
    }

    fn process_function(&mut self, name: &str) -> PResult<(Node, Tok)> {
        let node = match name {
            "__print_flags" | "__print_flags_u64" | "__print_symbolic" | "__print_symbolic_u64" => {
                let (field, t) = self.field_arg()?;
                self.expect(&t, &Tok::Delim(','))?;
                let flags = name.starts_with("__print_flags");
                let delim = if flags {
                    let (d, t) = self.process_arg()?;
                    self.expect(&t, &Tok::Delim(','))?;
                    match d {
                        Node::Atom(s, _) => s,
                        _ => return Err(syntax("__print_flags delimiter")),
                    }
                } else {
                    String::new()
                };
                let (table, t) = self.process_fields()?;
                self.expect(&t, &Tok::Delim(')'))?;
                if flags {
                    Node::Flags { field: Box::new(field), delim, table }
                } else {
                    Node::Symbols { field: Box::new(field), table }
                }
            }
            "__print_hex" | "__print_hex_str" => {
                let buf = self.arg_then(',')?;
                let len = self.arg_then(')')?;
                Node::Hex { buf: Box::new(buf), len: Box::new(len), spaced: name == "__print_hex" }
            }
            "__print_array" => {
                let buf = self.arg_then(',')?;
                let count = self.arg_then(',')?;
                let el_size = self.arg_then(')')?;
                Node::IntArray { buf: Box::new(buf), count: Box::new(count), el_size: Box::new(el_size) }
            }
            _ => {
                let kind = match name {
                    "__get_str" | "__get_rel_str" => Some(DynKind::Str),
                    "__get_dynamic_array" | "__get_rel_dynamic_array" => Some(DynKind::Array),
                    "__get_dynamic_array_len" | "__get_rel_dynamic_array_len" => Some(DynKind::ArrayLen),
                    "__get_bitmask" | "__get_rel_bitmask" => Some(DynKind::Bitmask),
                    "__get_cpumask" | "__get_rel_cpumask" => Some(DynKind::Cpumask),
                    _ => None,
                };
                if let Some(kind) = kind {
                    let Tok::Item(field) = self.read() else { return Err(syntax("helper without a field")) };
                    let t = self.read();
                    self.expect(&t, &Tok::Delim(')'))?;
                    Node::Dynamic(kind, self.field_index(&field))
                } else if matches!(name, "jbd2_dev_to_name" | "jiffies_to_msecs" | "MAJOR" | "MINOR") {
                    Node::Func(name.to_string(), vec![self.arg_then(')')?])
                } else {
                    return Err(FmtError::UnknownHelper(name.to_string()));
                }
            }
        };
        Ok((node, self.read()))
    }

    /// One operand followed by the delimiter `d` (libtraceevent's `alloc_and_process_delim`).
    fn arg_then(&mut self, d: char) -> PResult<Node> {
        let (n, t) = self.process_arg()?;
        self.expect(&t, &Tok::Delim(d))?;
        Ok(n)
    }

    /// `{ value, "name" }, …` of a flag or symbol table; values kept as libtraceevent's text.
    fn process_fields(&mut self) -> PResult<(Vec<(String, String)>, Tok)> {
        let mut table = Vec::new();
        loop {
            let t = self.read();
            if t != Tok::Op("{".into()) {
                return Ok((table, t));
            }
            let (mut v, mut t) = self.process_arg()?;
            if matches!(t, Tok::Op(_)) {
                t = self.process_op(&mut v, t)?;
            }
            self.expect(&t, &Tok::Delim(','))?;
            let value = arg_eval(&v).ok_or_else(|| syntax("a table value it cannot evaluate"))?;
            let (s, t) = self.process_arg()?;
            self.expect(&t, &Tok::Op("}".into()))?;
            let Node::Atom(name, _) = s else { return Err(syntax("a table entry without a name")) };
            table.push((value, name));
            let t = self.read();
            if t != Tok::Delim(',') {
                return Ok((table, t));
            }
        }
    }
}

fn atom_node(text: String) -> Node {
    let v = strtoull(&text);
    Node::Atom(text, v)
}

/// libtraceevent's `arg_eval`: a table value as text (an atom as written, an expression as
/// its decimal value).
fn arg_eval(n: &Node) -> Option<String> {
    match n {
        Node::Atom(a, _) => Some(a.clone()),
        Node::Type(_, item) => arg_eval(item),
        Node::Op { .. } => arg_num_eval(n).map(|v| v.to_string()),
        _ => None,
    }
}

fn arg_num_eval(n: &Node) -> Option<i64> {
    match n {
        Node::Atom(_, v) => Some(*v as i64),
        Node::Null => Some(0),
        Node::Type(ty, item) => Some(eval_type(arg_num_eval(item)? as u64, ty) as i64),
        Node::Op { op, left, right, .. } => {
            let l = || left.as_deref().map_or(Some(0), arg_num_eval);
            let r = || right.as_deref().map_or(Some(0), arg_num_eval);
            Some(match op.as_str() {
                "|" => l()? | r()?,
                "||" => i64::from(l()? != 0 || r()? != 0),
                "&" => l()? & r()?,
                "&&" => i64::from(l()? != 0 && r()? != 0),
                "<" => i64::from(l()? < r()?),
                "<<" => l()?.checked_shl(r()? as u32).unwrap_or(0),
                "<=" => i64::from(l()? <= r()?),
                ">" => i64::from(l()? > r()?),
                ">>" => l()?.checked_shr(r()? as u32).unwrap_or(0),
                ">=" => i64::from(l()? >= r()?),
                "==" => i64::from(l()? == r()?),
                "!=" => i64::from(l()? != r()?),
                "-" => l()?.wrapping_sub(r()?),
                "+" => l()?.wrapping_add(r()?),
                "~" => !r()?,
                _ => return None,
            })
        }
        _ => None,
    }
}

/// `strtoull(s, NULL, 0)`: the longest numeric prefix (hex after `0x`, octal after `0`); a
/// minus sign wraps, as C's does.
fn strtoull(s: &str) -> u64 {
    let (neg, v) = super::options::c_number(s);
    if neg { v.wrapping_neg() } else { v }
}

/// libtraceevent's `eval_type_str`: casts mask to the width of the types it knows.
fn eval_type(v: u64, ty: &str) -> u64 {
    if ty.ends_with('*') || ty.starts_with("struct") {
        return v;
    }
    let ty = ty.strip_prefix("unsigned ").unwrap_or(ty);
    match ty {
        "u8" | "s8" | "char" => v & 0xff,
        "u16" | "s16" | "short" => v & 0xffff,
        "u32" | "s32" | "int" => v & 0xffff_ffff,
        _ => v,
    }
}

/// libtraceevent's `eval_flag`: a table value's number; -1 for a name it does not know.
fn eval_flag(v: &str) -> i64 {
    if v.starts_with(|c: char| c.is_ascii_digit()) {
        return strtoull(v) as i64;
    }
    match v {
        "HI_SOFTIRQ" | "HRTIMER_NORESTART" => 0,
        "TIMER_SOFTIRQ" | "HRTIMER_RESTART" => 1,
        "NET_TX_SOFTIRQ" => 2,
        "NET_RX_SOFTIRQ" => 3,
        "BLOCK_SOFTIRQ" => 4,
        "IRQ_POLL_SOFTIRQ" => 5,
        "TASKLET_SOFTIRQ" => 6,
        "SCHED_SOFTIRQ" => 7,
        "HRTIMER_SOFTIRQ" => 8,
        "RCU_SOFTIRQ" => 9,
        _ => -1,
    }
}

// ---------------------------------------------------------------------------------------
// The format string.

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Conv(Conv),
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Conv {
    left: bool,
    zero: bool,
    plus: bool,
    alt: bool,
    width: Option<usize>,
    precision: Option<usize>,
    /// A `*`: the argument before the value gives the width (or the precision after `.`).
    star: bool,
    star_is_precision: bool,
    /// h/l count: -2 char, -1 short, 0 int, 1 long, 2 long long.
    ls: i32,
    conv: u8,
    /// The letters after `%p` that belong to it (`s`, `S`, `M`, `hC`, …).
    pointer_suffix: String,
}

/// Splits the format string as libtraceevent's `parse_args` does: flags `-+#0`, width,
/// precision, one `*`, lengths `h l L z Z`; any other character ends the conversion as the
/// text `>c<` (and takes no argument).
fn parse_format_string(s: &str) -> Result<Vec<Piece>, FmtError> {
    let b = s.as_bytes();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let next = s[i..].find('%').map_or(b.len(), |n| i + n);
            text.push_str(&s[i..next]);
            i = next;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            text.push('%');
            i += 2;
            continue;
        }
        let mut c = Conv::default();
        let mut in_precision = false;
        i += 1;
        loop {
            let Some(&f) = b.get(i) else {
                // A format ending inside a conversion: nothing more prints.
                return finish(pieces, text);
            };
            i += 1;
            match f {
                b'-' => c.left = true,
                b'+' => c.plus = true,
                b'#' => c.alt = true,
                b'0' if !in_precision && c.width.is_none() => c.zero = true,
                b'0'..=b'9' => {
                    let d = usize::from(f - b'0');
                    let slot = if in_precision { &mut c.precision } else { &mut c.width };
                    *slot = Some(slot.unwrap_or(0).saturating_mul(10).saturating_add(d).min(512));
                }
                b'.' => {
                    in_precision = true;
                    c.precision = Some(0);
                }
                b'*' => {
                    if c.star {
                        return Err(syntax("two `*` in one conversion"));
                    }
                    c.star = true;
                    c.star_is_precision = in_precision;
                }
                b'h' => c.ls -= 1,
                b'l' => c.ls += 1,
                b'L' => c.ls = 2,
                b'z' | b'Z' => c.ls = 1,
                b'c' | b'd' | b'u' | b'i' | b'x' | b'X' | b'o' | b's' => {
                    c.conv = f;
                    break;
                }
                b'p' => {
                    c.conv = f;
                    let n = pointer_suffix_len(&s[i..]);
                    c.pointer_suffix = s[i..i + n].to_string();
                    i += n;
                    break;
                }
                other => {
                    let _ = write!(text, ">{}<", char::from(other));
                    c.conv = 0;
                    break;
                }
            }
        }
        if c.conv == 0 {
            continue;
        }
        if !(-2..=2).contains(&c.ls) {
            return Err(syntax("bad length modifier"));
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(Piece::Conv(c));
    }
    finish(pieces, text)
}

fn finish(mut pieces: Vec<Piece>, text: String) -> Result<Vec<Piece>, FmtError> {
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// Letters after `%p` that belong to it (libtraceevent's `parse_arg_format_pointer`).
fn pointer_suffix_len(f: &str) -> usize {
    let b = f.as_bytes();
    let n = match b.first() {
        Some(b'F' | b'S' | b'f' | b's') => 1,
        Some(b'M' | b'm') => 1 + usize::from(matches!(b.get(1), Some(b'R' | b'F'))),
        Some(b'U') => 1 + usize::from(matches!(b.get(1), Some(b'L' | b'l' | b'B' | b'b'))),
        Some(b'h') => 1 + usize::from(matches!(b.get(1), Some(b'C' | b'D' | b'N'))),
        Some(b'I' | b'i') => match b.get(1) {
            Some(b'4') => 2 + usize::from(matches!(b.get(2), Some(b'h' | b'n' | b'l' | b'b'))),
            Some(b'6') => 2 + usize::from(b.get(2) == Some(&b'c')),
            Some(b'S') => {
                let mut n = 2;
                while matches!(b.get(n), Some(b'p' | b'f' | b's' | b'c' | b'h' | b'n' | b'l' | b'b')) {
                    n += 1;
                }
                n
            }
            _ => 1,
        },
        _ => 0,
    };
    n.min(b.len())
}

/// A parsed `print fmt`: the format pieces and one argument per conversion (and per `*`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PrintFmt {
    pieces: Vec<Piece>,
    args: Vec<Node>,
}

impl PrintFmt {
    /// Parses `text` (what follows `print fmt:`), resolving `REC->name` against `fields`.
    pub(crate) fn parse(text: &str, fields: &[FieldInfo]) -> Result<PrintFmt, FmtError> {
        let toks = tokenize(text)?;
        let mut p = ArgParser { toks, pos: 0, fields };
        let Tok::Str(mut fmt) = p.read() else { return Err(syntax("no format string")) };
        let mut t = p.read();
        while let Tok::Str(more) = &t {
            fmt.push_str(more);
            t = p.read();
        }
        let mut args = Vec::new();
        // libtraceevent's `event_read_print_args`: `, arg` until the end.
        while t == Tok::Delim(',') {
            let (mut arg, mut next) = p.process_arg()?;
            if matches!(next, Tok::Op(_)) {
                next = p.process_op(&mut arg, next)?;
            }
            args.push(arg);
            t = next;
        }
        if t != Tok::End {
            return Err(FmtError::Syntax(format!("unexpected {t:?} after the arguments")));
        }
        let pieces = parse_format_string(&fmt)?;
        let needed: usize = pieces
            .iter()
            .map(|p| match p {
                Piece::Conv(c) => 1 + usize::from(c.star),
                Piece::Text(_) => 0,
            })
            .sum();
        if needed > args.len() {
            return Err(FmtError::ArgCount);
        }
        Ok(PrintFmt { pieces, args })
    }

    /// Appends the payload of one record.
    pub(crate) fn render(&self, rec: &dyn Record, ev: &Eval<'_>, out: &mut String) {
        let mut args = self.args.iter();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Conv(c) => {
                    let mut c = c.clone();
                    if c.star {
                        let v = args.next().map_or(0, |a| ev.num(rec, a)) as i32;
                        if c.star_is_precision {
                            c.precision = (v >= 0).then_some((v as usize).min(512));
                        } else {
                            c.left |= v < 0;
                            c.width = Some((v.unsigned_abs() as usize).min(512));
                        }
                    }
                    let Some(arg) = args.next() else { return };
                    ev.conversion(rec, &c, arg, out);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Evaluation.

/// The evaluation environment: the event's fields, the file's long size, byte order and
/// symbols.
#[derive(Clone, Copy)]
pub(crate) struct Eval<'a> {
    pub fields: &'a [FieldInfo],
    pub long_size: usize,
    pub big_endian: bool,
    pub symbols: &'a dyn Symbols,
}

impl std::fmt::Debug for Eval<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Eval").field("long_size", &self.long_size).finish_non_exhaustive()
    }
}

const MINOR_BITS: u32 = 20;

impl Eval<'_> {
    fn read_number(&self, bytes: &[u8]) -> u64 {
        let n = bytes.len();
        if !matches!(n, 1 | 2 | 4 | 8) {
            return 0;
        }
        let mut buf = [0u8; 8];
        if self.big_endian {
            buf[8 - n..].copy_from_slice(bytes);
            u64::from_be_bytes(buf)
        } else {
            buf[..n].copy_from_slice(bytes);
            u64::from_le_bytes(buf)
        }
    }

    fn bytes_of_field(&self, rec: &dyn Record, index: Option<usize>) -> Vec<u8> {
        let Some(i) = index else { return Vec::new() };
        match rec.field(i) {
            Some(Raw::Bytes(b)) => b,
            Some(Raw::Num(v)) => {
                let size = self.fields.get(i).map_or(8, |f| f.size as usize).min(8);
                if self.big_endian {
                    v.to_be_bytes()[8 - size..].to_vec()
                } else {
                    v.to_le_bytes()[..size].to_vec()
                }
            }
            None => Vec::new(),
        }
    }

    /// The bytes a buffer argument of `__print_hex`/`__print_array` points at.
    fn buffer(&self, rec: &dyn Record, n: &Node) -> Vec<u8> {
        match n {
            Node::Dynamic(DynKind::Array | DynKind::Str, index) | Node::Field(index, _) => {
                self.bytes_of_field(rec, *index)
            }
            Node::Type(_, item) => self.buffer(rec, item),
            _ => Vec::new(),
        }
    }

    /// libtraceevent's `eval_num_arg`.
    fn num(&self, rec: &dyn Record, n: &Node) -> u64 {
        match n {
            Node::Null
            | Node::Flags { .. }
            | Node::Symbols { .. }
            | Node::Hex { .. }
            | Node::IntArray { .. } => 0,
            Node::Atom(_, v) => *v,
            Node::Field(index, _) => match index.and_then(|i| rec.field(i)) {
                Some(Raw::Num(v)) => v,
                Some(Raw::Bytes(b)) => self.read_number(&b),
                None => 0,
            },
            Node::Type(ty, item) => eval_type(self.num(rec, item), ty),
            Node::Dynamic(kind, index) => match kind {
                DynKind::ArrayLen => self.bytes_of_field(rec, *index).len() as u64,
                _ => 0,
            },
            Node::Func(name, args) => {
                let a = args.first().map_or(0, |a| self.num(rec, a));
                match name.as_str() {
                    "MAJOR" => a >> MINOR_BITS,
                    "MINOR" => a & ((1 << MINOR_BITS) - 1),
                    "jiffies_to_msecs" => a,
                    _ => 0,
                }
            }
            Node::Op { op, left, right, .. } => {
                let l = || left.as_deref().map_or(0, |x| self.num(rec, x));
                let r = || right.as_deref().map_or(0, |x| self.num(rec, x));
                match op.as_str() {
                    "[" => self.index(rec, left.as_deref(), right.as_deref()),
                    "?" => {
                        let Some(Node::Op { left: yes, right: no, .. }) = right.as_deref() else { return 0 };
                        let pick = if l() != 0 { yes } else { no };
                        pick.as_deref().map_or(0, |x| self.num(rec, x))
                    }
                    "!" => u64::from(r() == 0),
                    "!=" => u64::from(l() != r()),
                    "~" => !r(),
                    "|" => l() | r(),
                    "||" => u64::from(l() != 0 || r() != 0),
                    "&" => l() & r(),
                    "&&" => u64::from(l() != 0 && r() != 0),
                    "^" => l() ^ r(),
                    "<" => u64::from(l() < r()),
                    "<<" => l().checked_shl(r() as u32).unwrap_or(0),
                    "<=" => u64::from(l() <= r()),
                    ">" => u64::from(l() > r()),
                    ">>" => l().checked_shr(r() as u32).unwrap_or(0),
                    ">=" => u64::from(l() >= r()),
                    "==" => u64::from(l() == r()),
                    "-" => l().wrapping_sub(r()),
                    "+" => l().wrapping_add(r()),
                    "/" => l().checked_div(r()).unwrap_or(0),
                    "%" => l().checked_rem(r()).unwrap_or(0),
                    "*" => l().wrapping_mul(r()),
                    _ => 0,
                }
            }
        }
    }

    /// `array[i]`: the element of a field (its element size) or of a dynamic array.
    fn index(&self, rec: &dyn Record, array: Option<&Node>, idx: Option<&Node>) -> u64 {
        let i = idx.map_or(0, |x| self.num(rec, x)) as usize;
        let mut base = array;
        let mut cast = None;
        while let Some(Node::Type(ty, item)) = base {
            cast.get_or_insert(ty.as_str());
            base = Some(item);
        }
        let (bytes, elem) = match base {
            Some(Node::Field(index, _)) => {
                let elem =
                    index.and_then(|i| self.fields.get(i)).map_or(self.long_size, |f| f.elem_size as usize);
                (self.bytes_of_field(rec, *index), elem)
            }
            Some(Node::Dynamic(_, index)) => {
                let elem =
                    index.and_then(|i| self.fields.get(i)).map_or(self.long_size, |f| f.elem_size as usize);
                (self.bytes_of_field(rec, *index), elem)
            }
            _ => return 0,
        };
        let v = i
            .checked_mul(elem)
            .and_then(|s| bytes.get(s..s.checked_add(elem)?))
            .map_or(0, |b| self.read_number(b));
        match cast {
            Some(ty) => eval_type(v, ty),
            None => v,
        }
    }

    /// libtraceevent's `print_str_arg`: `%s` of an argument; each piece is formatted by `c`.
    fn string(&self, rec: &dyn Record, c: &Conv, n: &Node, out: &mut String) {
        match n {
            Node::Null | Node::Type(..) => {}
            Node::Atom(a, _) => pad(c, "", a, out),
            Node::Field(index, _) => {
                let Some(i) = *index else { return };
                let Some(f) = self.fields.get(i) else { return };
                match rec.field(i) {
                    Some(Raw::Num(v)) if !f.array && f.size as usize == self.long_size => {
                        // A long-sized field is taken for a pointer to a printk string.
                        match self.symbols.printk(v) {
                            Some(s) => out.push_str(s),
                            None => {
                                let _ = write!(out, "{v:x}");
                            }
                        }
                    }
                    _ => {
                        let mut s = String::new();
                        push_c_string(&self.bytes_of_field(rec, Some(i)), &mut s);
                        pad(c, "", &s, out);
                    }
                }
            }
            Node::Dynamic(DynKind::Str | DynKind::Array, index) => {
                let b = self.bytes_of_field(rec, *index);
                if !b.is_empty() {
                    let mut s = String::new();
                    push_c_string(&b, &mut s);
                    pad(c, "", &s, out);
                }
            }
            Node::Dynamic(DynKind::Bitmask, index) => {
                let mut s = String::new();
                bitmask(&self.bytes_of_field(rec, *index), self.big_endian, &mut s);
                pad(c, "", &s, out);
            }
            Node::Dynamic(DynKind::Cpumask, index) => {
                let mut s = String::new();
                cpumask(&self.bytes_of_field(rec, *index), self.big_endian, &mut s);
                pad(c, "", &s, out);
            }
            Node::Dynamic(DynKind::ArrayLen, _) => {}
            Node::Flags { field, delim, table } => {
                let mut v = self.num(rec, field) as i64;
                let mut printed = false;
                for (value, name) in table {
                    let f = eval_flag(value);
                    if v == 0 && f < 0 {
                        pad(c, "", name, out);
                        break;
                    }
                    if f > 0 && v & f == f {
                        if printed {
                            out.push_str(delim);
                        }
                        pad(c, "", name, out);
                        printed = true;
                        v &= !f;
                    }
                }
                if v != 0 {
                    if printed {
                        out.push_str(delim);
                    }
                    let _ = write!(out, "0x{:x}", v as u64);
                }
            }
            Node::Symbols { field, table } => {
                let v = self.num(rec, field) as i64;
                match table.iter().find(|(value, _)| eval_flag(value) == v) {
                    Some((_, name)) => pad(c, "", name, out),
                    None => {
                        let _ = write!(out, "0x{:x}", v as u64);
                    }
                }
            }
            Node::Hex { buf, len, spaced } => {
                let bytes = self.buffer(rec, buf);
                let len = self.num(rec, len) as usize;
                for (k, b) in bytes.iter().take(len).enumerate() {
                    if k > 0 && *spaced {
                        out.push(' ');
                    }
                    let _ = write!(out, "{b:02x}");
                }
            }
            Node::IntArray { buf, count, el_size } => {
                let bytes = self.buffer(rec, buf);
                let count = self.num(rec, count) as usize;
                let el = self.num(rec, el_size) as usize;
                out.push('{');
                let mut at = 0usize;
                for k in 0..count.min(bytes.len()) {
                    if k > 0 {
                        out.push(',');
                    }
                    if matches!(el, 1 | 2 | 4 | 8) {
                        let v = bytes.get(at..at + el).map_or(0, |b| self.read_number(b));
                        let _ = write!(out, "0x{v:x}");
                        at += el;
                    } else {
                        let _ = write!(out, "BAD SIZE:{el} 0x{:x}", bytes.get(at).copied().unwrap_or(0));
                        at += 1;
                    }
                }
                out.push('}');
            }
            Node::Op { op, left, right, .. } => {
                // The only operator with a string value is `?:`.
                if op != "?" {
                    return;
                }
                let Some(Node::Op { left: yes, right: no, .. }) = right.as_deref() else { return };
                let cond = left.as_deref().map_or(0, |x| self.num(rec, x));
                if let Some(pick) = if cond != 0 { yes } else { no } {
                    self.string(rec, c, pick, out);
                }
            }
            Node::Func(name, args) => {
                let a = args.first().map_or(0, |a| self.num(rec, a));
                let _ = match name.as_str() {
                    "jbd2_dev_to_name" => {
                        let dev = a as u32;
                        write!(out, "{}:{}", dev >> MINOR_BITS, dev & ((1 << MINOR_BITS) - 1))
                    }
                    "jiffies_to_msecs" => write!(out, "{}", a as i64),
                    "MAJOR" => write!(out, "{}", a >> MINOR_BITS),
                    "MINOR" => write!(out, "{}", a & ((1 << MINOR_BITS) - 1)),
                    _ => Ok(()),
                };
            }
        }
    }

    /// `%p` and its kernel extensions (libtraceevent's `print_arg_pointer`).
    fn pointer(&self, rec: &dyn Record, c: &Conv, n: &Node, out: &mut String) {
        let suffix = c.pointer_suffix.as_bytes();
        match suffix.first() {
            Some(b'F' | b'f' | b'S' | b's') => {
                let v = self.num(rec, n);
                match self.symbols.function(v) {
                    Some((name, start)) => {
                        out.push_str(name);
                        if matches!(suffix[0], b'F' | b'S') {
                            let _ = write!(out, "+0x{:x}", v.wrapping_sub(start));
                        }
                    }
                    None => {
                        let v = if self.long_size == 4 { v & 0xffff_ffff } else { v };
                        let _ = write!(out, "0x{v:x}");
                    }
                }
            }
            Some(b'M' | b'm') => {
                let b = self.buffer(rec, n);
                if b.len() != 6 {
                    out.push_str("INVALIDMAC");
                    return;
                }
                let mut order: Vec<u8> = b.clone();
                if suffix.get(1) == Some(&b'R') {
                    order.reverse();
                }
                let sep = match (suffix[0], suffix.get(1)) {
                    (b'm', _) => "",
                    (_, Some(b'F')) => "-",
                    _ => ":",
                };
                let parts: Vec<String> = order.iter().map(|x| format!("{x:02x}")).collect();
                out.push_str(&parts.join(sep));
            }
            Some(b'h') => {
                let b = self.buffer(rec, n);
                let len = c.width.unwrap_or(1).min(b.len());
                let sep = match suffix.get(1) {
                    Some(b'C') => ":",
                    Some(b'D') => "-",
                    Some(b'N') => "",
                    _ => " ",
                };
                let parts: Vec<String> = b[..len].iter().map(|x| format!("{x:02x}")).collect();
                out.push_str(&parts.join(sep));
            }
            _ => {
                let v = self.num(rec, n);
                if v == 0 {
                    out.push_str("(nil)");
                } else {
                    let _ = write!(out, "0x{v:x}");
                }
            }
        }
    }

    /// One printf conversion of `arg`.
    fn conversion(&self, rec: &dyn Record, c: &Conv, arg: &Node, out: &mut String) {
        match c.conv {
            b's' => {
                let mut s = String::new();
                let plain = Conv { width: None, precision: None, ..c.clone() };
                self.string(rec, &plain, arg, &mut s);
                // libtraceevent applies the width and precision to each piece it prints;
                // pieces are single for every form but flag lists.
                if let Some(p) = c.precision
                    && let Some((cut, _)) = s.char_indices().nth(p)
                {
                    s.truncate(cut);
                }
                pad(c, "", &s, out);
            }
            b'p' => self.pointer(rec, c, arg, out),
            b'c' => {
                let v = self.num(rec, arg) as u8;
                pad(c, "", &char::from(v).to_string(), out);
            }
            conv => {
                let raw = self.num(rec, arg);
                let bits = match c.ls {
                    i32::MIN..=-2 => 8,
                    -1 => 16,
                    0 => 32,
                    _ => 64,
                };
                let masked = if bits == 64 { raw } else { raw & ((1u64 << bits) - 1) };
                let (sign, mut digits) = if conv == b'd' || conv == b'i' {
                    let shift = 64 - bits;
                    let v = ((masked << shift) as i64) >> shift;
                    let sign = if v < 0 {
                        "-"
                    } else if c.plus {
                        "+"
                    } else {
                        ""
                    };
                    (sign, v.unsigned_abs().to_string())
                } else {
                    let d = match conv {
                        b'x' => format!("{masked:x}"),
                        b'X' => format!("{masked:X}"),
                        b'o' => format!("{masked:o}"),
                        _ => masked.to_string(),
                    };
                    ("", d)
                };
                if let Some(p) = c.precision {
                    if p == 0 && masked == 0 {
                        digits.clear();
                    }
                    while digits.len() < p {
                        digits.insert(0, '0');
                    }
                }
                let prefix = match conv {
                    b'x' if c.alt && masked != 0 => "0x",
                    b'X' if c.alt && masked != 0 => "0X",
                    b'o' if c.alt && !digits.starts_with('0') => "0",
                    _ => "",
                };
                pad(c, &format!("{sign}{prefix}"), &digits, out);
            }
        }
    }
}

/// Pads `sign` + `body` to the conversion's width, as printf does.
fn pad(c: &Conv, sign: &str, body: &str, out: &mut String) {
    let len = sign.chars().count() + body.chars().count();
    let fill = c.width.unwrap_or(0).saturating_sub(len);
    if c.left {
        out.push_str(sign);
        out.push_str(body);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if c.zero && c.precision.is_none() && !matches!(c.conv, b's' | b'c' | b'p') {
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(body);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(sign);
        out.push_str(body);
    }
}

/// A C string: up to its first NUL, invalid UTF-8 replaced.
pub(crate) fn push_c_string(b: &[u8], out: &mut String) {
    let n = memchr::memchr(0, b).unwrap_or(b.len());
    out.push_str(&String::from_utf8_lossy(&b[..n]));
}

/// `__get_bitmask`: hex digits of the mask, most significant first, a comma every 32 bits.
fn bitmask(bytes: &[u8], big_endian: bool, out: &mut String) {
    let n = bytes.len();
    let mut groups: Vec<String> = Vec::new();
    let mut cur = String::new();
    for k in 0..n {
        // Least significant byte first, as the kernel's long words store it.
        let idx = if big_endian { n - 1 - k } else { k };
        cur.insert_str(0, &format!("{:02x}", bytes[idx]));
        if (k + 1) % 4 == 0 {
            groups.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        groups.push(cur);
    }
    groups.reverse();
    out.push_str(&groups.join(","));
}

/// `__get_cpumask`: the set bits as ranges (`0-3,8`).
fn cpumask(bytes: &[u8], big_endian: bool, out: &mut String) {
    let n = bytes.len();
    let bit = |b: usize| {
        let k = b / 8;
        let idx = if big_endian { n - 1 - k } else { k };
        bytes[idx] & (1 << (b % 8)) != 0
    };
    let total = n * 8;
    let mut b = 0;
    let mut first = true;
    while b < total {
        if !bit(b) {
            b += 1;
            continue;
        }
        let start = b;
        while b < total && bit(b) {
            b += 1;
        }
        if !first {
            out.push(',');
        }
        first = false;
        if b - 1 > start {
            let _ = write!(out, "{start}-{}", b - 1);
        } else {
            let _ = write!(out, "{start}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Vals(Vec<Raw>);
    impl Record for Vals {
        fn field(&self, i: usize) -> Option<Raw> {
            self.0.get(i).cloned()
        }
    }
    struct NoSyms;
    impl Symbols for NoSyms {
        fn function(&self, addr: u64) -> Option<(&str, u64)> {
            (0x1000..0x1100).contains(&addr).then_some(("tick_nohz_handler", 0x1000))
        }
        fn printk(&self, _: u64) -> Option<&str> {
            None
        }
    }

    fn info(name: &str, size: u32) -> FieldInfo {
        FieldInfo {
            name: name.into(),
            size,
            elem_size: size,
            array: false,
            dynamic: false,
            string: false,
            signed: false,
            pointer: false,
            long: false,
        }
    }

    fn render(fmt: &str, fields: &[FieldInfo], vals: Vec<Raw>) -> String {
        let p = PrintFmt::parse(fmt, fields).expect("parses");
        let ev = Eval { fields, long_size: 8, big_endian: false, symbols: &NoSyms };
        let mut out = String::new();
        p.render(&Vals(vals), &ev, &mut out);
        out
    }

    const BLOCK: &str = r#""%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]", ((unsigned int) ((REC->dev) >> 20)), ((unsigned int) ((REC->dev) & ((1U << 20) - 1))), REC->rwbs, REC->bytes, __get_str(cmd), (unsigned long long)REC->sector, REC->nr_sector, __print_symbolic((((REC->ioprio) >> 13) & (8 - 1)), { IOPRIO_CLASS_NONE, "none" }, { IOPRIO_CLASS_RT, "rt" }, { IOPRIO_CLASS_BE, "be" }, { IOPRIO_CLASS_IDLE, "idle" }, { IOPRIO_CLASS_INVALID, "invalid"}), (((REC->ioprio) >> 3) & ((1 << 10) - 1)), ((REC->ioprio) & ((1 << 3) - 1)), REC->comm"#;

    #[test]
    fn block_rq_issue_as_trace_cmd_prints_it() {
        let mut fields: Vec<FieldInfo> =
            [("dev", 4), ("sector", 8), ("nr_sector", 4), ("bytes", 4), ("ioprio", 2)]
                .iter()
                .map(|&(n, s)| info(n, s))
                .collect();
        let mut rwbs = info("rwbs", 8);
        (rwbs.array, rwbs.string) = (true, true);
        let mut comm = info("comm", 16);
        (comm.array, comm.string) = (true, true);
        let mut cmd = info("cmd", 4);
        (cmd.array, cmd.string, cmd.dynamic) = (true, true, true);
        fields.extend([rwbs, comm, cmd]);
        let vals = vec![
            Raw::Num(266_338_304),
            Raw::Num(12_581_480),
            Raw::Num(8),
            Raw::Num(4096),
            Raw::Num(16388),
            Raw::Bytes(b"RA".to_vec()),
            Raw::Bytes(b"dd".to_vec()),
            Raw::Bytes(Vec::new()),
        ];
        // IOPRIO_CLASS_BE is a name libtraceevent cannot evaluate: trace-cmd prints 0x2.
        assert_eq!(render(BLOCK, &fields, vals), "254,0 RA 4096 () 12581480 + 8 0x2,0,4 [dd]");
    }

    #[test]
    fn ternaries_flags_symbols_and_pointers() {
        let fields = [info("irq", 4), info("ret", 4)];
        let exit = r#""irq=%d ret=%s", REC->irq, REC->ret ? "handled" : "unhandled""#;
        assert_eq!(render(exit, &fields, vec![Raw::Num(36), Raw::Num(1)]), "irq=36 ret=handled");
        assert_eq!(render(exit, &fields, vec![Raw::Num(0xffff_ffff), Raw::Num(0)]), "irq=-1 ret=unhandled");
        let fields = [info("vec", 4)];
        let soft = r#""vec=%u [action=%s]", REC->vec, __print_symbolic(REC->vec, { 0, "HI" }, { 9, "RCU" })"#;
        assert_eq!(render(soft, &fields, vec![Raw::Num(9)]), "vec=9 [action=RCU]");
        assert_eq!(render(soft, &fields, vec![Raw::Num(5)]), "vec=5 [action=0x5]");
        let fields = [info("timer", 8), info("function", 8)];
        let f = r#""timer=%p function=%ps", REC->timer, REC->function"#;
        assert_eq!(
            render(f, &fields, vec![Raw::Num(0xffff_c900_0007_fde8), Raw::Num(0x1004)]),
            "timer=0xffffc9000007fde8 function=tick_nohz_handler"
        );
        assert_eq!(render(f, &fields, vec![Raw::Num(0), Raw::Num(0x20)]), "timer=(nil) function=0x20");
        let fields = [info("expires", 8), info("now", 8)];
        let t = r#""[timeout=%ld] %03d %-4u|%5.2x|%#x|%c", (long)REC->expires - REC->now, 7, 3, 10, 255, 65"#;
        assert_eq!(
            render(t, &fields, vec![Raw::Num(10), Raw::Num(11)]),
            "[timeout=-1] 007 3   |   0a|0xff|A"
        );
    }

    #[test]
    fn operators_group_as_libtraceevent_groups_them() {
        let fields = [info("flags", 4)];
        // The kernel's timer_start flags: libtraceevent rotates the parenthesised `|` list
        // out of the `&`, so every flag but the first prints whatever the value.
        let timer = r#""flags=%s", __print_flags(REC->flags & (0x00040000 | 0x00080000 | 0x00100000 | 0x00200000), "|", { 0x00040000, "M" }, { 0x00080000, "D" }, { 0x00100000, "P" }, { 0x00200000, "I" })"#;
        assert_eq!(render(timer, &fields, vec![Raw::Num(0x00c0_0001)]), "flags=D|P|I");
        assert_eq!(render(timer, &fields, vec![Raw::Num(0x0004_0000)]), "flags=M|D|P|I");
        // Equal priorities group to the right: 10 - 3 - 2 is 10 - (3 - 2).
        assert_eq!(render(r#""%d", 10 - 3 - 2"#, &fields, vec![]), "9");
        // Higher priority on the left stays left; C precedence otherwise.
        assert_eq!(render(r#""%d %d", 2 * 3 + 1, 1 + 2 * 3"#, &fields, vec![]), "7 7");
        assert_eq!(render(r#""%d", REC->flags >> 4 & 0xf"#, &fields, vec![Raw::Num(0x1234)]), "3");
        assert_eq!(render(r#""%d", !REC->flags"#, &fields, vec![Raw::Num(0)]), "1");
        assert_eq!(render(r#""%s", REC->flags > 1 ? "big" : "small""#, &fields, vec![Raw::Num(2)]), "big");
        assert_eq!(render(r#""%u", (u8)REC->flags"#, &fields, vec![Raw::Num(0x1ff)]), "255");
        assert_eq!(render(r#""%s", (char *)"x""#, &fields, vec![]), "", "a cast prints no string");
    }

    #[test]
    fn arrays_hex_and_masks() {
        let mut buf = info("buf", 4);
        (buf.array, buf.dynamic) = (true, true);
        buf.elem_size = 1;
        let fields = [buf, info("len", 4)];
        let vals = || vec![Raw::Bytes(vec![0xde, 0xad, 0x01, 0x00]), Raw::Num(4)];
        assert_eq!(
            render(r#""%s", __print_hex(__get_dynamic_array(buf), REC->len)"#, &fields, vals()),
            "de ad 01 00"
        );
        assert_eq!(render(r#""%s", __print_hex_str(__get_dynamic_array(buf), 2)"#, &fields, vals()), "dead");
        assert_eq!(
            render(r#""%s", __print_array(__get_dynamic_array(buf), 2, 2)"#, &fields, vals()),
            "{0xadde,0x1}"
        );
        assert_eq!(render(r#""n=%d", __get_dynamic_array_len(buf)"#, &fields, vals()), "n=4");
        assert_eq!(render(r#""%d", REC->buf[1]"#, &fields, vals()), "173");
        assert_eq!(render(r#""%s", __get_cpumask(buf)"#, &fields, vals()), "1-4,6-8,10-11,13,15-16");
        assert_eq!(render(r#""%s", __get_bitmask(buf)"#, &fields, vals()), "0001adde");
        assert_eq!(render(r#""%d:%d", MAJOR(REC->len), MINOR(REC->len)"#, &fields, vals()), "0:4");
        assert_eq!(render(r#""%s", jbd2_dev_to_name(REC->len)"#, &fields, vals()), "0:4");
    }

    #[test]
    fn unknown_helpers_and_bad_syntax_are_errors() {
        let fields = [info("x", 4)];
        assert!(matches!(
            PrintFmt::parse(r#""%s", __frobnicate(REC->x)"#, &fields),
            Err(FmtError::UnknownHelper(h)) if h == "__frobnicate"
        ));
        assert_eq!(PrintFmt::parse(r#""%d %d", REC->x"#, &fields), Err(FmtError::ArgCount));
        assert!(PrintFmt::parse(r#""%d", REC->x +"#, &fields).is_err());
        assert!(PrintFmt::parse(r#""%d", (REC->x"#, &fields).is_err());
        assert!(PrintFmt::parse("no quote", &fields).is_err());
        assert!(PrintFmt::parse(r#""%*.*d", 1, 2, 3"#, &fields).is_err(), "one `*` per conversion");
        // Fields the format does not have read as 0, as libtraceevent reads them.
        assert_eq!(render(r#""%d", REC->missing"#, &fields, vec![]), "0");
        assert_eq!(render(r#""a%%b %y""#, &fields, vec![]), "a%b >y<");
        assert_eq!(render(r#""%.*s|%*d", 2, "abcd", 4, 7"#, &fields, vec![]), "ab|   7");
    }
}
