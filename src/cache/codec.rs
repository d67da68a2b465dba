//! The cache's byte format: little-endian integers of fixed width (hashes, keys) or of
//! variable width (counts, lengths, token numbers: LEB128, most in a byte or two),
//! length-prefixed strings, a tag byte before an optional value. Writing cannot fail; reading gives `None` on anything short or out of
//! place, so a damaged entry is refused, never half-read. (A format of our own: the values
//! are a handful of integers and strings of types other modules own, which a serde format
//! would need mirror structs or derives across the crate for.)

/// Bytes being written.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn bool(&mut self, v: bool) {
        self.0.push(u8::from(v));
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u128(&mut self, v: u128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// `v` in LEB128: seven bits a byte, low bits first.
    pub fn var(&mut self, v: u64) {
        self.var128(u128::from(v));
    }
    pub fn var128(&mut self, mut v: u128) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.var(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// `None` as a 0 byte, `Some(v)` as a 1 byte and `v` written by `f`.
    pub fn opt<T>(&mut self, v: Option<T>, f: impl FnOnce(&mut Writer, T)) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                f(self, v);
            }
        }
    }
    pub fn opt_str(&mut self, s: Option<&str>) {
        self.opt(s, Writer::str);
    }
    pub fn opt_var(&mut self, v: Option<u64>) {
        self.opt(v, Writer::var);
    }
    pub fn opt_i64(&mut self, v: Option<i64>) {
        self.opt(v, Writer::i64);
    }
}

/// Bytes being read.
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data }
    }
    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// How many bytes are left to read.
    pub fn rest(&self) -> usize {
        self.data.len()
    }
    /// The next `n` bytes, as they are.
    pub fn raw(&mut self, n: usize) -> Option<&'a [u8]> {
        self.take(n)
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.data.len() {
            return None;
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Some(head)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    pub fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }
    pub fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }
    pub fn i64(&mut self) -> Option<i64> {
        self.array().map(i64::from_le_bytes)
    }
    pub fn u128(&mut self) -> Option<u128> {
        self.array().map(u128::from_le_bytes)
    }
    /// What [`Writer::var`] wrote; `None` past 64 bits.
    pub fn var(&mut self) -> Option<u64> {
        u64::try_from(self.var128()?).ok()
    }
    pub fn var128(&mut self) -> Option<u128> {
        // One byte: most values (counts, lengths, small numbers).
        if let Some((&b, rest)) = self.data.split_first() {
            if b < 0x80 {
                self.data = rest;
                return Some(u128::from(b));
            }
        }
        let mut v = 0u128;
        for shift in (0..128).step_by(7) {
            let b = self.u8()?;
            v |= u128::from(b & 0x7f).checked_shl(shift)?;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.var()?).ok()?;
        self.take(n)
    }
    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
    pub fn string(&mut self) -> Option<String> {
        self.str().map(str::to_owned)
    }
    /// What [`Writer::opt`] wrote: `Some(None)` for `None`, `None` when damaged.
    pub fn opt<T>(&mut self, f: impl FnOnce(&mut Reader<'a>) -> Option<T>) -> Option<Option<T>> {
        match self.u8()? {
            0 => Some(None),
            1 => f(self).map(Some),
            _ => None,
        }
    }
    pub fn opt_string(&mut self) -> Option<Option<String>> {
        self.opt(Reader::string)
    }
    pub fn opt_var(&mut self) -> Option<Option<u64>> {
        self.opt(Reader::var)
    }
    pub fn opt_i64(&mut self) -> Option<Option<i64>> {
        self.opt(Reader::i64)
    }
    /// A count of items, refused when the bytes left could not hold that many of at least
    /// `min_len` bytes each (a damaged count never asks for a huge allocation).
    pub fn count(&mut self, min_len: usize) -> Option<usize> {
        let n = usize::try_from(self.var()?).ok()?;
        (n.checked_mul(min_len.max(1))? <= self.data.len()).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_and_short_input_is_refused() {
        let mut w = Writer::default();
        w.u8(7);
        w.bool(true);
        w.u64(u64::MAX);
        w.i64(-5);
        w.u128(u128::MAX - 1);
        w.opt_str(Some("é"));
        w.opt_var(None);
        for v in [0, 127, 128, 300, u128::from(u64::MAX), u128::MAX] {
            w.var128(v);
        }
        let bytes = w.0;
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8(), Some(7));
        assert_eq!(r.bool(), Some(true));
        assert_eq!(r.u64(), Some(u64::MAX));
        assert_eq!(r.i64(), Some(-5));
        assert_eq!(r.u128(), Some(u128::MAX - 1));
        assert_eq!(r.opt_string(), Some(Some("é".to_string())));
        assert_eq!(r.opt_var(), Some(None));
        for v in [0, 127, 128, 300, u128::from(u64::MAX), u128::MAX] {
            assert_eq!(r.var128(), Some(v));
        }
        assert!(r.is_empty());
        for cut in 0..bytes.len() {
            let mut r = Reader::new(&bytes[..cut]);
            let all = (|| {
                r.u8()?;
                r.bool()?;
                r.u64()?;
                r.i64()?;
                r.u128()?;
                r.opt_string()?;
                r.opt_var()?;
                (0..6).map(|_| r.var128()).collect::<Option<Vec<_>>>()
            })();
            assert!(all.is_none(), "cut at {cut}");
        }
        let mut r = Reader::new(&[2]);
        assert_eq!(r.bool(), None);
        let mut w = Writer::default();
        w.var(u64::MAX);
        assert_eq!(Reader::new(&w.0).count(1), None);
        // A number of more than 128 bits, or past 64 where 64 are read, is refused.
        assert_eq!(Reader::new(&[0xff; 19]).var128(), None);
        let mut w = Writer::default();
        w.var128(u128::from(u64::MAX) + 1);
        assert_eq!(Reader::new(&w.0).var(), None);
    }
}
