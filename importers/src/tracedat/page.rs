//! Ring-buffer sub-buffers ("pages"): the page header (timestamp,
//! commit with the missed-events flags, stored lost count) and the compressed event
//! headers (type_len/time_delta, padding, time extend, absolute timestamp, long and short
//! data records). Pure functions over one page: no allocation, no model types.

use super::bytes::Endian;
use super::format::PageLayout;

pub(crate) const COMMIT_MASK: u64 = (1 << 27) - 1;
pub(crate) const MISSED_EVENTS: u64 = 1 << 31;
pub(crate) const MISSED_STORED: u64 = 1 << 30;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;

/// How to read pages of one buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageFormat {
    pub endian: Endian,
    pub layout: PageLayout,
    pub page_size: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageHeader {
    pub ts: u64,
    /// Bytes of event data after `layout.data_offset` (clamped to the page).
    pub data_len: usize,
    /// Events were lost before this page.
    pub missed: bool,
    /// How many, when the kernel stored it.
    pub lost: Option<u64>,
    /// The commit length claimed more than the page holds.
    pub overlong: bool,
}

/// Why decoding stopped early inside a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageError {
    /// Offset in the page.
    pub at: usize,
    pub message: &'static str,
}

impl PageFormat {
    /// Reads the header of `page` (which must be at least `page_size` bytes or the page's
    /// available prefix). `None` if even the header does not fit.
    pub(crate) fn header(&self, page: &[u8]) -> Option<PageHeader> {
        let e = self.endian;
        let ts = e.read_uint(page, 0, 8)?;
        let commit = e.read_uint(page, self.layout.commit_offset as usize, self.layout.long_size as usize)?;
        let data_off = self.layout.data_offset as usize;
        let room = page.len().min(self.page_size).saturating_sub(data_off);
        let claimed = (commit & COMMIT_MASK) as usize;
        let data_len = claimed.min(room);
        let missed = commit & MISSED_EVENTS != 0;
        let lost = if missed && commit & MISSED_STORED != 0 {
            e.read_uint(page, data_off + data_len, self.layout.long_size as usize)
        } else {
            None
        };
        Some(PageHeader { ts, data_len, missed, lost, overlong: claimed > room })
    }

    /// Calls `f(timestamp, payload, offset_in_page)` for every data record of `page`, in
    /// order. Timestamps are raw ring-buffer clock values.
    #[inline]
    pub(crate) fn for_each_record<'p>(
        &self,
        page: &'p [u8],
        hdr: &PageHeader,
        mut f: impl FnMut(u64, &'p [u8], usize),
    ) -> Result<(), PageError> {
        self.for_each_raw_record(page, hdr, |ts, payload, off, _| f(ts, payload, off))
    }

    /// [`for_each_record`](Self::for_each_record), also saying whether each record was
    /// stored in the long form (type_len 0, its length in the word after the header), so
    /// a writer can store it as it was.
    #[inline]
    pub(crate) fn for_each_raw_record<'p>(
        &self,
        page: &'p [u8],
        hdr: &PageHeader,
        mut f: impl FnMut(u64, &'p [u8], usize, bool),
    ) -> Result<(), PageError> {
        let e = self.endian;
        let start = self.layout.data_offset as usize;
        let end = start + hdr.data_len;
        let Some(data) = page.get(..end) else {
            return Err(PageError { at: start, message: "page is cut short" });
        };
        let mut ts = hdr.ts;
        let mut pos = start;
        // `pos` may jump far past `end` on a hostile padding length: compare by subtraction.
        while end.saturating_sub(pos) >= 4 {
            let h = e.u32([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]);
            let (type_len, delta) = match e {
                Endian::Little => (h & 0x1f, h >> 5),
                Endian::Big => (h >> 27, h & 0x07ff_ffff),
            };
            let array = || e.read_u32(data, pos + 4);
            match type_len {
                TYPE_PADDING => {
                    ts = ts.wrapping_add(u64::from(delta));
                    if delta == 0 {
                        // The rest of the page is empty.
                        return Ok(());
                    }
                    // A discarded event: its length is in array[0].
                    let Some(len) = array() else {
                        return Err(PageError { at: pos, message: "padding header is cut short" });
                    };
                    pos = pos.saturating_add(4).saturating_add(len as usize);
                }
                TYPE_TIME_EXTEND => {
                    let Some(hi) = array() else {
                        return Err(PageError { at: pos, message: "time extend is cut short" });
                    };
                    ts = ts.wrapping_add((u64::from(hi) << TS_SHIFT) + u64::from(delta));
                    pos += 8;
                }
                TYPE_TIME_STAMP => {
                    let Some(hi) = array() else {
                        return Err(PageError { at: pos, message: "absolute timestamp is cut short" });
                    };
                    // The kernel stores only 59 bits; the top 5 come from the running time.
                    ts = ((u64::from(hi) << TS_SHIFT) + u64::from(delta)) | (ts & (0xf8u64 << 56));
                    pos += 8;
                }
                0 => {
                    let Some(len) = array() else {
                        return Err(PageError { at: pos, message: "record length is cut short" });
                    };
                    if len < 4 {
                        return Err(PageError { at: pos, message: "record length below 4" });
                    }
                    let len = ((len as usize - 4) + 3) & !3;
                    let from = pos + 8;
                    let Some(payload) = data.get(from..from.saturating_add(len)) else {
                        return Err(PageError { at: pos, message: "record runs past the page's data" });
                    };
                    ts = ts.wrapping_add(u64::from(delta));
                    f(ts, payload, from, true);
                    pos = from + len;
                }
                n => {
                    let len = n as usize * 4;
                    let from = pos + 4;
                    let Some(payload) = data.get(from..from + len) else {
                        return Err(PageError { at: pos, message: "record runs past the page's data" });
                    };
                    ts = ts.wrapping_add(u64::from(delta));
                    f(ts, payload, from, false);
                    pos = from + len;
                }
            }
        }
        Ok(())
    }
}

