//! The irq-info flags of an event (the kernel's `d.h1.` column), packed into 32 bits.

/// The irq-info flag column (`d.h1.`), packed. `IrqFlags::NONE` when the trace had none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct IrqFlags(pub u32);

const PRESENT: u32 = 1 << 31;
const IRQ_CHARS: &[u8] = b".dDXb";
const RESCHED_CHARS: &[u8] = b".NnpLblB";
const CTX_CHARS: &[u8] = b".hsHzZ";

/// Marks a byte that is not valid in a flag column.
const NO: u8 = u8::MAX;

/// Byte → position in `chars`, plus `extra` bytes with given values.
const fn column_table(chars: &[u8], extra: &[(u8, u8)]) -> [u8; 256] {
    let mut t = [NO; 256];
    let mut i = 0;
    while i < chars.len() {
        t[chars[i] as usize] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        t[extra[i].0 as usize] = extra[i].1;
        i += 1;
    }
    t
}

static IRQ_TABLE: [u8; 256] = column_table(IRQ_CHARS, &[]);
static RESCHED_TABLE: [u8; 256] = column_table(RESCHED_CHARS, &[]);
// One short-lived kernel patch put `b` (BH off) in the context column: read as none.
static CTX_TABLE: [u8; 256] = column_table(CTX_CHARS, &[(b'b', 0)]);
// Preempt and migrate depths: `.` is 0, then hex digits.
static HEX_TABLE: [u8; 256] = column_table(b"0123456789abcdef", &[(b'.', 0)]);

impl IrqFlags {
    pub const NONE: IrqFlags = IrqFlags(0);

    /// The flags from the kernel's five flag characters (irqs, resched, context, preempt
    /// depth, migrate-disable depth: `d.h1.`, as [`IrqFlags::render`] prints them); `None` if a
    /// character is not one the kernel prints in its column. Trace formats that print another
    /// width map their field onto these five first (the ftrace text importer does).
    pub fn from_columns(s: [u8; 5]) -> Option<IrqFlags> {
        // One table per column (every line of a trace has flags): the value of each
        // character, or NO.
        let at = |table: &[u8; 256], c: u8| match table[usize::from(c)] {
            NO => None,
            v => Some(u32::from(v)),
        };
        let irq = at(&IRQ_TABLE, s[0])?;
        let resched = at(&RESCHED_TABLE, s[1])?;
        let ctx = at(&CTX_TABLE, s[2])?;
        let preempt = at(&HEX_TABLE, s[3])?;
        let migrate = at(&HEX_TABLE, s[4])?;
        Some(IrqFlags(PRESENT | irq | resched << 3 | ctx << 6 | preempt << 9 | migrate << 13))
    }

    pub fn is_present(self) -> bool {
        self.0 & PRESENT != 0
    }
    pub fn irqs_off(self) -> bool {
        matches!(self.0 & 7, 1 | 2)
    }
    pub fn need_resched(self) -> bool {
        (self.0 >> 3) & 7 != 0
    }
    pub fn in_hardirq(self) -> bool {
        matches!((self.0 >> 6) & 7, 1 | 3)
    }
    pub fn in_softirq(self) -> bool {
        matches!((self.0 >> 6) & 7, 2 | 3)
    }
    pub fn in_nmi(self) -> bool {
        matches!((self.0 >> 6) & 7, 4 | 5)
    }
    pub fn preempt_depth(self) -> u32 {
        (self.0 >> 9) & 0xf
    }

    /// The 5-character kernel rendering (`d.h1.`), or "" when absent.
    pub fn render(self) -> String {
        if !self.is_present() {
            return String::new();
        }
        let hex = |v: u32| if v == 0 { '.' } else { char::from_digit(v, 16).unwrap_or('?') };
        let at = |set: &[u8], i: u32| set.get(i as usize).map_or('?', |&c| char::from(c));
        [
            at(IRQ_CHARS, self.0 & 7),
            at(RESCHED_CHARS, (self.0 >> 3) & 7),
            at(CTX_CHARS, (self.0 >> 6) & 7),
            hex(self.preempt_depth()),
            hex((self.0 >> 13) & 0xf),
        ]
        .iter()
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags_reference(s: [u8; 5]) -> Option<IrqFlags> {
        let pos = |set: &[u8], c: u8| set.iter().position(|&x| x == c).map(|p| p as u32);
        let hex = |c: u8| match c {
            b'.' => Some(0),
            b'0'..=b'9' => Some(u32::from(c - b'0')),
            b'a'..=b'f' => Some(u32::from(c - b'a' + 10)),
            _ => None,
        };
        let irq = pos(IRQ_CHARS, s[0])?;
        let resched = pos(RESCHED_CHARS, s[1])?;
        let ctx = if s[2] == b'b' { 0 } else { pos(CTX_CHARS, s[2])? };
        let preempt = hex(s[3])?;
        let migrate = hex(s[4])?;
        Some(IrqFlags(PRESENT | irq | resched << 3 | ctx << 6 | preempt << 9 | migrate << 13))
    }

    #[test]
    fn flag_tables_match_the_reference_for_every_byte() {
        for base in [*b"dNh2.", *b".....", *b"dNh1.", *b".Ns3f"] {
            for col in 0..base.len() {
                for b in 0..=255u8 {
                    let mut f = base;
                    f[col] = b;
                    assert_eq!(IrqFlags::from_columns(f), flags_reference(f), "{f:?}");
                }
            }
        }
    }

    #[test]
    fn flags_from_columns_and_render() {
        let f = IrqFlags::from_columns(*b"dNh2.").expect("valid flags");
        assert!(f.irqs_off() && f.need_resched() && f.in_hardirq() && !f.in_softirq());
        assert_eq!(f.preempt_depth(), 2);
        assert_eq!(f.render(), "dNh2.");
        assert_eq!(IrqFlags::NONE.render(), "");
        assert!(IrqFlags::from_columns(*b"sys_x").is_none());
    }
}
