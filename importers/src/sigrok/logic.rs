//! The logic chunks of a `.sr` capture, read at the speed of inflating them: samples of up to
//! 64 channels (a unitsize of 1 to 8 bytes) are handed to a [`LogicVisitor`] as the samples
//! where a wanted channel flips, in sample order, while later chunks are still inflating.
//!
//! - **Parallel inflate.** Chunks of known size (libsigrok writes 4–10 MiB) are inflated on
//!   all cores, each in one call into a buffer of exactly its declared size: libdeflate
//!   refuses a stream that would write past it, so a chunk that inflates to more than it
//!   declares is never inflated further. Its CRC32 is checked as the zip reader checks it.
//!   The threads take chunks in order, a few ahead of the reader at most, and hand each on
//!   in pieces of [`PIECE_BYTES`] as they are scanned, so the reader starts on a chunk's
//!   first flips while the rest of it is still scanned; a piece's flips reach the visitor
//!   as one run ([`LogicVisitor::flips`]).
//! - **Repeated chunks once.** A real capture repeats itself (a bus idle for seconds is the
//!   same bytes chunk after chunk): chunks whose compressed bytes, size and CRC32 are equal
//!   are inflated and scanned once, and the flips found inside are replayed at each copy's
//!   place. Only a flip at a chunk's first sample depends on the chunk before it, and it is
//!   found from that chunk's last sample, so every count stays exact.
//! - **Flips a word at a time.** A chunk is read as 64-bit words of 8/U samples; a word XOR
//!   the same word shifted by one sample is nonzero exactly where a sample differs from the
//!   one before, and 64-byte blocks without a flip of a wanted or counted channel are passed
//!   over whole.
//!
//! Chunks that do not fit (larger than [`FAST_MEMBER_BYTES`], not deflated or stored, or not
//! a whole number of samples) are streamed through the zip reader in blocks and scanned the
//! same way; so is a chunk whose one-call inflate fails, so that what inflates before damage
//! is kept and the zip reader's message and limits apply, as for every chunk before.

use super::stream_member;
use crate::{LoadControl, ParseFailure, Position};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Cursor;
use std::sync::Arc;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Condvar, Mutex};
use zip::ZipArchive;

/// Largest chunk inflated in one call: larger ones (libsigrok writes at most 10 MiB) are
/// streamed, so a hostile declared size never becomes an allocation.
pub const FAST_MEMBER_BYTES: u64 = 16 << 20;
/// Flips listed per chunk in the parallel phase; the pieces of a chunk with more keep their
/// samples and are scanned again as their flips are handed on (its list would outweigh its
/// samples).
const MAX_LISTED_FLIPS: usize = 1 << 20;
/// Flips kept per repeated chunk for its later copies, and for all of them at once; a chunk
/// over either is inflated again at each copy.
const MAX_REPLAYED_FLIPS: usize = 1 << 16;
const MAX_KEPT_FLIPS: usize = 1 << 22;
/// Earlier chunks a chunk's bytes are compared with when their sizes and CRC32 are equal: a
/// file crafted with many equal CRCs costs this many comparisons per chunk, no more.
const MAX_CANDIDATES: usize = 8;
/// Bytes of samples scanned and handed on at a time. A chunk (4 MiB and more) takes several
/// milliseconds to scan; pieces let its first flips be decoded while the rest is scanned.
const PIECE_BYTES: usize = 512 << 10;

/// What a logic capture's reader hands on, in sample order.
pub trait LogicVisitor {
    /// The first sample: bit `b` of `levels` is the channel at bit `b` of the sample word.
    fn first(&mut self, levels: u64) -> Result<(), ParseFailure>;
    /// At `sample`, the wanted channels in `changed` flipped; `levels` is that sample (only
    /// the bits of wanted and counted channels are kept).
    fn change(&mut self, sample: u64, changed: u64, levels: u64) -> Result<(), ParseFailure>;
    /// A run of flips, in sample order: at sample `base + at[k]` the sample became
    /// `levels[k]` (the bits of wanted and counted channels), and `before` is the sample
    /// before the first; each differs from the one before it in a wanted channel. The
    /// default hands each to [`Self::change`]; a visitor that can take a run whole saves a
    /// call per flip.
    fn flips(
        &mut self,
        base: u64,
        at: &[u32],
        levels: FlipLevels<'_>,
        before: u64,
        wanted: u64,
    ) -> Result<(), ParseFailure> {
        fn each<W: Copy + Into<u64>>(
            v: &mut (impl LogicVisitor + ?Sized),
            base: u64,
            at: &[u32],
            levels: &[W],
            mut last: u64,
            wanted: u64,
        ) -> Result<(), ParseFailure> {
            for (&a, &w) in at.iter().zip(levels) {
                let w: u64 = w.into();
                v.change(base + u64::from(a), (w ^ last) & wanted, w)?;
                last = w;
            }
            Ok(())
        }
        match levels {
            FlipLevels::Narrow(l) => each(self, base, at, l, before, wanted),
            FlipLevels::Wide(l) => each(self, base, at, l, before, wanted),
        }
    }
    /// A chunk was read: `samples` so far. (A preview is sent from here.)
    fn chunk_read(&mut self, _samples: u64) {}
}