/// Writes sub-buffers in a [`PageFormat`]: records appended one by one with their raw
/// timestamps, a page closed when the next record does not fit. Deltas that do not fit the
/// header's 27 bits get a time extend, as the kernel writes them.
#[derive(Debug)]
pub(crate) struct PageWriter {
    format: PageFormat,
    /// The page being filled (`page_size` bytes), if any.
    page: Vec<u8>,
    /// Where the next record goes in `page`.
    pos: usize,
    /// The timestamp the next delta counts from.
    last_ts: u64,
    /// Commit flags of the page being filled (missed events) and the lost count to store.
    flags: u64,
    lost: Option<u64>,
    pub out: Vec<u8>,
    pub pages: usize,
}

impl PageWriter {
    pub(crate) fn new(format: PageFormat) -> Self {
        PageWriter {
            format,
            page: Vec::new(),
            pos: 0,
            last_ts: 0,
            flags: 0,
            lost: None,
            out: Vec::new(),
            pages: 0,
        }
    }

    fn w32(&self, v: u32) -> [u8; 4] {
        match self.format.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    fn header_word(&self, type_len: u32, delta: u32) -> [u8; 4] {
        match self.format.endian {
            Endian::Little => self.w32(type_len | delta << 5),
            Endian::Big => self.w32(type_len << 27 | delta),
        }
    }

    fn write_long(&mut self, at: usize, v: u64) {
        let n = self.format.layout.long_size as usize;
        let bytes = match (self.format.endian, n) {
            (Endian::Little, 4) => (v as u32).to_le_bytes().to_vec(),
            (Endian::Big, 4) => (v as u32).to_be_bytes().to_vec(),
            (Endian::Little, _) => v.to_le_bytes().to_vec(),
            (Endian::Big, _) => v.to_be_bytes().to_vec(),
        };
        if let Some(slot) = self.page.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(&bytes);
        }
    }

    /// Marks the next record as the first after lost events (`lost` of them, when known).
    pub(crate) fn missed(&mut self, lost: Option<u64>) {
        self.close();
        self.flags |= MISSED_EVENTS;
        self.lost = lost;
    }

    /// Appends a record: its raw timestamp and payload (a multiple of 4 bytes), in the long
    /// form when `long` (or when it is too long for the short one).
    pub(crate) fn record(&mut self, ts: u64, payload: &[u8], long: bool) {
        let long = long || payload.len() > 28 * 4 || payload.is_empty() || !payload.len().is_multiple_of(4);
        let body = payload.len().div_ceil(4) * 4;
        let need = 8 + if long { 8 } else { 4 } + body;
        let data_off = self.format.layout.data_offset as usize;
        let room_for_lost = if self.lost.is_some() { self.format.layout.long_size as usize } else { 0 };
        if need + data_off + room_for_lost > self.format.page_size {
            // A record no page can hold is not written.
            return;
        }
        if !self.page.is_empty() && self.pos + need + room_for_lost > self.format.page_size {
            self.close();
        }
        if self.page.is_empty() {
            self.page = vec![0; self.format.page_size];
            let ts_bytes = match self.format.endian {
                Endian::Little => ts.to_le_bytes(),
                Endian::Big => ts.to_be_bytes(),
            };
            self.page[..8].copy_from_slice(&ts_bytes);
            self.pos = data_off;
            self.last_ts = ts;
        }
        let mut delta = ts.wrapping_sub(self.last_ts);
        if delta >= 1 << TS_SHIFT {
            let ext = [
                self.header_word(TYPE_TIME_EXTEND, (delta & ((1 << TS_SHIFT) - 1)) as u32),
                self.w32((delta >> TS_SHIFT) as u32),
            ];
            for (i, w) in ext.iter().enumerate() {
                self.page[self.pos + 4 * i..self.pos + 4 * i + 4].copy_from_slice(w);
            }
            self.pos += 8;
            delta = 0;
        }
        let delta = delta as u32;
        if long {
            let h = self.header_word(0, delta);
            let len = self.w32(body as u32 + 4);
            self.page[self.pos..self.pos + 4].copy_from_slice(&h);
            self.page[self.pos + 4..self.pos + 8].copy_from_slice(&len);
            self.pos += 8;
        } else {
            let h = self.header_word((body / 4) as u32, delta);
            self.page[self.pos..self.pos + 4].copy_from_slice(&h);
            self.pos += 4;
        }
        self.page[self.pos..self.pos + payload.len()].copy_from_slice(payload);
        self.pos += body;
        self.last_ts = ts;
    }

