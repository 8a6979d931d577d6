//! The one error model at the WASM boundary (STYLE.md "One error model").
//!
//! Every exported function returns `Result<_, JsValue>`. On failure the
//! adapter throws a plain JS `Error` whose `message` is the Rust error's
//! `Display`, with two extra properties: `code` (the stable SCREAMING_SNAKE
//! string from docs/format.md section 11) and `details` (a small object of
//! non-secret context such as `limit`, `value`, `max`). The TS wrapper
//! (`ts/src/errors.ts`) turns that object into an `IkiError`.
//!
//! The conversion is split in two so the interesting half is testable on
//! the host: [`ErrorParts`] is plain Rust, and only [`ErrorParts::into_js`]
//! touches JS (which panics off-wasm, so it is never called natively).

use core::fmt;

use wasm_bindgen::JsValue;

/// One value in an error's `details` object.
///
/// Numbers cross as JS numbers (IEEE doubles). Every limit in the format is
/// at most 2^32, far below 2^53, so no detail loses precision.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    /// A short non-secret string, such as the name of a limit.
    Str(String),
    /// A count, length or index.
    Num(f64),
}

/// An error that can cross the boundary: a stable code, a message, details.
///
/// Implemented for this crate's own [`Error`]; the format and crypto crates'
/// `Error` types get an impl here too (their `code()` and `Display` are all
/// this needs), so every export maps failures with `.map_err(js_error)`.
pub trait BoundaryError: fmt::Display {
    /// The stable code, e.g. `"INVALID_STATE"`.
    fn code(&self) -> &'static str;

    /// Non-secret context. Empty unless the error type has something to add.
    fn details(&self) -> Vec<(&'static str, Detail)> {
        Vec::new()
    }
}

/// The three fields of the JS error, built without touching JS.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorParts {
    /// Stable code.
    pub code: &'static str,
    /// Human-readable message (lowercase; may change between versions).
    pub message: String,
    /// Non-secret context.
    pub details: Vec<(&'static str, Detail)>,
}

impl ErrorParts {
    /// Collects code, message and details from any boundary error.
    pub fn from_error<E: BoundaryError + ?Sized>(err: &E) -> Self {
        Self {
            code: err.code(),
            message: err.to_string(),
            details: err.details(),
        }
    }

    /// Builds the JS `Error` object with `code`, `message` and `details`.
    ///
    /// `Reflect::set` on a fresh plain object cannot fail in practice; its
    /// result is ignored rather than unwrapped because a panic here would
    /// become an opaque trap instead of a readable error.
    pub fn into_js(self) -> JsValue {
        let error = js_sys::Error::new(&self.message);
        let details = js_sys::Object::new();
        for (key, value) in self.details {
            let value = match value {
                Detail::Str(s) => JsValue::from_str(&s),
                Detail::Num(n) => JsValue::from_f64(n),
            };
            let _ = js_sys::Reflect::set(&details, &JsValue::from_str(key), &value);
        }
        let _ = js_sys::Reflect::set(
            &error,
            &JsValue::from_str("code"),
            &JsValue::from_str(self.code),
        );
        let _ = js_sys::Reflect::set(&error, &JsValue::from_str("details"), &details);
        error.into()
    }
}

/// Converts any boundary error into the JS `Error` thrown to callers.
///
/// Use as `.map_err(js_error)` in every export.
pub fn js_error<E: BoundaryError>(err: E) -> JsValue {
    ErrorParts::from_error(&err).into_js()
}

impl BoundaryError for iki_format::Error {
    fn code(&self) -> &'static str {
        iki_format::Error::code(self)
    }

    /// The format crate renders its details as strings (numbers in decimal).
    fn details(&self) -> Vec<(&'static str, Detail)> {
        iki_format::Error::details(self)
            .into_iter()
            .map(|(key, value)| (key, Detail::Str(value)))
            .collect()
    }
}

impl BoundaryError for iki_crypto::Error {
    /// A failed host SHA-256 backend is `INVALID_STATE`, a code every caller already knows.
    fn code(&self) -> &'static str {
        match self {
            iki_crypto::Error::HostHashFailed => "INVALID_STATE",
            other => iki_crypto::Error::code(other),
        }
    }
}

/// Errors raised by the adapter itself (argument and call-order checks).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A handle was used after it was finished or freed.
    InvalidState {
        /// What was attempted, e.g. `"update after finish"`.
        operation: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidState { operation } => write!(f, "invalid state: {operation}"),
        }
    }
}

impl BoundaryError for Error {
    fn code(&self) -> &'static str {
        match self {
            Self::InvalidState { .. } => "INVALID_STATE",
        }
    }

    fn details(&self) -> Vec<(&'static str, Detail)> {
        match self {
            Self::InvalidState { operation } => {
                vec![("operation", Detail::Str((*operation).into()))]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct LimitError;

    impl fmt::Display for LimitError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("limit exceeded: MANI payload 9000000 > 8388608")
        }
    }

    impl BoundaryError for LimitError {
        fn code(&self) -> &'static str {
            "LIMIT_EXCEEDED"
        }
        fn details(&self) -> Vec<(&'static str, Detail)> {
            vec![
                ("limit", Detail::Str("MAX_MANI_PAYLOAD_BYTES".into())),
                ("value", Detail::Num(9e6)),
            ]
        }
    }

    #[test]
    fn parts_carry_code_message_and_details() {
        let parts = ErrorParts::from_error(&LimitError);
        assert_eq!(parts.code, "LIMIT_EXCEEDED");
        assert_eq!(
            parts.message,
            "limit exceeded: MANI payload 9000000 > 8388608"
        );
        assert_eq!(parts.details.len(), 2);
        assert_eq!(parts.details[1], ("value", Detail::Num(9e6)));
    }

    #[test]
    fn details_default_to_empty() {
        struct Plain;
        impl fmt::Display for Plain {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("decryption failed")
            }
        }
        impl BoundaryError for Plain {
            fn code(&self) -> &'static str {
                "DECRYPT_FAILED"
            }
        }
        let parts = ErrorParts::from_error(&Plain);
        assert_eq!((parts.code, parts.details.len()), ("DECRYPT_FAILED", 0));
    }

    #[test]
    fn format_errors_keep_code_message_and_details() {
        let err = iki_format::Error::LimitExceeded {
            limit: "MAX_HEAD_PAYLOAD_BYTES",
            value: 4097,
            max: 4096,
        };
        let parts = ErrorParts::from_error(&err);
        assert_eq!(parts.code, "LIMIT_EXCEEDED");
        assert_eq!(parts.message, err.to_string());
        assert_eq!(
            parts.details,
            vec![
                ("limit", Detail::Str("MAX_HEAD_PAYLOAD_BYTES".into())),
                ("value", Detail::Str("4097".into())),
                ("max", Detail::Str("4096".into())),
            ]
        );
    }

    #[test]
    fn crypto_errors_stay_coarse() {
        let parts = ErrorParts::from_error(&iki_crypto::Error::DecryptFailed);
        assert_eq!(
            (parts.code, parts.message.as_str()),
            ("DECRYPT_FAILED", "decryption failed")
        );
        assert!(parts.details.is_empty());
    }

    #[test]
    fn invalid_state_names_the_operation() {
        let parts = ErrorParts::from_error(&Error::InvalidState {
            operation: "update after finish",
        });
        assert_eq!(parts.code, "INVALID_STATE");
        assert_eq!(parts.message, "invalid state: update after finish");
        assert_eq!(
            parts.details,
            vec![("operation", Detail::Str("update after finish".into()))]
        );
    }
}