/// The levels of a run of flips ([`LogicVisitor::flips`]): 16-bit words when every channel
/// that matters lies in the low 16 bits, else 64-bit ones.
#[derive(Debug, Clone, Copy)]
pub enum FlipLevels<'a> {
    Narrow(&'a [u16]),
    Wide(&'a [u64]),
}

/// Which bits of the sample word matter: changes of `wanted` channels are handed on;
/// changes of `counted` ones are only counted.
#[derive(Debug, Clone, Copy)]
pub struct Masks {
    pub wanted: u64,
    pub counted: u64,
}

impl Member {
    /// Its compressed bytes in the archive.
    pub(super) fn compressed_len(&self) -> usize {
        self.compressed
    }
}

impl Masks {
    fn all(self) -> u64 {
        self.wanted | self.counted
    }
}

/// How a logic read ended.
#[derive(Debug, Default)]
pub struct LogicEnd {
    pub samples: u64,
    /// Flips of the counted channels (each channel's, summed).
    pub counted_flips: u64,
    /// Bytes after the last whole sample.
    pub partial_len: usize,
    pub warnings: Vec<String>,
}

/// One logic chunk as the zip directory describes it.
#[derive(Debug, Clone)]
pub(super) struct Member {
    pub name: String,
    /// Its declared (inflated) size.
    pub size: u64,
    /// Where its compressed bytes lie in the archive.
    data: usize,
    compressed: usize,
    crc: u32,
    stored: bool,
    /// Inflated in one call and scanned in the parallel phase.
    fast: bool,
}

/// Analog chunks of float32 samples inflated on all cores straight into `out` (their
/// samples in order, each chunk its own window of it); `false` when one does not inflate to
/// its declared size and CRC32 or is not fast (then read them through the zip reader).
pub(super) fn inflate_f32(bytes: &[u8], members: &[Member], out: &mut [f32]) -> bool {
    if members.iter().any(|m| !m.fast || !m.size.is_multiple_of(4))
        || members.iter().map(|m| m.size / 4).sum::<u64>() != out.len() as u64
    {
        return false;
    }
    let mut windows = Vec::with_capacity(members.len());
    let mut rest = out;
    for m in members {
        let (w, tail) = std::mem::take(&mut rest).split_at_mut((m.size / 4) as usize);
        windows.push((m, w));
        rest = tail;
    }
    windows.into_par_iter().all(|(m, window)| {
        with_samples(m, bytes, |samples| {
            for (v, b) in window.iter_mut().zip(samples.as_chunks::<4>().0) {
                *v = f32::from_le_bytes(*b);
            }
        })
        .is_some()
    })
}

/// Calls `f` with a fast chunk's samples: its stored bytes, or its bytes inflated in one call
/// into this thread's buffer. `None` when they are not exactly its declared size or fail its
/// CRC32 (then the chunk is read through the zip reader instead).
fn with_samples<R>(m: &Member, bytes: &[u8], f: impl FnOnce(&[u8]) -> R) -> Option<R> {
    let raw = &bytes[m.data..m.data + m.compressed];
    if m.stored {
        return (raw.len() as u64 == m.size && crc32fast::hash(raw) == m.crc).then(|| f(raw));
    }
    INFLATER.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (buf, inflater) = &mut *cell;
        let size = m.size as usize;
        buf.resize(size, 0);
        let inflater = inflater.get_or_insert_with(libdeflater::Decompressor::new);
        let ok = matches!(inflater.deflate_decompress(raw, &mut buf[..size]), Ok(n) if n == size)
            && crc32fast::hash(&buf[..size]) == m.crc;
        ok.then(|| f(&buf[..size]))
    })
}