    /// Closes the page being filled, if any: its commit length (with the missed-events
    /// flags) and the lost count after the data.
    pub(crate) fn close(&mut self) {
        if self.page.is_empty() {
            return;
        }
        let data_off = self.format.layout.data_offset as usize;
        let mut commit = (self.pos - data_off) as u64;
        if self.flags & MISSED_EVENTS != 0 {
            commit |= MISSED_EVENTS;
            if let Some(n) = self.lost {
                commit |= MISSED_STORED;
                let at = self.pos;
                self.write_long(at, n);
            }
        }
        let at = self.format.layout.commit_offset as usize;
        self.write_long(at, commit);
        self.out.append(&mut self.page);
        self.pages += 1;
        self.flags = 0;
        self.lost = None;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a synthetic page (one header, a time-extend and two events) in either byte order.
    pub(crate) fn synthetic_page(endian: Endian, commit_flags: u64, lost: Option<u64>) -> Vec<u8> {
        let w32 = |v: u32| match endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        };
        let hdr = |type_len: u32, delta: u32| match endian {
            Endian::Little => w32(type_len | delta << 5),
            Endian::Big => w32(type_len << 27 | delta),
        };
        let mut d = Vec::new();
        // Long-form record: 120-byte payload, delta 10.
        d.extend_from_slice(&hdr(0, 10));
        d.extend_from_slice(&w32(124));
        d.extend(0..120u8);
        // Discarded event (padding with delta 5): 12 bytes after the header.
        d.extend_from_slice(&hdr(29, 5));
        d.extend_from_slice(&w32(12));
        d.extend_from_slice(&[0xee; 8]);
        // Time extend by 2^27 + 3.
        d.extend_from_slice(&hdr(30, 3));
        d.extend_from_slice(&w32(1));
        // Short record of 8 bytes, delta 7.
        d.extend_from_slice(&hdr(2, 7));
        d.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        // Absolute timestamp 5 << 27 | 9, then a 4-byte record with delta 1.
        d.extend_from_slice(&hdr(31, 9));
        d.extend_from_slice(&w32(5));
        d.extend_from_slice(&hdr(1, 1));
        d.extend_from_slice(&[9, 9, 9, 9]);
        // End of page.
        d.extend_from_slice(&hdr(29, 0));
        d.extend_from_slice(&w32(0));
        let mut page = Vec::new();
        let ts: u64 = 0xf800_0000_0000_1000;
        page.extend_from_slice(&match endian {
            Endian::Little => ts.to_le_bytes(),
            Endian::Big => ts.to_be_bytes(),
        });
        page.extend_from_slice(&w32(d.len() as u32 | commit_flags as u32));
        page.extend_from_slice(&d);
        if let Some(n) = lost {
            page.extend_from_slice(&w32(n as u32));
        }
        page.resize(4096, 0);
        page
    }

    fn fmt(endian: Endian) -> PageFormat {
        PageFormat {
            endian,
            layout: PageLayout { commit_offset: 8, long_size: 4, data_offset: 12 },
            page_size: 4096,
        }
    }

    fn decode(endian: Endian, page: &[u8]) -> (PageHeader, Vec<(u64, usize, usize)>) {
        let f = fmt(endian);
        let h = f.header(page).expect("header");
        let mut out = Vec::new();
        f.for_each_record(page, &h, |ts, p, off| out.push((ts, p.len(), off))).expect("records");
        (h, out)
    }

