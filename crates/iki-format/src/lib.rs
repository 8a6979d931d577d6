//! iki-format (under construction).
#![forbid(unsafe_code)]
