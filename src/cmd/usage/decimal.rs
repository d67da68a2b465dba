//! Exact decimal money: a JSON number's text as an integer of 10^-18 dollars, and back.
//!
//! Costs are summed as these integers, so sums are exact and associative: grouping or
//! splitting the input never changes a total, and 0.1 + 0.2 is 0.3.

/// Fractional digits of the fixed-point cost: 10^-18 dollars.
const SCALE: u32 = 18;
const ONE: i128 = 1_000_000_000_000_000_000;

/// A JSON number's text as a fixed-point integer of 10^-18, rounded half to even beyond that;
/// `None` when it is not a number or is too large.
pub fn parse_decimal(raw: &[u8]) -> Option<i128> {
    plain_decimal(raw).or_else(|| general_decimal(raw))
}

/// [`parse_decimal`] of the common form, at most 18 integer digits and 18 decimals without an
/// exponent (`0.0123`, `12`): no rounding, the digits are the result. `None` for anything else.
fn plain_decimal(raw: &[u8]) -> Option<i128> {
    let (neg, s) = match raw.split_first() {
        Some((b'-', r)) => (true, r),
        _ => (false, raw),
    };
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &[][..]),
    };
    let plain = |d: &[u8], max: usize| d.len() <= max && d.iter().all(u8::is_ascii_digit);
    if int.is_empty() || !plain(int, 18) || !plain(frac, SCALE as usize) {
        return None;
    }
    if frac.is_empty() && s.len() != int.len() {
        return None; // "1."
    }
    let digits = |d: &[u8]| d.iter().fold(0i128, |v, &c| v * 10 + i128::from(c - b'0'));
    let v = digits(int) * ONE + digits(frac) * 10i128.pow(SCALE - frac.len() as u32);
    Some(if neg { -v } else { v })
}

/// [`parse_decimal`] of any JSON number: exponents, more than 18 decimals, rounding.
fn general_decimal(raw: &[u8]) -> Option<i128> {
    let s = std::str::from_utf8(raw).ok()?;
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i64>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int.is_empty() || !int.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|c| c.is_ascii_digit()) || (mant.contains('.') && frac.is_empty()) {
        return None;
    }
    let all: String = int.chars().chain(frac.chars()).collect();
    let digits = all.trim_start_matches('0');
    let mut shift = exp
        .checked_sub(frac.len() as i64)?
        .checked_add(i64::from(SCALE))?;
    if digits.is_empty() {
        return Some(0);
    }
    // At most 36 significant digits fit with room to spare; JavaScript writes at most 17.
    let (kept, round_up) = if digits.len() > 36 {
        shift += (digits.len() - 36) as i64;
        (&digits[..36], digits.as_bytes()[36] >= b'5')
    } else {
        (digits, false)
    };
    let mut v: i128 = kept.parse().ok()?;
    if round_up {
        v += 1;
    }
    if shift >= 0 {
        if shift > 38 {
            return None;
        }
        v = v.checked_mul(10i128.checked_pow(shift as u32)?)?;
    } else if shift < -38 {
        v = 0;
    } else {
        let p = 10i128.pow((-shift) as u32);
        let (q, r) = (v / p, v % p);
        v = if 2 * r > p || (2 * r == p && q % 2 == 1) {
            q + 1
        } else {
            q
        };
    }
    Some(if neg { -v } else { v })
}

/// A sum of non-negative fixed-point costs (10^-18 dollars), exact: 192 bits, `hi` * 2^128 +
/// `lo`. A sum of at most u64::MAX values each below 2^128 (a count of calls is a u64) cannot
/// overflow it, so it never clamps and never wraps (issue 19, item 2).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Amount {
    lo: u128,
    hi: u64,
}

impl Amount {
    /// Adds `v`.
    #[inline]
    pub fn add(&mut self, v: u128) {
        let (lo, carry) = self.lo.overflowing_add(v);
        self.lo = lo;
        self.hi += u64::from(carry);
    }

    /// Adds the sum `o`.
    pub fn merge(&mut self, o: Amount) {
        self.add(o.lo);
        self.hi += o.hi;
    }

    /// `self / d` and `self % d`.
    fn div_rem(self, d: u64) -> (Amount, u64) {
        let limbs = [self.hi, (self.lo >> 64) as u64, self.lo as u64];
        let (mut q, mut r) = ([0u64; 3], 0u128);
        for (i, l) in limbs.iter().enumerate() {
            let cur = (r << 64) | u128::from(*l);
            q[i] = (cur / u128::from(d)) as u64;
            r = cur % u128::from(d);
        }
        let lo = (u128::from(q[1]) << 64) | u128::from(q[2]);
        (Amount { lo, hi: q[0] }, r as u64)
    }