    #[test]
    fn synthetic_page_decodes_exactly_in_both_orders() {
        let base = 0xf800_0000_0000_1000u64;
        let expect = vec![
            (base + 10, 120, 20),
            (base + 10 + 5 + (1 << 27) + 3 + 7, 8, 12 + 128 + 16 + 8 + 4),
            (((0xf8u64 << 56) | ((5 << 27) + 9)) + 1, 4, 12 + 128 + 16 + 8 + 12 + 12),
        ];
        for endian in [Endian::Little, Endian::Big] {
            let (h, recs) = decode(endian, &synthetic_page(endian, 0, None));
            assert_eq!(h.ts, base);
            assert!(!h.missed && h.lost.is_none());
            assert_eq!(recs, expect, "{endian:?}");
        }
    }

    #[test]
    fn missed_events_flags() {
        let (h, _) = decode(Endian::Little, &synthetic_page(Endian::Little, MISSED_EVENTS, None));
        assert!(h.missed && h.lost.is_none());
        let p = synthetic_page(Endian::Little, MISSED_EVENTS | MISSED_STORED, Some(42));
        let (h, recs) = decode(Endian::Little, &p);
        assert_eq!((h.missed, h.lost, recs.len()), (true, Some(42), 3));
    }

    #[test]
    fn sixty_four_bit_header_and_trappy_bytes() {
        // trappy CPU0's first page header.
        let mut page = vec![0x78, 0x49, 0x8a, 0x2c, 0xed, 0x06, 0, 0, 0xe8, 0x0f, 0, 0];
        page.resize(4096, 0);
        let h = fmt(Endian::Little).header(&page).expect("header");
        assert_eq!((h.ts, h.data_len), (7_615_724_276_088, 0xfe8));
        // commit size 8, data at 16.
        let f = PageFormat {
            endian: Endian::Little,
            layout: PageLayout { commit_offset: 8, long_size: 8, data_offset: 16 },
            page_size: 4096,
        };
        let mut p = vec![0u8; 4096];
        p[8..16].copy_from_slice(&(8u64 | MISSED_EVENTS).to_le_bytes());
        p[16..20].copy_from_slice(&(1u32 | 3 << 5).to_le_bytes());
        p[20..24].copy_from_slice(&[7, 7, 7, 7]);
        let h = f.header(&p).expect("header");
        assert!(h.missed);
        let mut got = Vec::new();
        f.for_each_record(&p, &h, |ts, pl, off| got.push((ts, pl.to_vec(), off))).expect("records");
        assert_eq!(got, vec![(3, vec![7, 7, 7, 7], 20)]);
    }

    #[test]
    fn hostile_lengths_stop_the_page() {
        let mut p = vec![0u8; 64];
        p[8..12].copy_from_slice(&40u32.to_le_bytes());
        p[12..16].copy_from_slice(&0u32.to_le_bytes());
        p[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        let f = fmt(Endian::Little);
        let h = f.header(&p).expect("header");
        assert!(f.for_each_record(&p, &h, |_, _, _| {}).is_err());
        // A commit beyond the page is clamped.
        p[8..12].copy_from_slice(&0x07ff_ffffu32.to_le_bytes());
        let h = f.header(&p).expect("header");
        assert!(h.overlong && h.data_len == 52);
    }

    /// What [`PageWriter`] writes reads back with the reader: every record's time, payload
    /// and form, across pages, with time extends and the lost count kept.
    #[test]
    fn written_pages_read_back_record_for_record() {
        for endian in [Endian::Little, Endian::Big] {
            let f = fmt(endian);
            let mut recs: Vec<(u64, Vec<u8>, bool)> = Vec::new();
            let mut ts = 0xf800_0000_0000_1000u64;
            for i in 0..400u32 {
                // Mostly short records, a long one every 7th, a delta past 27 bits every 50th.
                ts += if i % 50 == 49 { (1 << 27) + 12_345 } else { 1_000 + u64::from(i) };
                let len = if i % 7 == 0 { 120 } else { 4 * (1 + i as usize % 5) };
                recs.push((ts, (0..len).map(|b| (b as u32 ^ i) as u8).collect(), i % 7 == 0));
            }
            let mut w = PageWriter::new(f);
            w.missed(Some(7));
            for (ts, p, long) in &recs {
                w.record(*ts, p, *long);
            }
            w.close();
            assert!(w.pages > 1, "{} pages", w.pages);
            assert_eq!(w.out.len(), w.pages * 4096);
            let mut back = Vec::new();
            for (n, page) in w.out.chunks_exact(4096).enumerate() {
                let h = f.header(page).expect("header");
                assert_eq!((h.missed, h.lost), if n == 0 { (true, Some(7)) } else { (false, None) });
                f.for_each_raw_record(page, &h, |ts, p, _, long| back.push((ts, p.to_vec(), long)))
                    .expect("records");
            }
            assert_eq!(back, recs);
        }
    }
}
