//! The ftrace text flag field (`d.h1.`): the widths kernels print, mapped onto the model's
//! five flag columns.

use latscope_model::IrqFlags;

/// The five columns of a 4-, 5- or 7-character flag field: irqs, resched, context, preempt
/// depth, migrate-disable depth (`.` when the field has only four).
fn flag_columns(s: &[u8]) -> Option<[u8; 5]> {
    match *s {
        [irq, resched, ctx, preempt] => Some([irq, resched, ctx, preempt, b'.']),
        [irq, resched, ctx, preempt, migrate] => Some([irq, resched, ctx, preempt, migrate]),
        // PREEMPT_RT lazy kernels print 7: irqs, resched, resched-lazy, ctx, preempt,
        // preempt-lazy, migrate. Keep the five the others print.
        [irq, resched, _, ctx, preempt, _, migrate] => Some([irq, resched, ctx, preempt, migrate]),
        _ => None,
    }
}

/// Parses a 4- to 7-character flag field; `None` if it is not one.
pub fn parse_flags(s: &[u8]) -> Option<IrqFlags> {
    IrqFlags::from_columns(flag_columns(s)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_kernels_print() {
        let f = parse_flags(b"dNh2.").expect("valid flags");
        assert!(f.irqs_off() && f.need_resched() && f.in_hardirq() && !f.in_softirq());
        assert_eq!(f.preempt_depth(), 2);
        assert_eq!(f.render(), "dNh2.");
        assert_eq!(parse_flags(b"....").map(|f| f.render()), Some(".....".into()));
        let rt = parse_flags(b"dNLh1..").expect("7-column RT flags");
        assert!(rt.in_hardirq() && rt.preempt_depth() == 1);
        assert!(parse_flags(b"d...3..").is_some_and(|f| f.preempt_depth() == 3));
        assert!(parse_flags(b"sys_").is_none());
        assert!(parse_flags(b"abc").is_none());
        assert!(parse_flags(b"dNh2.x").is_none());
    }
}
