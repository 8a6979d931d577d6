//! iki-watermark (under construction).
#![forbid(unsafe_code)]
