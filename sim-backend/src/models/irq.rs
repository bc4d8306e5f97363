//! An interrupt controller in the style of LiteX's EventManager: per source a pending bit
//! and an enable bit; the CPU's interrupt line is `pending & enable != 0`.
//!
//! A level-triggered source's pending bit follows the source (it cannot be acknowledged
//! while the source is asserted — only disabled); an edge-triggered source latches pending
//! on the rising edge, regardless of enable, until software writes 1 to acknowledge it.
//! That difference is what the LiteSDCard discussion is about.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Level,
    Edge,
}

#[derive(Debug, Clone)]
pub struct IrqController {
    trigger: Vec<Trigger>,
    source: u32,
    pending: u32,
    enable: u32,
}

impl IrqController {
    pub fn new(trigger: Vec<Trigger>) -> Self {
        Self { trigger, source: 0, pending: 0, enable: 0 }
    }

    /// The interrupt output.
    pub fn line(&self) -> bool {
        self.pending & self.enable != 0
    }
    pub fn pending(&self) -> u32 {
        self.pending
    }
    pub fn enabled(&self) -> u32 {
        self.enable
    }

    /// The device drives source `bit` to `level`.
    pub fn set_source(&mut self, bit: u32, level: bool) {
        let m = 1 << bit;
        let was = self.source & m != 0;
        if level {
            self.source |= m;
        } else {
            self.source &= !m;
        }
        match self.trigger.get(bit as usize) {
            Some(Trigger::Level) => self.pending = (self.pending & !m) | (self.source & m),
            _ => {
                if level && !was {
                    self.pending |= m;
                }
            }
        }
    }

    /// Writes the enable register.
    pub fn write_enable(&mut self, mask: u32) {
        self.enable = mask;
    }

    /// Writes 1s to the pending register: acknowledges edge sources; a level source that is
    /// still asserted stays pending.
    pub fn ack(&mut self, mask: u32) {
        for bit in 0..32 {
            let m = 1 << bit;
            if mask & m != 0 && self.trigger.get(bit as usize) != Some(&Trigger::Level) {
                self.pending &= !m;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_stays_until_source_drops_edge_latches_until_ack() {
        let mut c = IrqController::new(vec![Trigger::Level, Trigger::Edge]);
        c.write_enable(0b11);
        c.set_source(0, true);
        assert!(c.line());
        c.ack(0b01);
        assert!(c.line(), "a level cannot be acknowledged");
        c.write_enable(0b10);
        assert!(!c.line(), "only disabling silences it");
        c.set_source(0, false);
        c.set_source(1, true);
        c.set_source(1, false);
        assert!(c.line(), "the edge latched");
        c.write_enable(0);
        c.write_enable(0b10);
        assert!(c.line(), "disable/enable does not clear a latched edge");
        c.ack(0b10);
        assert!(!c.line());
    }
}
