//! The records the tools write: each is a type that knows its `type`, the fields it can write
//! and how to write itself. [`crate::records`] lists them all, and the docs test checks that
//! docs/FORMAT.md describes exactly those fields.

use crate::output::{Obj, Out, Stop};

/// One kind of output record.
pub trait Record {
    /// The record's `type`, written as its first key.
    const TYPE: &'static str;
    /// Every field it can write, as docs/FORMAT.md names them: a member of a nested object
    /// as `object.member` (a map of arbitrary keys is one field).
    const FIELDS: &'static [&'static str];

    /// Writes the fields that follow `type`.
    fn write_fields(&self, o: &mut Obj<'_>);

    /// Appends the whole record, without a newline, to `buf`.
    fn write_to(&self, buf: &mut Vec<u8>) {
        let mut o = Obj::new(buf, Self::TYPE);
        self.write_fields(&mut o);
        o.end();
    }

    /// Writes the record as one output line.
    fn write(&self, out: &mut Out) -> Result<(), Stop> {
        self.write_to(&mut out.buf);
        out.end_line()
    }
}

/// A record type as the docs test sees it: its `type` and its fields.
#[derive(Debug, Clone, Copy)]
pub struct Described {
    pub type_name: &'static str,
    pub fields: &'static [&'static str],
}

/// The description of record type `R`.
pub const fn describe<R: Record>() -> Described {
    Described {
        type_name: R::TYPE,
        fields: R::FIELDS,
    }
}