/// The chunks `names` of `zip` (whose bytes are `bytes`) with what the fast path needs.
pub(super) fn members(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    bytes: &[u8],
    names: &[String],
    unitsize: usize,
) -> Vec<Member> {
    let mut out = Vec::with_capacity(names.len());
    let mut offset = 0u64;
    for name in names {
        let entry = zip.index_for_name(name).and_then(|i| zip.by_index_raw(i).ok());
        let m = entry.and_then(|e| {
            let data = usize::try_from(e.data_start()?).ok()?;
            let compressed = usize::try_from(e.compressed_size()).ok()?;
            let method = e.compression();
            let stored = method == zip::CompressionMethod::Stored;
            let known = stored || method == zip::CompressionMethod::Deflated;
            let in_file = data.checked_add(compressed).is_some_and(|end| end <= bytes.len());
            let fast = known
                && in_file
                && !e.encrypted()
                && e.size() > 0
                && e.size() <= FAST_MEMBER_BYTES
                && offset.is_multiple_of(unitsize as u64)
                && e.size().is_multiple_of(unitsize as u64);
            Some(Member {
                name: name.clone(),
                data,
                compressed,
                size: e.size(),
                crc: e.crc32(),
                stored,
                fast,
            })
        });
        let m = m.unwrap_or(Member {
            name: name.clone(),
            data: 0,
            compressed: 0,
            size: 0,
            crc: 0,
            stored: false,
            fast: false,
        });
        offset = offset.saturating_add(m.size);
        out.push(m);
    }
    out
}

/// For each chunk, the first chunk with the same bytes (itself if none): same compressed
/// bytes, method, size and CRC32, so the same samples.
fn repeats(members: &[Member], bytes: &[u8]) -> Vec<usize> {
    let raw = |m: &Member| &bytes[m.data..m.data + m.compressed];
    let mut firsts: HashMap<(u32, u64, usize, bool), Vec<usize>> = HashMap::new();
    let mut rep = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        if !m.fast {
            rep.push(i);
            continue;
        }
        let same = firsts.entry((m.crc, m.size, m.compressed, m.stored)).or_default();
        match same.iter().copied().find(|&r| raw(&members[r]) == raw(m)) {
            Some(r) => rep.push(r),
            None => {
                if same.len() < MAX_CANDIDATES {
                    same.push(i);
                }
                rep.push(i);
            }
        }
    }
    rep
}

/// The flips inside one chunk: where a wanted channel differs from the sample before (from
/// index 1: index 0 is compared with the previous chunk when the scan is handed on).
#[derive(Debug, Default)]
struct MemberScan {
    samples: u64,
    first: u64,
    last: u64,
    at: Vec<u32>,
    words: FlipWords,
    /// Flips of the counted channels inside the chunk.
    counted: u64,
}

/// Each flip's sample word, only the bits of the channels that matter: 2 bytes when those
/// all lie in the low 16 bits (a 16-channel analyzer), else 8. A busy chunk lists hundreds
/// of thousands of flips, and what the list weighs is written and faulted in once more.
#[derive(Debug)]
enum FlipWords {
    Narrow(Vec<u16>),
    Wide(Vec<u64>),
}

impl Default for FlipWords {
    fn default() -> Self {
        FlipWords::Wide(Vec::new())
    }
}

impl FlipWords {
    fn with_capacity(all: u64, n: usize) -> Self {
        if all <= u64::from(u16::MAX) {
            FlipWords::Narrow(Vec::with_capacity(n))
        } else {
            FlipWords::Wide(Vec::with_capacity(n))
        }
    }
    fn shrink_to_fit(&mut self) {
        match self {
            FlipWords::Narrow(v) => v.shrink_to_fit(),
            FlipWords::Wide(v) => v.shrink_to_fit(),
        }
    }
    fn clear(&mut self) {
        match self {
            FlipWords::Narrow(v) => v.clear(),
            FlipWords::Wide(v) => v.clear(),
        }
    }
}

impl MemberScan {
    /// Keeps no room beyond its flips: done only to a scan kept for a chunk's later copies.
    fn shrink_to_fit(&mut self) {
        self.at.shrink_to_fit();
        self.words.shrink_to_fit();
    }
}

/// A chunk after the parallel phase.
#[derive(Debug)]
enum Ready {
    Scanned(Arc<MemberScan>),
    /// Too many flips to list: its samples, scanned as they are handed on.
    Heavy(Vec<u8>),
    /// Read through the zip reader (see the module docs).
    Stream,
    /// The same bytes as an earlier chunk.
    Copy(usize),
}

