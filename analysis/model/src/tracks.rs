//! A source's list of tracks, each held behind an `Arc`: copying a source (to add decoded
//! annotations beside its channels, say) shares its edges and samples instead of copying
//! them, so a 600M-sample capture is in memory once however many versions of its source are
//! alive. A track is copied only when one version changes it ([`Tracks::get_mut`]).

use std::sync::Arc;

/// Tracks in order; read like a slice of `T`, changed like a `Vec<T>`.
#[derive(Debug)]
pub struct Tracks<T>(Vec<Arc<T>>);

impl<T> Default for Tracks<T> {
    fn default() -> Self {
        Tracks(Vec::new())
    }
}

impl<T> Clone for Tracks<T> {
    /// Shares every track.
    fn clone(&self) -> Self {
        Tracks(self.0.clone())
    }
}

impl<T: PartialEq> PartialEq for Tracks<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T: Eq> Eq for Tracks<T> {}

impl<T> Tracks<T> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn push(&mut self, track: T) {
        self.0.push(Arc::new(track));
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + Clone {
        self.0.iter().map(|t| &**t)
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.0.get(i).map(|t| &**t)
    }

    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&T> {
        self.0.last().map(|t| &**t)
    }

    /// Replaces track `i` (without copying the one it replaces).
    pub fn set(&mut self, i: usize, track: T) {
        self.0[i] = Arc::new(track);
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.0.retain(|t| keep(t));
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Whether track `i` of both lists is the same allocation (shared, not copied).
    pub fn shares(&self, other: &Tracks<T>, i: usize) -> bool {
        matches!((self.0.get(i), other.0.get(i)), (Some(a), Some(b)) if Arc::ptr_eq(a, b))
    }
}

impl<T: Clone> Tracks<T> {
    /// Track `i` to change: copied first if another version shares it.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.0.get_mut(i).map(Arc::make_mut)
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.0.iter_mut().map(Arc::make_mut)
    }
}

impl<T> std::ops::Index<usize> for Tracks<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.0[i]
    }
}

impl<T: Clone> std::ops::IndexMut<usize> for Tracks<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        Arc::make_mut(&mut self.0[i])
    }
}

impl<T> From<Vec<T>> for Tracks<T> {
    fn from(v: Vec<T>) -> Self {
        Tracks(v.into_iter().map(Arc::new).collect())
    }
}

impl<T> FromIterator<T> for Tracks<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Tracks(iter.into_iter().map(Arc::new).collect())
    }
}

impl<T> Extend<T> for Tracks<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        self.0.extend(iter.into_iter().map(Arc::new));
    }
}

impl<'a, T> IntoIterator for &'a Tracks<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, Arc<T>>, fn(&'a Arc<T>) -> &'a T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|t| &**t)
    }
}

impl<'a, T: Clone> IntoIterator for &'a mut Tracks<T> {
    type Item = &'a mut T;
    type IntoIter = std::iter::Map<std::slice::IterMut<'a, Arc<T>>, fn(&'a mut Arc<T>) -> &'a mut T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut().map(Arc::make_mut)
    }
}

impl<T: Clone> IntoIterator for Tracks<T> {
    type Item = T;
    type IntoIter = std::iter::Map<std::vec::IntoIter<Arc<T>>, fn(Arc<T>) -> T>;
    /// Each track, copied only if another version still shares it.
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(Arc::unwrap_or_clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_share_tracks_until_one_changes() {
        let mut a: Tracks<Vec<u32>> = vec![vec![1, 2], vec![3]].into();
        let b = a.clone();
        assert!(a.shares(&b, 0) && a.shares(&b, 1));
        a[1].push(4);
        assert!(a.shares(&b, 0) && !a.shares(&b, 1), "only the changed track is copied");
        assert_eq!((&a[1], &b[1]), (&vec![3, 4], &vec![3]));
        a.set(0, vec![9]);
        assert_eq!(b[0], vec![1, 2]);
        let lens: Vec<usize> = a.iter().map(Vec::len).collect();
        assert_eq!(lens, [1, 2]);
        a.retain(|t| t.len() > 1);
        assert_eq!(a.into_iter().collect::<Vec<_>>(), [vec![3, 4]]);
    }
}
