//! The crate's one error type (STYLE.md "One error model").
//!
//! Every failure is a caller mistake in the shape of the pixel buffer, so every
//! variant maps to the stable code `INVALID_ARGUMENT` (docs/format.md section 11).
//! Variants carry only dimensions and lengths, never pixel data or key material.

use core::fmt;

/// Why a call was refused. Nothing is modified when an error is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `width` is zero, or `height` is zero for a whole-image call.
    ZeroDimension {
        /// The width that was passed.
        width: u32,
        /// The height that was passed (or implied by the buffer).
        height: u32,
    },
    /// The buffer length is not a whole number of `width * 4`-byte rows, or
    /// not `width * height * 4` for a whole-image call.
    BadLength {
        /// Length of the buffer that was passed, in bytes.
        len: usize,
        /// Bytes per row (`width * 4`).
        row_bytes: usize,
    },
    /// `width * 4` or `width * height * 4` does not fit in `usize`, or the
    /// band runs past row index `u32::MAX`.
    TooLarge {
        /// The width that was passed.
        width: u32,
        /// The height, or `first_row` + the band's row count, that overflowed.
        rows: u64,
    },
}

impl Error {
    /// The stable error code. Always `INVALID_ARGUMENT` in this crate.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::ZeroDimension { .. } | Self::BadLength { .. } | Self::TooLarge { .. } => {
                "INVALID_ARGUMENT"
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroDimension { width, height } => {
                write!(f, "image dimensions must be non-zero (width {width}, height {height})")
            }
            Self::BadLength { len, row_bytes } => write!(
                f,
                "pixel buffer of {len} bytes does not match the dimensions ({row_bytes} bytes per row)"
            ),
            Self::TooLarge { width, rows } => {
                write!(f, "image too large to address (width {width}, rows {rows})")
            }
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_the_stable_code_and_a_lowercase_message() {
        let all = [
            Error::ZeroDimension {
                width: 0,
                height: 1,
            },
            Error::BadLength {
                len: 3,
                row_bytes: 4,
            },
            Error::TooLarge {
                width: 1,
                rows: 1 << 33,
            },
        ];
        for e in all {
            assert_eq!(e.code(), "INVALID_ARGUMENT");
            let msg = e.to_string();
            assert!(msg.starts_with(|c: char| c.is_ascii_lowercase()), "{msg}");
        }
    }
}