thread_local! {
    /// Each inflating thread's buffer and inflater, reused chunk after chunk: a fresh buffer
    /// per chunk would fault in its pages every time.
    static INFLATER: RefCell<(Vec<u8>, Option<libdeflater::Decompressor>)> = const { RefCell::new((Vec::new(), None)) };
    /// Flips the thread's last chunk listed: the next is sized for as many, since a busy bus
    /// stays busy, instead of growing (and copying) its lists from a few thousand.
    static LAST_FLIPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How a read's chunks are scanned: the sample size, the channels that matter, and the
/// flip lists of pieces already handed on, for the next pieces.
#[derive(Debug)]
struct Scanner {
    unitsize: usize,
    masks: Masks,
    piece_bytes: usize,
    /// Emptied lists handed back by the reader: a fresh list per piece would fault in its
    /// pages every time (a busy piece lists half a megabyte).
    spare: Mutex<Vec<(Vec<u32>, FlipWords)>>,
}

/// Lists kept for reuse: as many as pieces can be in flight at once, about.
const SPARE_LISTS: usize = 16;

/// Scanned pieces a chunk may hold before the reader takes them: a thread that scans a chunk
/// ahead of the reader then waits, once that chunk is inflated, rather than list all its flips
/// (half a megabyte a busy piece, faulted in once each) while the lists of pieces handed on
/// wait to be reused. The next chunk is still inflated while the reader works.
const PIECES_AHEAD: usize = 4;

impl Scanner {
    fn new(unitsize: usize, masks: Masks, piece_bytes: usize) -> Self {
        Scanner { unitsize, masks, piece_bytes, spare: Mutex::new(Vec::new()) }
    }

    /// Inflates (or copies) and scans a fast chunk, handing on its pieces in order; one
    /// [`Ready::Stream`] when that fails (the chunk is checked whole before any piece is
    /// handed on).
    fn prepare(&self, m: &Member, bytes: &[u8], emit: &mut dyn FnMut(Ready)) {
        if with_samples(m, bytes, |samples| self.pieces(samples, emit)).is_none() {
            emit(Ready::Stream);
        }
    }

    /// Scans a chunk's samples a piece at a time, handing each on as soon as it is scanned:
    /// the reader starts on a chunk's first flips while the rest of it is still scanned. A
    /// chunk lists at most [`MAX_LISTED_FLIPS`]; its pieces past that keep their samples.
    fn pieces(&self, samples: &[u8], emit: &mut dyn FnMut(Ready)) {
        let piece = (self.piece_bytes / self.unitsize).max(1) * self.unitsize;
        let mut listed = 0;
        for p in samples.chunks(piece) {
            let ready = self.scanned(p, MAX_LISTED_FLIPS - listed);
            if let Ready::Scanned(scan) = &ready {
                listed += scan.at.len();
            }
            emit(ready);
        }
    }

    /// One piece's flips, or its samples when it has `room` flips or more (listing would be
    /// wasted: the piece is scanned again as it is handed on).
    fn scanned(&self, samples: &[u8], room: usize) -> Ready {
        let unitsize = self.unitsize;
        if room == 0 {
            return Ready::Heavy(samples.to_vec());
        }
        let (first, last) =
            (read_sample(samples, 0, unitsize), read_sample(samples, samples.len() - unitsize, unitsize));
        let all = self.masks.all();
        let (at, words) = self.spare.lock().ok().and_then(|mut s| s.pop()).unwrap_or_else(|| {
            let hint = LAST_FLIPS.get().clamp(4096, MAX_LISTED_FLIPS);
            (Vec::with_capacity(hint), FlipWords::with_capacity(all, hint))
        });
        let mut scan = MemberScan {
            samples: (samples.len() / unitsize) as u64,
            first: first & all,
            last: last & all,
            at,
            words,
            ..MemberScan::default()
        };
        let counted = match &mut scan.words {
            FlipWords::Narrow(words) => list(samples, unitsize, first, self.masks, room, &mut scan.at, words),
            FlipWords::Wide(words) => list(samples, unitsize, first, self.masks, room, &mut scan.at, words),
        };
        match counted {
            Ok(c) => {
                scan.counted = c;
                LAST_FLIPS.set(scan.at.len());
                Ready::Scanned(Arc::new(scan))
            }
            Err(()) => {
                LAST_FLIPS.set(MAX_LISTED_FLIPS);
                self.give_back(Arc::new(scan));
                Ready::Heavy(samples.to_vec())
            }
        }
    }

    /// A piece's lists, once it is handed on and not kept, for the next piece.
    fn give_back(&self, scan: Arc<MemberScan>) {
        if let Ok(MemberScan { mut at, mut words, .. }) = Arc::try_unwrap(scan)
            && let Ok(mut spare) = self.spare.lock()
            && spare.len() < SPARE_LISTS
        {
            at.clear();
            words.clear();
            spare.push((at, words));
        }
    }
}

/// A flip's word as a list keeps it: only the bits of the channels that matter, which fit.
trait FlipWord: Copy {
    fn of(w: u64) -> Self;
}
impl FlipWord for u16 {
    #[inline]
    fn of(w: u64) -> Self {
        w as u16
    }
}
impl FlipWord for u64 {
    #[inline]
    fn of(w: u64) -> Self {
        w
    }
}

/// Lists the flips of `samples` (see [`scan_samples`]) into `at` and `words`; `Err` once
/// `room` are listed. One copy per word size, so no flip chooses between them.
fn list<W: FlipWord>(
    samples: &[u8],
    unitsize: usize,
    first: u64,
    masks: Masks,
    room: usize,
    at: &mut Vec<u32>,
    words: &mut Vec<W>,
) -> Result<u64, ()> {
    let all = masks.all();
    scan_samples(samples, unitsize, first, masks, &mut |i, s| {
        if at.len() >= room {
            return Err(());
        }
        at.push(i as u32);
        words.push(W::of(s & all));
        Ok(())
    })
}

/// Sample `i` (a byte offset) of `u`-byte samples, little-endian.
#[inline]
fn read_sample(bytes: &[u8], at: usize, u: usize) -> u64 {
    let mut w = [0u8; 8];
    w[..u].copy_from_slice(&bytes[at..at + u]);
    u64::from_le_bytes(w)
}

/// Calls `on(i, sample)` for each sample `i` of `bytes` (whole `unitsize`-byte samples) where a
/// wanted channel differs from the sample before (`prev` before sample 0); returns the flips
/// of the counted channels.
fn scan_samples<E>(
    bytes: &[u8],
    unitsize: usize,
    prev: u64,
    masks: Masks,
    on: &mut impl FnMut(usize, u64) -> Result<(), E>,
) -> Result<u64, E> {
    match unitsize {
        1 => scan_words::<1, E>(bytes, prev, masks, on),
        2 => scan_words::<2, E>(bytes, prev, masks, on),
        4 => scan_words::<4, E>(bytes, prev, masks, on),
        8 => scan_words::<8, E>(bytes, prev, masks, on),
        u => {
            let mut counted = 0;
            let mut prev = prev;
            for (i, c) in bytes.chunks_exact(u).enumerate() {
                let s = read_sample(c, 0, u);
                let d = s ^ prev;
                counted += u64::from((d & masks.counted).count_ones());
                if d & masks.wanted != 0 {
                    on(i, s)?;
                }
                prev = s;
            }
            Ok(counted)
        }
    }
}

/// [`scan_samples`] for samples of `U` bytes, `8 / U` to a 64-bit word.
#[inline]
fn scan_words<const U: usize, E>(
    bytes: &[u8],
    prev: u64,
    masks: Masks,
    on: &mut impl FnMut(usize, u64) -> Result<(), E>,
) -> Result<u64, E> {
    let lane = 8 * U as u32;
    let lane_mask = if U == 8 { u64::MAX } else { (1u64 << lane) - 1 };
    let per = 8 / U;
    let spread = |m: u64| (0..per).fold(0u64, |acc, k| acc | ((m & lane_mask) << (lane * k as u32)));
    let (wanted, counted_bits, all) = (spread(masks.wanted), spread(masks.counted), spread(masks.all()));
    // The word before: only its last lane (the sample before this one) is read.
    let mut before = if U == 8 { prev } else { prev << (64 - lane) };
    let shifted = |w: u64, before: u64| if U == 8 { before } else { (w << lane) | (before >> (64 - lane)) };
    let mut counted = 0u64;
    let (blocks, rest) = bytes.as_chunks::<64>();
    let mut index = 0usize;
    for block in blocks {
        let (words, _) = block.as_chunks::<8>();
        let w: [u64; 8] = std::array::from_fn(|k| u64::from_le_bytes(words[k]));
        // Any flip of a channel that matters in these 64 bytes? (A quiet bus: almost never.)
        let mut any = (w[0] ^ shifted(w[0], before)) & all;
        for k in 1..8 {
            any |= (w[k] ^ shifted(w[k], w[k - 1])) & all;
        }
        if any == 0 {
            before = w[7];
            index += 8 * per;
            continue;
        }
        for word in w {
            let d = word ^ shifted(word, before);
            before = word;
            counted += u64::from((d & counted_bits).count_ones());
            let mut e = d & wanted;
            while e != 0 {
                let k = e.trailing_zeros() / lane;
                on(index + k as usize, (word >> (lane * k)) & lane_mask)?;
                e &= !(lane_mask << (lane * k));
            }
            index += per;
        }
    }
    // The last bytes, a whole number of samples short of 64.
    let mut prev = if U == 8 { before } else { before >> (64 - lane) };
    for c in rest.chunks_exact(U) {
        let s = read_sample(c, 0, U);
        let d = s ^ prev;
        counted += u64::from((d & masks.counted).count_ones());
        if d & masks.wanted != 0 {
            on(index, s)?;
        }
        prev = s;
        index += 1;
    }
    Ok(counted)
}

/// The reader's position: samples handed on so far and the last of them.
#[derive(Debug)]
struct State {
    unitsize: usize,
    masks: Masks,
    /// The last sample read (masked to the channels that matter); `None` before the first.
    prev: Option<u64>,
    samples: u64,
    counted: u64,
    /// Bytes of a sample split between blocks or chunks.
    carry: Vec<u8>,
}

impl State {
    fn new(unitsize: usize, masks: Masks) -> Self {
        State { unitsize, masks, prev: None, samples: 0, counted: 0, carry: Vec::with_capacity(unitsize) }
    }

    /// Hands on sample `first` as the next sample, against the one before it.
    fn boundary(&mut self, first: u64, visitor: &mut dyn LogicVisitor) -> Result<(), ParseFailure> {
        let first = first & self.masks.all();
        match self.prev {
            None => visitor.first(first)?,
            Some(p) => {
                let d = p ^ first;
                self.counted += u64::from((d & self.masks.counted).count_ones());
                if d & self.masks.wanted != 0 {
                    visitor.change(self.samples, d & self.masks.wanted, first)?;
                }
            }
        }
        self.prev = Some(first);
        Ok(())
    }

    /// A scanned chunk, at the current position.
    fn apply(&mut self, scan: &MemberScan, visitor: &mut dyn LogicVisitor) -> Result<(), ParseFailure> {
        self.boundary(scan.first, visitor)?;
        let levels = match &scan.words {
            FlipWords::Narrow(words) => FlipLevels::Narrow(words),
            FlipWords::Wide(words) => FlipLevels::Wide(words),
        };
        visitor.flips(self.samples, &scan.at, levels, scan.first, self.masks.wanted)?;
        self.counted += scan.counted;
        self.samples += scan.samples;
        self.prev = Some(scan.last);
        Ok(())
    }

    /// Hands on one piece of chunk `m`: a scanned piece is kept in `keeping` (while there is
    /// one), else its lists go back to `scanner`, and its flips are added to `flips`. True
    /// when the chunk is to be read through the zip reader instead.
    fn hand_on(
        &mut self,
        ready: Ready,
        m: &Member,
        visitor: &mut dyn LogicVisitor,
        scanner: &Scanner,
        keeping: &mut Option<Vec<Arc<MemberScan>>>,
        flips: &mut usize,
    ) -> Result<bool, ParseFailure> {
        match ready {
            Ready::Scanned(scan) => {
                self.apply(&scan, visitor).map_err(|e| at_member(e, m))?;
                *flips += scan.at.len();
                match keeping {
                    Some(k) => k.push(scan),
                    None => scanner.give_back(scan),
                }
            }
            Ready::Heavy(samples) => {
                self.feed(&samples, visitor).map_err(|e| at_member(e, m))?;
                *keeping = None;
            }
            // A copy's pieces are handed on by the reader; a copy is never a copy's piece.
            Ready::Stream | Ready::Copy(_) => return Ok(true),
        }
        Ok(false)
    }

    /// Bytes of samples in file order (any split), scanned as they are handed on.
    fn feed(&mut self, mut bytes: &[u8], visitor: &mut dyn LogicVisitor) -> Result<(), ParseFailure> {
        let u = self.unitsize;
        if !self.carry.is_empty() {
            let take = (u - self.carry.len()).min(bytes.len());
            self.carry.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.carry.len() < u {
                return Ok(());
            }
            let s = read_sample(&self.carry, 0, u);
            self.carry.clear();
            self.boundary(s, visitor)?;
            self.samples += 1;
        }
        let whole = bytes.len() / u * u;
        let (body, rest) = bytes.split_at(whole);
        if !body.is_empty() {
            let first = read_sample(body, 0, u);
            self.boundary(first, visitor)?;
            let base = self.samples;
            let all = self.masks.all();
            let wanted = self.masks.wanted;
            let mut last = first & all;
            self.counted += scan_samples(body, u, first, self.masks, &mut |i, s| {
                let s = s & all;
                let d = (s ^ last) & wanted;
                last = s;
                visitor.change(base + i as u64, d, s)
            })?;
            self.samples += (body.len() / u) as u64;
            self.prev = Some(read_sample(body, body.len() - u, u) & all);
        }
        self.carry.extend_from_slice(rest);
        Ok(())
    }

    fn end(self, warnings: Vec<String>) -> LogicEnd {
        LogicEnd {
            samples: self.samples,
            counted_flips: self.counted,
            partial_len: self.carry.len(),
            warnings,
        }
    }
}

/// Which chunk an inflating thread takes next: in order, and no more than `window` ahead of
/// the reader, so the chunks waiting to be handed on stay few while the reader is slower.
struct Claims {
    window: usize,
    /// The next chunk to take, the chunks handed on, and whether the reader stopped.
    at: Mutex<(usize, usize, bool)>,
    turn: Condvar,
}

impl Claims {
    fn new(window: usize) -> Self {
        Claims { window, at: Mutex::new((0, 0, false)), turn: Condvar::new() }
    }

    /// The chunk to inflate next, waiting while the reader is `window` behind; `None` when
    /// all are taken or the reader stopped.
    fn next(&self, chunks: usize) -> Option<usize> {
        let mut at = self.at.lock().ok()?;
        loop {
            let (next, done, stopped) = *at;
            if stopped || next >= chunks {
                return None;
            }
            if next < done + self.window {
                at.0 += 1;
                return Some(next);
            }
            at = self.turn.wait(at).ok()?;
        }
    }

    /// The reader handed a chunk on.
    fn done(&self) {
        if let Ok(mut at) = self.at.lock() {
            at.1 += 1;
        }
        self.turn.notify_all();
    }
}

/// Stops the inflating threads when the reader ends, however it ends.
struct StopOnDrop<'a>(&'a Claims);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if let Ok(mut at) = self.0.at.lock() {
            at.2 = true;
        }
        self.0.turn.notify_all();
    }
}

