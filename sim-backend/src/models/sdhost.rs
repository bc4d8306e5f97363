//! An SD host controller in the style of LiteSDCard and the card behind it.
//!
//! A command has a command phase (issue to response, the CMD line high) and, for data
//! commands, a data phase on the SD bus with a DMA engine moving the blocks to or from
//! memory (the DMA line high). Per-command card latencies come from the scenario: the
//! response time of commands without data, the read access time before the first block, the
//! write busy (programming) time after the last block. The command-done event of a data
//! command comes when the card is done (after the data for reads, after busy for writes).

use crate::rng::{Rng, us};
use latscope_model::Ps;
use serde::Deserialize;

/// Card and bus figures (one set per board).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CardTiming {
    /// Response time of a command without data, microseconds (range).
    pub cmd_resp_us: [f64; 2],
    /// Read access time before the first block arrives, microseconds (range).
    pub read_access_us: [f64; 2],
    /// Write busy (programming) time after the last block, microseconds (range).
    pub write_busy_us: [f64; 2],
    /// SD bus throughput during a block transfer, MiB/s (25 MHz x 4 bits is ~11.9).
    pub bus_mib_s: f64,
    /// How long after the last block the host's DMA has written it to memory, microseconds.
    pub dma_tail_us: f64,
    /// How long after the last data (reads) the command-done event comes, microseconds.
    pub cmd_done_after_data_us: f64,
}

/// The timing of one command on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdTiming {
    pub issue: Ps,
    /// Command-done event (CMDEVT done, cmd-done IRQ source).
    pub done: Ps,
    /// Data phase on the SD bus, if any.
    pub data: Option<(Ps, Ps)>,
    /// DMA completion (DMA-done IRQ source), if any.
    pub dma_done: Option<Ps>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

impl CardTiming {
    /// Times a command issued at `t` moving `bytes` in `dir` (0 bytes: no data phase).
    pub fn command(&self, t: Ps, dir: Dir, bytes: u64, rng: &mut Rng) -> CmdTiming {
        if bytes == 0 {
            let done = t + rng.uniform_us(self.cmd_resp_us[0], self.cmd_resp_us[1]);
            return CmdTiming { issue: t, done, data: None, dma_done: None };
        }
        let xfer = us(bytes as f64 / (self.bus_mib_s * 1_048_576.0) * 1e6);
        match dir {
            Dir::Read => {
                let first = t + rng.uniform_us(self.read_access_us[0], self.read_access_us[1]);
                let end = first + xfer;
                CmdTiming {
                    issue: t,
                    done: end + us(self.cmd_done_after_data_us),
                    data: Some((first, end)),
                    dma_done: Some(end + us(self.dma_tail_us)),
                }
            }
            Dir::Write => {
                // The DMA fills the host FIFO ahead of the bus: it is done shortly after the
                // data starts moving; the card then programs (busy) before it answers.
                let first = t + rng.uniform_us(self.cmd_resp_us[0], self.cmd_resp_us[1]);
                let end = first + xfer;
                let busy = rng.uniform_us(self.write_busy_us[0], self.write_busy_us[1]);
                CmdTiming {
                    issue: t,
                    done: end + busy,
                    data: Some((first, end)),
                    dma_done: Some(end - xfer / 2 + us(self.dma_tail_us)),
                }
            }
        }
    }
}
