//! The crate's one error type (STYLE.md "One error model").
//!
//! Container and crypto failures pass through with their own stable codes
//! (docs/format.md section 11): a tampered master is `DECRYPT_FAILED` or `BAD_SIGNATURE`, a
//! low-order player key `WEAK_KEY`, exactly as `iki-format` reports them. This crate adds the
//! codes of its own rules: `NOT_A_MASTER`, `MASTER_MISMATCH`, `IMAGE_DECODE_FAILED` and
//! `IMAGE_TOO_LARGE`. Variants carry only non-secret context (a reason, dimensions); no
//! key, key-derived byte or plaintext is ever placed in an error.

use core::fmt;

/// Everything that can go wrong in `iki-license`.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A container or crypto error, passed through with its own code (`DECRYPT_FAILED`,
    /// `BAD_SIGNATURE`, `WEAK_KEY`, `TRUNCATED`, `WRONG_KIND`, `LIMIT_EXCEEDED`, ...).
    Format(iki_format::Error),
    /// `NOT_A_MASTER`: a sound container that is not a master for this service (wrong role,
    /// no recipient slot for this service's key, not encrypted).
    NotAMaster {
        /// Which rule the file breaks.
        reason: &'static str,
    },
    /// `MASTER_MISMATCH`: the master's bytes are not the ones recorded (SHA-256 differs).
    MasterMismatch {
        /// What differs.
        reason: &'static str,
    },
    /// `IMAGE_DECODE_FAILED`: not a PNG, JPEG or WebP image, or a damaged one.
    ImageDecodeFailed {
        /// Why the image could not be decoded.
        reason: &'static str,
    },
    /// `IMAGE_TOO_LARGE`: the image's dimensions (read from its header, before decoding)
    /// exceed the [`crate::ImageBound`] it was decoded within (at most
    /// [`crate::MAX_IMAGE_SIDE_PX`] a side and [`crate::MAX_IMAGE_RGBA_BYTES`] of RGBA8), or
    /// decoding it would allocate beyond that bound (a 16-bit image needs twice the bytes).
    ImageTooLarge {
        /// Width from the header, in pixels.
        width: u32,
        /// Height from the header, in pixels.
        height: u32,
        /// The bound's largest side, in pixels.
        max_side_px: u32,
        /// The bound's largest area, in pixels.
        max_pixels: u64,
    },
    /// `INVALID_ARGUMENT`: a caller passed a value the API does not accept.
    InvalidArgument {
        /// Which value and why.
        reason: &'static str,
    },
    /// `INVALID_STATE`: an API was called out of order (for example a second
    /// `accept_license_key`).
    InvalidState {
        /// Which call.
        reason: &'static str,
    },
}

/// The codes this crate adds to docs/format.md section 11.
pub const OWN_CODES: &[&str] = &[
    "NOT_A_MASTER",
    "MASTER_MISMATCH",
    "IMAGE_DECODE_FAILED",
    "IMAGE_TOO_LARGE",
];

impl Error {
    /// The stable SCREAMING_SNAKE code of this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Format(e) => e.code(),
            Self::NotAMaster { .. } => "NOT_A_MASTER",
            Self::MasterMismatch { .. } => "MASTER_MISMATCH",
            Self::ImageDecodeFailed { .. } => "IMAGE_DECODE_FAILED",
            Self::ImageTooLarge { .. } => "IMAGE_TOO_LARGE",
            Self::InvalidArgument { .. } => "INVALID_ARGUMENT",
            Self::InvalidState { .. } => "INVALID_STATE",
        }
    }

    /// Small `(key, value)` details for the WASM adapter's `details` object (camelCase keys,
    /// non-secret values), in the manner of `iki_format::Error::details`.
    #[must_use]
    pub fn details(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Format(e) => e.details(),
            Self::NotAMaster { reason }
            | Self::MasterMismatch { reason }
            | Self::ImageDecodeFailed { reason }
            | Self::InvalidArgument { reason }
            | Self::InvalidState { reason } => vec![("reason", (*reason).to_owned())],
            Self::ImageTooLarge {
                width,
                height,
                max_side_px,
                max_pixels,
            } => vec![
                ("width", width.to_string()),
                ("height", height.to_string()),
                ("maxSide", max_side_px.to_string()),
                ("maxPixels", max_pixels.to_string()),
            ],
        }
    }

    pub(crate) fn argument(reason: &'static str) -> Self {
        Self::InvalidArgument { reason }
    }

    pub(crate) fn state(reason: &'static str) -> Self {
        Self::InvalidState { reason }
    }

    pub(crate) fn not_master(reason: &'static str) -> Self {
        Self::NotAMaster { reason }
    }
}

