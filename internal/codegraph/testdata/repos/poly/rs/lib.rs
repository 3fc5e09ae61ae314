use std::fmt;

pub const LIMIT: usize = 8;

pub struct Queue<T> {
    items: Vec<T>,
}

pub trait Sized2 {
    fn size(&self) -> usize;
}

impl<T> Queue<T> {
    pub fn new() -> Self {
        Queue { items: Vec::new() }
    }

    pub fn push(&mut self, item: T) {
        if self.items.len() < LIMIT {
            self.items.push(item);
        }
    }
}

impl<T> Sized2 for Queue<T> {
    fn size(&self) -> usize {
        self.items.len()
    }
}

pub fn make() -> Queue<u8> {
    let mut q = Queue::new();
    q.push(1);
    q
}

impl fmt::Display for Queue<u8> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.size())
    }
}
