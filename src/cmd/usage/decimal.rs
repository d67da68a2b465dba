//! Exact decimal money: a JSON number's text as an exact decimal [`Cost`], and exact sums of
//! them ([`Amount`]).
//!
//! Costs are summed as integers, so sums are exact and associative: grouping or splitting the
//! input never changes a total, and 0.1 + 0.2 is 0.3. The common cost (at most 18 decimals)
//! is a count of 10^-18 dollars; a cost written with more decimals (`1e-19`, or a float's long
//! tail such as `0.0010530000000000001`) is kept exactly as a finer decimal, so ten costs of
//! 1e-19 add up to 1e-18, not to 0 (issue 19, item 11).

use num_bigint::BigUint;

/// Fractional digits of the common fixed-point cost: 10^-18 dollars.
const SCALE: u32 = 18;
const ONE: u128 = 1_000_000_000_000_000_000;

/// The most decimal places a cost may need (`1e-1000` is the smallest cost counted); a finer
/// one is out of range. It bounds the work and memory one number can ask for.
pub const MAX_PLACES: u32 = 1000;

/// The most digits a cost may have before its decimal point. A cost is at most u128::MAX units
/// of 10^-18 dollars (about 3.4 * 10^20 dollars), so that the sum of u64::MAX of them fits an
/// [`Amount`].
const MAX_WHOLE_DIGITS: i64 = 21;

/// A recorded cost, exactly as its text says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cost {
    /// A whole number of 10^-18 dollars: the common cost, at most 18 decimals.
    Units(u128),
    /// A cost with more than 18 decimals.
    Fine(Box<Fine>),
}

impl Cost {
    /// Number text that [`parse_cost`] reads back as this very cost (pi-usage's cache keeps a
    /// cost so).
    pub fn to_text(&self) -> String {
        match self {
            Cost::Units(v) => format!("{v}e-{SCALE}"),
            Cost::Fine(f) => format!("{}e-{}", f.units, f.places),
        }
    }
}

/// `units` * 10^-`places` dollars, `places` above 18.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fine {
    units: BigUint,
    places: u32,
}

impl Fine {
    /// The same value at `places` (at least its own).
    fn at(&self, places: u32) -> BigUint {
        let shift = places - self.places;
        match POW10.get(shift as usize) {
            // Up to 18 places finer (the usual step between two floats' tails): one product by
            // a machine word, no power of ten made first.
            Some(&p) => &self.units * p,
            None => &self.units * BigUint::from(10u32).pow(shift),
        }
    }
}

/// Why a number is not a cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotACost {
    /// Not a JSON number.
    NotANumber,
    /// Below zero.
    Negative,
    /// Above u128::MAX units of 10^-18 dollars (about 3.4 * 10^20 dollars), or finer than
    /// 10^-[`MAX_PLACES`].
    OutOfRange,
}

