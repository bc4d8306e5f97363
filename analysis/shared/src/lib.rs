//! [`SharedVec`]: a growable vector of `Copy` values whose clones share its memory.
//!
//! A live source grows while its snapshots are shown and analysed. With `Vec` columns, each
//! snapshot had to copy everything recorded so far, so its cost grew with the run. A clone
//! of a `SharedVec` costs a reference count: it sees the elements there when it was made,
//! as one contiguous slice (every reader of a column keeps indexing it as `&[T]`), and the
//! vector it was cloned from goes on appending in place, past what any clone can see.
//!
//! The rules that make this sound (the only `unsafe` is here):
//! - A buffer has at most one **writer**: the handle that allocated it, or a handle that
//!   found itself its only holder. Clones are readers.
//! - A writer only appends. Elements a reader can see (below its length, which is at most
//!   the writer's) are never written again while the buffer is shared: changing or cutting
//!   elements ([`SharedVec::as_mut_slice`], [`SharedVec::truncate`]) first takes the buffer
//!   for itself, copying it if it is shared.
//! - A reader that changes anything copies first (copy on write), and writes its own buffer.
//! - A full buffer is never reallocated in place: the writer copies into one twice as large,
//!   and readers keep the old one alive as long as they need it.
//!
//! Elements are `Copy`, so nothing is ever dropped but the allocation itself.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;

/// One allocation of `cap` elements, freed when its last handle goes.
struct Buffer<T> {
    ptr: NonNull<T>,
    cap: usize,
}

impl<T> Buffer<T> {
    /// An allocation of at least `cap` elements (as `Vec` allocates them).
    fn with_capacity(cap: usize) -> Self {
        Self::from_vec(Vec::with_capacity(cap))
    }

    /// Takes over `v`'s allocation; its elements are the caller's to account for.
    fn from_vec(v: Vec<T>) -> Self {
        let mut v = ManuallyDrop::new(v);
        let cap = v.capacity();
        // A `Vec`'s pointer is never null (dangling but aligned when nothing is allocated).
        let ptr = NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling());
        Self { ptr, cap }
    }
}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `cap` come from a `Vec<T>` (`from_vec`) whose ownership this
        // buffer took; a length of 0 frees the allocation without dropping elements, which
        // are `Copy` wherever a buffer is made.
        #[allow(unsafe_code)]
        drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), 0, self.cap) });
    }
}

// SAFETY: a buffer is plain memory. Which handle may write which elements is decided by
// `SharedVec` (at most one writer per buffer, writing only where no other handle reads).
#[allow(unsafe_code)]
unsafe impl<T: Send + Sync> Send for Buffer<T> {}
#[allow(unsafe_code)]
unsafe impl<T: Send + Sync> Sync for Buffer<T> {}

/// A growable vector of `Copy` values whose clones share its memory (see the module docs).
/// It derefs to `[T]`, as `Vec` does.
pub struct SharedVec<T: Copy> {
    buffer: Arc<Buffer<T>>,
    /// `buffer.ptr` and `buffer.cap`, kept here so reading costs what a `Vec` does.
    ptr: NonNull<T>,
    cap: usize,
    len: usize,
    /// Whether this handle may append in place.
    writer: bool,
}

// SAFETY: a handle reads only its first `len` elements, which no other handle writes while
// the buffer is shared, and writes only as the buffer's one writer, past every handle's
// length (module docs).
#[allow(unsafe_code)]
unsafe impl<T: Copy + Send + Sync> Send for SharedVec<T> {}
#[allow(unsafe_code)]
unsafe impl<T: Copy + Send + Sync> Sync for SharedVec<T> {}

impl<T: Copy> SharedVec<T> {
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    pub fn with_capacity(cap: usize) -> Self {
        Self::own(Buffer::with_capacity(cap), 0)
    }