/// A limit hit while handing on chunk `m` is placed at that chunk, as [`stream_member`] does.
fn at_member(e: ParseFailure, m: &Member) -> ParseFailure {
    match e {
        ParseFailure::Limit { at: Position::Byte(0), what, limit } => ParseFailure::Limit {
            at: Position::Byte(m.data as u64),
            what: format!("{what} in member `{}`", m.name),
            limit,
        },
        e => e,
    }
}

/// Reads the logic chunks `members` of `zip` (whose bytes are `bytes`) into `visitor`. A
/// damaged chunk ends the read with a warning; what was read before it stays.
pub(super) fn read(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    bytes: &[u8],
    members: &[Member],
    unitsize: usize,
    masks: Masks,
    ctl: &LoadControl,
    visitor: &mut dyn LogicVisitor,
) -> Result<LogicEnd, ParseFailure> {
    let rep = repeats(members, bytes);
    let mut copies_left = vec![0usize; members.len()];
    for (i, &r) in rep.iter().enumerate() {
        if r != i {
            copies_left[r] += 1;
        }
    }
    let mut state = State::new(unitsize, masks);
    let scanner = Scanner::new(unitsize, masks, PIECE_BYTES);
    let mut warnings = Vec::new();
    // A few chunks per thread at a time: the next ones inflate while these are handed on.
    // (As many threads as rayon's pool has, without starting the pool for it.)
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let window = threads * 2;
    let claims = Claims::new(window);
    // Each chunk's pieces arrive on its own channel, so chunks are inflated in parallel and
    // still handed on in order.
    let (txs, rxs): (Vec<_>, Vec<_>) = members.iter().map(|_| sync_channel::<Ready>(PIECES_AHEAD)).unzip();
    let txs: Vec<Mutex<Option<SyncSender<Ready>>>> = txs.into_iter().map(|t| Mutex::new(Some(t))).collect();
    std::thread::scope(|s| -> Result<(), ParseFailure> {
        let rep = &rep;
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(i) = claims.next(members.len()) {
                    // Taken once: dropping it when the chunk is done tells the reader so.
                    let Some(tx) = txs[i].lock().ok().and_then(|mut t| t.take()) else { continue };
                    let mut send = |r: Ready| {
                        // The reader stopped (damage, a limit, cancelled): the pieces are dropped.
                        let _ = tx.send(r);
                    };
                    match &members[i] {
                        m if !m.fast => send(Ready::Stream),
                        _ if rep[i] != i => send(Ready::Copy(rep[i])),
                        m => scanner.prepare(m, bytes, &mut send),
                    }
                }
            });
        }
        let _stop = StopOnDrop(&claims);
        let mut kept: HashMap<usize, Vec<Arc<MemberScan>>> = HashMap::new();
        let mut kept_flips = 0usize;
        for ((i, m), rx) in members.iter().enumerate().zip(rxs) {
            if ctl.is_cancelled() {
                return Err(ParseFailure::Cancelled);
            }
            // The chunk's scanned pieces, kept for its later copies while they may be.
            let mut keeping = (copies_left[i] > 0).then(Vec::new);
            let mut flips = 0usize;
            let mut streamed = false;
            for ready in rx.iter() {
                let Ready::Copy(r) = ready else {
                    streamed |= state.hand_on(ready, m, visitor, &scanner, &mut keeping, &mut flips)?;
                    continue;
                };
                copies_left[r] -= 1;
                let pieces = match kept.get(&r) {
                    Some(pieces) => pieces.iter().cloned().map(Ready::Scanned).collect(),
                    None => {
                        let mut pieces = Vec::new();
                        scanner.prepare(m, bytes, &mut |r| pieces.push(r));
                        pieces
                    }
                };
                if copies_left[r] == 0
                    && let Some(pieces) = kept.remove(&r)
                {
                    kept_flips -= pieces.iter().map(|p| p.at.len()).sum::<usize>();
                }
                for piece in pieces {
                    streamed |= state.hand_on(piece, m, visitor, &scanner, &mut None, &mut flips)?;
                }
            }
            if streamed {
                keeping = None;
                match stream_member(zip, &m.name, ctl, |b| state.feed(b, visitor)) {
                    Ok(()) => {}
                    // A damaged chunk: what decoded before the damage is kept, in sample order.
                    Err(ParseFailure::Invalid { at, message }) => {
                        warnings.push(format!(
                            "{at}: {message}; logic samples after sample {} ({} later chunk(s)) were not loaded",
                            state.samples,
                            members.len() - i - 1
                        ));
                        break;
                    }
                    Err(e) => return Err(e),
                }
            } else {
                ctl.advance(m.compressed as u64);
            }
            claims.done();
            if let Some(mut pieces) = keeping
                && flips <= MAX_REPLAYED_FLIPS
                && kept_flips + flips <= MAX_KEPT_FLIPS
            {
                kept_flips += flips;
                for p in &mut pieces {
                    if let Some(s) = Arc::get_mut(p) {
                        s.shrink_to_fit();
                    }
                }
                kept.insert(i, pieces);
            }
            visitor.chunk_read(state.samples);
        }
        Ok(())
    })?;
    Ok(state.end(warnings))
}