/// The first error of a stream, answered again to every later call: a master or a copy
/// cannot be resumed after a failure (as in `iki_format::Reader`).
#[derive(Default)]
pub(crate) struct Latch(Option<Error>);

impl Latch {
    /// The latched error, if any.
    pub(crate) fn check(&self) -> Result<(), Error> {
        self.0.as_ref().map_or(Ok(()), |e| Err(e.clone()))
    }

    /// Latches `result`'s error, if it is one, and passes `result` on.
    pub(crate) fn record<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(e) = &result {
            self.0 = Some(e.clone());
        }
        result
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Format(e) => e.fmt(f),
            Self::NotAMaster { reason } => write!(f, "not a master for this service: {reason}"),
            Self::MasterMismatch { reason } => write!(f, "master does not match its record: {reason}"),
            Self::ImageDecodeFailed { reason } => write!(f, "image could not be decoded: {reason}"),
            Self::ImageTooLarge { width, height, max_side_px, max_pixels } => write!(
                f,
                "image of {width} x {height} pixels is beyond the limit of {max_side_px} pixels a side \
                 and {max_pixels} pixels in all"
            ),
            Self::InvalidArgument { reason } => write!(f, "invalid argument: {reason}"),
            Self::InvalidState { reason } => write!(f, "invalid state: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<iki_format::Error> for Error {
    fn from(error: iki_format::Error) -> Self {
        Self::Format(error)
    }
}

impl From<iki_crypto::Error> for Error {
    /// Through `iki-format`'s conversion, so both crates agree on every shared code.
    fn from(error: iki_crypto::Error) -> Self {
        Self::Format(error.into())
    }
}

impl From<iki_watermark::Error> for Error {
    /// Every watermark error is a pixel buffer that does not match its dimensions.
    fn from(_: iki_watermark::Error) -> Self {
        Self::argument("pixel buffer does not match its dimensions")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_pass_through_and_messages_are_lowercase() {
        let all = [
            (
                Error::from(iki_crypto::Error::DecryptFailed),
                "DECRYPT_FAILED",
            ),
            (Error::from(iki_crypto::Error::WeakKey), "WEAK_KEY"),
            (Error::from(iki_format::Error::Truncated), "TRUNCATED"),
            (Error::not_master("role"), "NOT_A_MASTER"),
            (
                Error::MasterMismatch { reason: "sha256" },
                "MASTER_MISMATCH",
            ),
            (
                Error::ImageDecodeFailed { reason: "format" },
                "IMAGE_DECODE_FAILED",
            ),
            (
                Error::ImageTooLarge {
                    width: 1,
                    height: 2,
                    max_side_px: 1,
                    max_pixels: 1,
                },
                "IMAGE_TOO_LARGE",
            ),
            (Error::argument("x"), "INVALID_ARGUMENT"),
            (Error::state("x"), "INVALID_STATE"),
        ];
        for (error, code) in all {
            assert_eq!(error.code(), code);
            let message = error.to_string();
            assert!(
                message.starts_with(|c: char| c.is_ascii_lowercase()),
                "{message}"
            );
        }
        for code in OWN_CODES {
            assert!(!iki_format::error::ALL_CODES.contains(code), "{code}");
        }
    }

    #[test]
    fn details_pass_through_and_name_the_limit() {
        let limit = iki_format::Error::LimitExceeded {
            limit: "MAX_KEY_SLOTS",
            value: 65,
            max: 64,
        };
        assert_eq!(Error::from(limit.clone()).details(), limit.details());
        let details = Error::ImageTooLarge {
            width: 16385,
            height: 1,
            max_side_px: 16384,
            max_pixels: 9,
        }
        .details();
        assert!(details.contains(&("width", "16385".to_owned())));
        assert!(details.contains(&("maxSide", "16384".to_owned())));
        assert!(details.contains(&("maxPixels", "9".to_owned())));
    }
}