    /// A writer over `buffer`, whose first `len` elements are set.
    fn own(buffer: Buffer<T>, len: usize) -> Self {
        let (ptr, cap) = (buffer.ptr, buffer.cap);
        Self { buffer: Arc::new(buffer), ptr, cap, len, writer: true }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements the buffer holds room for.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Whether `self` and `other` read the same memory (a clone and what it was cloned from).
    pub fn shares_memory_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.buffer, &other.buffer)
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the first `len` elements are set (every length comes from writes below it
        // or from a `Vec`'s length), and no handle writes them while this one can read them.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.ptr.as_ptr(), self.len)
        }
    }

    /// The elements to change: the buffer becomes this handle's alone first (copied if it
    /// is shared), so no clone sees them change.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.make_unique();
        // SAFETY: the buffer is this handle's alone (`make_unique`), its first `len`
        // elements are set, and `&mut self` is held for the slice's life.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len)
        }
    }

    /// Makes this handle the writer of a buffer with room for `additional` more elements.
    /// A handle already its buffer's writer keeps appending in place, shared or not.
    #[inline]
    fn make_room(&mut self, additional: usize) {
        if self.writer && self.cap - self.len >= additional {
            return;
        }
        self.make_room_slow(additional);
    }

    #[cold]
    fn make_room_slow(&mut self, additional: usize) {
        if Arc::get_mut(&mut self.buffer).is_some() {
            // The only holder of its buffer may write it, whoever made it, and grows it as
            // a `Vec` does (a reallocation that may move nothing).
            self.writer = true;
            if self.cap - self.len < additional {
                self.with_vec(|v| v.reserve(additional));
            }
            return;
        }
        let needed = self.len.saturating_add(additional);
        let grown = self.cap.saturating_mul(2).max(needed).max(4);
        self.copy_into(grown);
    }

    /// Runs `f` on the elements as a `Vec`, then takes its allocation back: without a copy
    /// when this handle holds its buffer alone.
    fn with_vec(&mut self, f: impl FnOnce(&mut Vec<T>)) {
        let mut v = std::mem::take(self).into_vec();
        f(&mut v);
        *self = v.into();
    }

    /// The buffer for this handle alone: copied (with the same room) if it is shared.
    fn make_unique(&mut self) {
        if Arc::get_mut(&mut self.buffer).is_some() {
            self.writer = true;
        } else {
            self.copy_into(self.cap);
        }
    }

    /// Moves this handle to a new buffer of `cap` elements holding a copy of its own.
    fn copy_into(&mut self, cap: usize) {
        let mut v = Vec::with_capacity(cap);
        v.extend_from_slice(self.as_slice());
        let len = v.len();
        *self = Self::own(Buffer::from_vec(v), len);
    }

    #[inline]
    pub fn push(&mut self, value: T) {
        self.make_room(1);
        // SAFETY: this handle is its buffer's writer with room for one more (`make_room`);
        // slot `len` is past every handle's length, so nobody reads it.
        #[allow(unsafe_code)]
        unsafe {
            self.ptr.as_ptr().add(self.len).write(value);
        }
        self.len += 1;
    }

    pub fn extend_from_slice(&mut self, values: &[T]) {
        self.make_room(values.len());
        // SAFETY: as in `push`, for `values.len()` slots; `values` cannot overlap them,
        // since no handle reads past its length.
        #[allow(unsafe_code)]
        unsafe {
            self.ptr.as_ptr().add(self.len).copy_from_nonoverlapping(values.as_ptr(), values.len());
        }
        self.len += values.len();
    }

    /// Room for `additional` more elements (growing as `push` would).
    pub fn reserve(&mut self, additional: usize) {
        self.make_room(additional);
    }

    /// Room for exactly `additional` more elements, if it must grow.
    pub fn reserve_exact(&mut self, additional: usize) {
        if !(self.writer && self.cap - self.len >= additional) {
            self.with_vec(|v| v.reserve_exact(additional));
        }
    }

    /// Keeps the first `len` elements. Elements a clone still sees are never written again:
    /// a shared buffer is left to the clones and this handle goes on in a copy.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        if Arc::get_mut(&mut self.buffer).is_some() {
            self.writer = true;
            self.len = len;
        } else {
            self.len = len;
            self.copy_into(len);
        }
    }

    /// Takes off the last element (a shared buffer is copied first, as for `truncate`).
    pub fn pop(&mut self) -> Option<T> {
        let last = self.last().copied()?;
        self.truncate(self.len - 1);
        Some(last)
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Gives back the growth slack.
    pub fn shrink_to_fit(&mut self) {
        if self.cap > self.len {
            self.with_vec(Vec::shrink_to_fit);
        }
    }

    /// The elements as a `Vec`, without a copy when this handle holds its buffer alone.
    pub fn into_vec(mut self) -> Vec<T> {
        match Arc::get_mut(&mut self.buffer) {
            Some(buffer) => {
                let taken = std::mem::replace(buffer, Buffer::from_vec(Vec::new()));
                let taken = ManuallyDrop::new(taken);
                // SAFETY: the allocation came from a `Vec<T>` of capacity `cap`, its first
                // `len` elements are set, and the buffer that owned it is forgotten.
                #[allow(unsafe_code)]
                unsafe {
                    Vec::from_raw_parts(taken.ptr.as_ptr(), self.len, taken.cap)
                }
            }
            None => self.as_slice().to_vec(),
        }
    }
}

impl<T: Copy> Default for SharedVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A reader of the same memory: it sees the elements there now, and costs a reference count.
impl<T: Copy> Clone for SharedVec<T> {
    fn clone(&self) -> Self {
        Self { buffer: Arc::clone(&self.buffer), ptr: self.ptr, cap: self.cap, len: self.len, writer: false }
    }
}

impl<T: Copy> Deref for SharedVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy> DerefMut for SharedVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Copy> From<Vec<T>> for SharedVec<T> {
    /// Takes over the vector's allocation, without a copy.
    fn from(v: Vec<T>) -> Self {
        let len = v.len();
        Self::own(Buffer::from_vec(v), len)
    }
}

impl<T: Copy> From<SharedVec<T>> for Vec<T> {
    fn from(v: SharedVec<T>) -> Self {
        v.into_vec()
    }
}

impl<T: Copy> FromIterator<T> for SharedVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Vec::from_iter(iter).into()
    }
}

impl<T: Copy> Extend<T> for SharedVec<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for v in iter {
            self.push(v);
        }
    }
}

impl<'a, T: Copy> IntoIterator for &'a SharedVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'a, T: Copy> IntoIterator for &'a mut SharedVec<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_mut_slice().iter_mut()
    }
}

impl<T: Copy + fmt::Debug> fmt::Debug for SharedVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl<T: Copy + PartialEq> PartialEq for SharedVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Eq> Eq for SharedVec<T> {}

impl<T: Copy + PartialEq> PartialEq<Vec<T>> for SharedVec<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + PartialEq> PartialEq<SharedVec<T>> for Vec<T> {
    fn eq(&self, other: &SharedVec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + PartialEq> PartialEq<[T]> for SharedVec<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.as_slice() == other
    }
}

impl<T: Copy + PartialEq> PartialEq<&[T]> for SharedVec<T> {
    fn eq(&self, other: &&[T]) -> bool {
        self.as_slice() == *other
    }
}

impl<T: Copy + PartialEq, const N: usize> PartialEq<[T; N]> for SharedVec<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

#[cfg(test)]
mod tests;