/// 10^0 ..= 10^18.
const POW10: [u64; SCALE as usize + 1] = {
    let mut p = [1u64; SCALE as usize + 1];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// A JSON number's text as an exact [`Cost`].
pub fn parse_cost(raw: &[u8]) -> Result<Cost, NotACost> {
    match plain_cost(raw) {
        Some(r) => r,
        None => general_cost(raw),
    }
}

/// [`parse_cost`] of the common form, at most 18 integer digits and 18 decimals without an
/// exponent (`0.0123`, `12`): the digits are the result. `None` for anything else.
fn plain_cost(raw: &[u8]) -> Option<Result<Cost, NotACost>> {
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
    // At most 18 digits each: read as a u64 (10^18 - 1 < 2^63), widened once, and the
    // decimals scaled by a power of ten from a table (u128 steps cost three multiplies).
    let digits = |d: &[u8]| d.iter().fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'));
    let scale = u128::from(POW10[SCALE as usize - frac.len()]);
    let v = u128::from(digits(int)) * ONE + u128::from(digits(frac)) * scale;
    Some(if neg && v != 0 {
        Err(NotACost::Negative)
    } else {
        Ok(Cost::Units(v))
    })
}

/// [`parse_cost`] of any JSON number: exponents, more than 18 decimals.
fn general_cost(raw: &[u8]) -> Result<Cost, NotACost> {
    let s = std::str::from_utf8(raw).map_err(|_| NotACost::NotANumber)?;
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => {
            let e = &s[i + 1..];
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return Err(NotACost::NotANumber);
            }
            // An exponent too long for an i64 is far out of range either way.
            (&s[..i], e.parse::<i64>().map_err(|_| NotACost::OutOfRange)?)
        }
        None => (s, 0),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    let ascii_digits = |d: &str| d.bytes().all(|c| c.is_ascii_digit());
    if int.is_empty() || !ascii_digits(int) || !ascii_digits(frac) {
        return Err(NotACost::NotANumber);
    }
    if mant.contains('.') && frac.is_empty() {
        return Err(NotACost::NotANumber);
    }
    // The value is `digits` * 10^-`places`, without leading or trailing zeros.
    let all: String = int.chars().chain(frac.chars()).collect();
    let digits = all.trim_start_matches('0');
    let kept = digits.trim_end_matches('0');
    if kept.is_empty() {
        return Ok(Cost::Units(0));
    }
    if neg {
        return Err(NotACost::Negative);
    }
    let zeros = (digits.len() - kept.len()) as i64;
    let places = (frac.len() as i64)
        .checked_sub(exp)
        .and_then(|p| p.checked_sub(zeros))
        .ok_or(NotACost::OutOfRange)?;
    let whole_digits = kept.len() as i64 - places;
    if whole_digits > MAX_WHOLE_DIGITS || places > i64::from(MAX_PLACES) {
        return Err(NotACost::OutOfRange);
    }
    if places <= i64::from(SCALE) {
        let v: u128 = kept.parse().map_err(|_| NotACost::OutOfRange)?;
        // `places` is negative for a whole number written with an exponent (`1e3`): the
        // shift is then more than SCALE places, so it is computed in i64, then checked.
        let shift = u32::try_from(i64::from(SCALE) - places).map_err(|_| NotACost::OutOfRange)?;
        let scaled = 10u128.checked_pow(shift).and_then(|m| v.checked_mul(m));
        return scaled.map(Cost::Units).ok_or(NotACost::OutOfRange);
    }
    let units = BigUint::parse_bytes(kept.as_bytes(), 10).ok_or(NotACost::NotANumber)?;
    Ok(Cost::Fine(Box::new(Fine {
        units,
        places: places as u32,
    })))
}

/// A sum of costs, exact. The common part is a count of 10^-18 dollars in 192 bits, `hi` *
/// 2^128 + `lo`: a sum of at most u64::MAX values each below 2^128 (a count of calls is a u64)
/// cannot overflow it, so it never clamps and never wraps (issue 19, item 2). Costs with more
/// decimals are summed apart, in `fine`, at the finest of their places.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Amount {
    lo: u128,
    hi: u64,
    fine: Option<Box<Fine>>,
}

impl Amount {
    /// Adds the cost `c`.
    #[inline]
    pub fn add(&mut self, c: &Cost) {
        match c {
            Cost::Units(v) => self.add_units(*v),
            Cost::Fine(f) => self.add_fine(f),
        }
    }

    /// Adds `v` units of 10^-18 dollars.
    #[inline]
    fn add_units(&mut self, v: u128) {
        let (lo, carry) = self.lo.overflowing_add(v);
        self.lo = lo;
        self.hi += u64::from(carry);
    }

    /// Adds the finer cost `f`.
    fn add_fine(&mut self, f: &Fine) {
        match &mut self.fine {
            None => self.fine = Some(Box::new(f.clone())),
            Some(sum) => {
                if f.places > sum.places {
                    sum.units = sum.at(f.places);
                    sum.places = f.places;
                }
                // At the same places: added in place, with no product made first.
                if f.places == sum.places {
                    sum.units += &f.units;
                } else {
                    sum.units += f.at(sum.places);
                }
            }
        }
    }

    /// The sum's parts, as pi-usage's cache keeps it: the common part (`lo`, `hi`) and the
    /// finer one (its places, its units as little-endian bytes).
    pub fn to_parts(&self) -> (u128, u64, Option<(u32, Vec<u8>)>) {
        let fine = (self.fine.as_ref()).map(|f| (f.places, f.units.to_bytes_le()));
        (self.lo, self.hi, fine)
    }