/// Feeds `pieces` (samples split anywhere) as one stream, as a streamed chunk is read.
#[cfg(test)]
pub(super) fn feed_pieces(
    pieces: &[&[u8]],
    unitsize: usize,
    masks: Masks,
    visitor: &mut dyn LogicVisitor,
) -> Result<LogicEnd, ParseFailure> {
    let mut state = State::new(unitsize, masks);
    for p in pieces {
        state.feed(p, visitor)?;
    }
    Ok(state.end(Vec::new()))
}

/// Hands `chunks` on as scanned chunks (each a whole number of samples), as the parallel
/// phase does, each scanned in pieces of `piece` samples.
#[cfg(test)]
pub(super) fn apply_chunks(
    chunks: &[&[u8]],
    unitsize: usize,
    masks: Masks,
    piece: usize,
    visitor: &mut dyn LogicVisitor,
) -> Result<LogicEnd, ParseFailure> {
    let mut state = State::new(unitsize, masks);
    let scanner = Scanner::new(unitsize, masks, piece * unitsize);
    for c in chunks {
        let mut pieces = Vec::new();
        scanner.pieces(c, &mut |r| pieces.push(r));
        for r in pieces {
            match r {
                Ready::Scanned(scan) => state.apply(&scan, visitor)?,
                Ready::Heavy(samples) => state.feed(&samples, visitor)?,
                r => panic!("{r:?}"),
            }
        }
    }
    Ok(state.end(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sample where a wanted channel changes, one sample at a time.
    fn reference(bytes: &[u8], u: usize, prev: u64, masks: Masks) -> (Vec<(usize, u64)>, u64) {
        let mut out = Vec::new();
        let mut counted = 0;
        let mut p = prev;
        for (i, c) in bytes.chunks_exact(u).enumerate() {
            let s = read_sample(c, 0, u);
            counted += u64::from(((s ^ p) & masks.counted).count_ones());
            if (s ^ p) & masks.wanted != 0 {
                out.push((i, s));
            }
            p = s;
        }
        (out, counted)
    }

    #[test]
    fn word_scans_find_what_a_sample_by_sample_scan_finds() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for u in [1usize, 2, 3, 4, 8] {
            for len in [0usize, 1, 7, 63, 64, 65, 200, 1031] {
                // Long quiet runs (whole quiet blocks) broken by bursts of flips.
                let mut bytes = vec![0u8; len * u];
                for (i, b) in bytes.iter_mut().enumerate() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let quiet = (i / (97 * u)) % 2 == 0;
                    *b = if quiet { 0x5A } else { (x >> 32) as u8 };
                }
                for masks in [
                    Masks { wanted: u64::MAX, counted: 0 },
                    Masks { wanted: 0b101, counted: 0b1000_0010 },
                    Masks { wanted: 1 << (8 * u - 1), counted: 0 },
                ] {
                    let prev = 0x1234_5678_9ABC_DEF0 & if u == 8 { u64::MAX } else { (1 << (8 * u)) - 1 };
                    let (want, want_counted) = reference(&bytes, u, prev, masks);
                    let mut got = Vec::new();
                    let counted = scan_samples::<()>(&bytes, u, prev, masks, &mut |i, s| {
                        got.push((i, s));
                        Ok(())
                    });
                    assert_eq!(counted, Ok(want_counted), "unitsize {u}, {len} samples, {masks:?}");
                    assert_eq!(got, want, "unitsize {u}, {len} samples, {masks:?}");
                }
            }
        }
    }
}