    /// The integer (in units of 10^-18 dollars) as decimal digits.
    pub fn digits(self) -> String {
        if self.hi == 0 {
            return self.lo.to_string();
        }
        let (mut rest, mut chunks) = (self, Vec::new());
        while rest.hi != 0 {
            let (q, r) = rest.div_rem(10_000_000_000_000_000_000);
            chunks.push(r);
            rest = q;
        }
        let mut s = rest.lo.to_string();
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:019}"));
        }
        s
    }

    /// Rounded half to even to units of 10^-`places` dollars (`places` at most 18): the count
    /// of those units.
    pub fn rounded(self, places: u32) -> Amount {
        let unit = 10u64.pow(SCALE - places);
        let (mut q, r) = self.div_rem(unit);
        if 2 * u128::from(r) > u128::from(unit)
            || (2 * u128::from(r) == u128::from(unit) && q.lo % 2 == 1)
        {
            q.add(1);
        }
        q
    }

    /// `self / d` and `self % d` of a small `d`.
    pub fn split(self, d: u64) -> (Amount, u64) {
        self.div_rem(d)
    }
}

/// The exact sum as decimal text without trailing zeros (`0.00835896`, `12`).
pub fn format_decimal(v: Amount) -> String {
    let digits = v.digits();
    let cut = digits.len().saturating_sub(SCALE as usize);
    let int = if cut == 0 { "0" } else { &digits[..cut] };
    let frac = format!("{:0>18}", &digits[cut..]);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_exactly() {
        let p = |s: &str| parse_decimal(s.as_bytes());
        assert_eq!(p("0"), Some(0));
        assert_eq!(p("1"), Some(ONE));
        assert_eq!(p("0.00835896"), Some(8_358_960_000_000_000));
        assert_eq!(p("1.5e-7"), Some(150_000_000_000));
        assert_eq!(p("1.5E+2"), Some(150 * ONE));
        assert_eq!(p("-0.25"), Some(-ONE / 4));
        // Beyond 18 places: rounded half to even.
        assert_eq!(p("0.0000000000000000015"), Some(2));
        assert_eq!(p("0.0000000000000000025"), Some(2));
        assert_eq!(p("0.00000000000000000251"), Some(3));
        assert_eq!(p("1e-400"), Some(0));
        assert_eq!(p("1e400"), None);
        assert_eq!(p("\"1\""), None);
        assert_eq!(p("1."), None);
        assert_eq!(p(".5"), None);
        assert_eq!(p("123456789012345678901234567890123456789012"), None);
    }

    #[test]
    fn the_plain_decimal_path_agrees_with_the_general_one() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut plain = 0;
        for _ in 0..20_000 {
            let mut s = String::new();
            if next(4) == 0 {
                s.push('-');
            }
            for _ in 0..=next(21) {
                s.push(char::from(b'0' + next(10) as u8));
            }
            if next(3) != 0 {
                s.push('.');
                for _ in 0..next(22) {
                    s.push(char::from(b'0' + next(10) as u8));
                }
            }
            let fast = plain_decimal(s.as_bytes());
            if fast.is_some() {
                plain += 1;
                assert_eq!(fast, general_decimal(s.as_bytes()), "{s}");
            }
        }
        assert!(plain > 5_000, "{plain} plain decimals");
    }

    #[test]
    fn decimal_sums_are_associative() {
        // 0.1 + 0.2 in floating point is 0.30000000000000004; here it is 0.3 whatever the order.
        let v: Vec<i128> = ["0.1", "0.2", "0.3", "0.00000001", "1e-9"]
            .iter()
            .map(|s| parse_decimal(s.as_bytes()).unwrap())
            .collect();
        let sum = |v: &mut dyn Iterator<Item = &i128>| {
            let mut a = Amount::default();
            v.for_each(|c| a.add(*c as u128));
            a
        };
        let a = sum(&mut v.iter());
        assert_eq!(a, sum(&mut v.iter().rev()));
        assert_eq!(format_decimal(a), "0.600000011");
        assert_eq!(format_decimal(Amount::default()), "0");
        let mut twelve = Amount::default();
        twelve.add(12 * ONE as u128);
        assert_eq!(format_decimal(twelve), "12");
    }

    /// Issue 19, item 2: cost sums are exact past i128::MAX (they saturated there).
    #[test]
    fn item_2_cost_sums_never_saturate() {
        let mut a = Amount::default();
        let big = i128::MAX as u128;
        for _ in 0..4 {
            a.add(big);
        }
        // 4 * (2^127 - 1) = 2^129 - 4.
        let want = "680564733841876926926749214863536422908";
        assert_eq!(a.digits(), want);
        assert_eq!(
            format_decimal(a),
            "680564733841876926926.749214863536422908"
        );
        let mut b = a;
        b.merge(a);
        assert_eq!(b.digits(), "1361129467683753853853498429727072845816");
        assert_eq!(b.split(10).1, 6);
    }
}