    /// The sum [`Amount::to_parts`] gave; `None` when the finer part is out of range.
    pub fn from_parts(lo: u128, hi: u64, fine: Option<(u32, &[u8])>) -> Option<Amount> {
        let fine = match fine {
            None => None,
            Some((places, units)) => {
                (SCALE < places && places <= MAX_PLACES).then_some(())?;
                let units = BigUint::from_bytes_le(units);
                Some(Box::new(Fine { units, places }))
            }
        };
        Some(Amount { lo, hi, fine })
    }

    /// Adds the sum `o`.
    pub fn merge(&mut self, o: &Amount) {
        self.add_units(o.lo);
        self.hi += o.hi;
        if let Some(f) = &o.fine {
            self.add_fine(f);
        }
    }

    /// The common part alone, as one integer.
    fn units(&self) -> BigUint {
        (BigUint::from(self.hi) << 128u32) + BigUint::from(self.lo)
    }

    /// The whole sum as `units` * 10^-`places`.
    fn exact(&self) -> (BigUint, u32) {
        match &self.fine {
            None => (self.units(), SCALE),
            Some(f) => {
                let common = self.units() * BigUint::from(10u32).pow(f.places - SCALE);
                (common + &f.units, f.places)
            }
        }
    }

    /// Rounded half to even to units of 10^-`places` dollars (`places` at most 18): the count
    /// of those units, as decimal digits.
    pub fn rounded(&self, places: u32) -> String {
        let (v, at) = self.exact();
        let unit = BigUint::from(10u32).pow(at - places);
        let (mut q, r) = (&v / &unit, &v % &unit);
        let twice = r * 2u32;
        if twice > unit || (twice == unit && q.bit(0)) {
            q += 1u32;
        }
        q.to_string()
    }
}

