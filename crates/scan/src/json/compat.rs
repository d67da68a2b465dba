//! TRANSITIONAL: the scanner's API as it was before [`Raw`], values as plain `&[u8]`, kept
//! only so the pi-jsonl crate builds until its call sites are converted to `Raw`. It goes away
//! then, with the `pub use compat::...` line of the `json` module. New code does not use it.
//!
//! The walkers here ([`get`], [`for_each_field`], [`for_each_element`]) trust their input to
//! be validated and cannot check it: exactly the hole `Raw` closes. Each function is the new
//! one under its old signature, with no work added.
//!
//! [`Raw`]: super::Raw

use super::raw::{each_element, each_field, last_member};
use super::{object_members, Error, Member};

/// Was `json::scan_object`: [`scan_members`](super::scan_members) with the value as bytes,
/// returning the index past `}`.
#[inline]
pub fn scan_object<'a>(
    b: &'a [u8],
    i: usize,
    mut f: impl FnMut(&'a [u8], &'a [u8]),
) -> Result<usize, Error> {
    object_members(b, i, 0, &|_: &[u8]| false, &mut |_, k, v: &'a [u8]| f(k, v))
}

/// Was `json::scan_object_nested`: [`scan_members_nested`](super::scan_members_nested) with
/// the value as bytes, returning the index past `}`.
#[inline]
pub fn scan_object_nested<'a>(
    b: &'a [u8],
    i: usize,
    open: impl Fn(&[u8]) -> bool,
    mut f: impl FnMut(Member, &'a [u8], &'a [u8]),
) -> Result<usize, Error> {
    object_members(b, i, 0, &open, &mut f)
}

/// Was `json::for_each_element`: now [`Raw::for_each_element`](super::Raw::for_each_element).
/// `raw` must be validated text.
pub fn for_each_element<'a>(raw: &'a [u8], f: impl FnMut(&'a [u8])) {
    each_element(raw, f);
}

/// Was `json::for_each_field`: now [`Raw::for_each_field`](super::Raw::for_each_field).
/// `raw` must be validated text.
pub fn for_each_field<'a>(raw: &'a [u8], f: impl FnMut(&'a [u8], &'a [u8])) {
    each_field(raw, f);
}

/// Was `json::get`: now [`Raw::get`](super::Raw::get). `raw` must be validated text.
#[inline]
pub fn get<'a>(raw: &'a [u8], key: &str) -> Option<&'a [u8]> {
    last_member(raw, key)
}