/// The exact sum as decimal text without trailing zeros (`0.00835896`, `12`).
pub fn format_decimal(v: &Amount) -> String {
    let (units, places) = v.exact();
    let digits = units.to_string();
    let places = places as usize;
    let cut = digits.len().saturating_sub(places);
    let int = if cut == 0 { "0" } else { &digits[..cut] };
    let frac = format!("{:0>places$}", &digits[cut..]);
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
    fn a_cost_written_as_text_reads_back_the_same() {
        for text in [
            "0",
            "0.0123",
            "1e-19",
            "0.0010530000000000001",
            "340282366920938463463.374607431768211455",
            "12e3",
        ] {
            let c = parse_cost(text.as_bytes()).unwrap();
            assert_eq!(parse_cost(c.to_text().as_bytes()), Ok(c), "{text}");
        }
    }

    fn units(v: u128) -> Result<Cost, NotACost> {
        Ok(Cost::Units(v))
    }

    fn text(costs: &[&str]) -> String {
        let mut a = Amount::default();
        for c in costs {
            a.add(&parse_cost(c.as_bytes()).unwrap());
        }
        format_decimal(&a)
    }

    #[test]
    fn costs_parse_exactly() {
        let p = |s: &str| parse_cost(s.as_bytes());
        assert_eq!(p("0"), units(0));
        assert_eq!(p("-0"), units(0));
        assert_eq!(p("-0.0e5"), units(0));
        assert_eq!(p("1"), units(ONE));
        assert_eq!(p("0.00835896"), units(8_358_960_000_000_000));
        assert_eq!(p("1.5e-7"), units(150_000_000_000));
        assert_eq!(p("1.5E+2"), units(150 * ONE));
        assert_eq!(p("1500e-1"), units(150 * ONE));
        assert_eq!(p("-0.25"), Err(NotACost::Negative));
        assert_eq!(p("-1e-30"), Err(NotACost::Negative));
        assert_eq!(p("1e20"), units(100_000_000_000_000_000_000 * ONE));
        assert_eq!(p("4e20"), Err(NotACost::OutOfRange));
        assert_eq!(p("1e400"), Err(NotACost::OutOfRange));
        assert_eq!(p("1e-1001"), Err(NotACost::OutOfRange));
        assert_eq!(p("1e99999999999999999999"), Err(NotACost::OutOfRange));
        assert_eq!(
            p("123456789012345678901234567890123456789012"),
            Err(NotACost::OutOfRange)
        );
        assert_eq!(p("\"1\""), Err(NotACost::NotANumber));
        assert_eq!(p("1."), Err(NotACost::NotANumber));
        assert_eq!(p(".5"), Err(NotACost::NotANumber));
        assert_eq!(p("1e"), Err(NotACost::NotANumber));
        // Beyond 18 places: exact, never rounded.
        assert_eq!(text(&["0.0000000000000000015"]), "0.0000000000000000015");
        assert_eq!(text(&["1e-1000"]), format!("0.{}1", "0".repeat(999)));
        assert_eq!(text(&["0.0010530000000000001"]), "0.0010530000000000001");
    }

    #[test]
    fn the_plain_path_agrees_with_the_general_one() {
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
            if let Some(fast) = plain_cost(s.as_bytes()) {
                plain += 1;
                assert_eq!(fast, general_cost(s.as_bytes()), "{s}");
            }
        }
        assert!(plain > 5_000, "{plain} plain decimals");
        // The longest plain runs (18 digits, read as a u64), at every split of the decimals.
        let nines = "9".repeat(18);
        for frac in 0..=18 {
            let s = match frac {
                0 => nines.clone(),
                _ => format!("{nines}.{}", &nines[..frac]),
            };
            assert_eq!(
                plain_cost(s.as_bytes()),
                Some(general_cost(s.as_bytes())),
                "{s}"
            );
            let s = format!("0.{}1", "0".repeat(frac.min(17)));
            assert_eq!(
                plain_cost(s.as_bytes()),
                Some(general_cost(s.as_bytes())),
                "{s}"
            );
        }
    }

    #[test]
    fn decimal_sums_are_associative() {
        // 0.1 + 0.2 in floating point is 0.30000000000000004; here it is 0.3 whatever the order.
        let v = [
            "0.1",
            "0.2",
            "0.3",
            "0.00000001",
            "1e-9",
            "3e-25",
            "0.0000000000000000000012",
        ];
        let mut rev = v;
        rev.reverse();
        assert_eq!(text(&v), "0.6000000110000000000012003");
        assert_eq!(text(&rev), text(&v));
        assert_eq!(text(&[]), "0");
        assert_eq!(text(&["12"]), "12");
    }

    /// Issue 19, item 11: ten costs of 1e-19 sum to 1e-18 (they summed to 0).
    #[test]
    fn item_11_tiny_costs_add_up() {
        assert_eq!(text(&["1e-19"; 10]), "0.000000000000000001");
        let mut a = Amount::default();
        let tiny = parse_cost(b"1e-19").unwrap();
        for _ in 0..5 {
            a.add(&tiny);
        }
        let mut b = a.clone();
        b.merge(&a);
        b.add(&Cost::Units(ONE));
        assert_eq!(format_decimal(&b), "1.000000000000000001");
        assert_eq!(b.rounded(18), "1000000000000000001");
        assert_eq!(b.rounded(0), "1");
        // Sums at other places merged both ways: the coarser onto the finer, then back.
        let mut c = Amount::default();
        c.add(&parse_cost(b"3e-25").unwrap());
        c.merge(&a);
        assert_eq!(format_decimal(&c), "0.0000000000000000005000003");
        a.merge(&c);
        assert_eq!(format_decimal(&a), "0.0000000000000000010000003");
    }

    /// Issue 19, item 2: cost sums are exact past i128::MAX (they saturated there).
    #[test]
    fn item_2_cost_sums_never_saturate() {
        let mut a = Amount::default();
        let big = Cost::Units(i128::MAX as u128);
        for _ in 0..4 {
            a.add(&big);
        }
        // 4 * (2^127 - 1) = 2^129 - 4.
        assert_eq!(a.rounded(18), "680564733841876926926749214863536422908");
        assert_eq!(
            format_decimal(&a),
            "680564733841876926926.749214863536422908"
        );
        let mut b = a.clone();
        b.merge(&a);
        assert_eq!(b.rounded(18), "1361129467683753853853498429727072845816");
        assert_eq!(b.rounded(17), "136112946768375385385349842972707284582");
    }
}
