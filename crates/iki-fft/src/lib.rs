//! rustfft's planner for `f32`, behind functions that are not generic.
//!
//! `rustfft::FftPlanner<T>` is generic, so the crate that names `FftPlanner<f32>` compiles
//! every algorithm and SIMD butterfly rustfft has for `f32`: about 85 % of iki-watermark's
//! code when it planned its own transforms, compiled again for its unit-test build. Here the
//! instantiation happens once, in a dependency; callers get the plans as `Arc<dyn Fft<f32>>`,
//! exactly what rustfft's planner returns. Release builds (LTO) see the same code either way.

#![forbid(unsafe_code)]

use std::sync::Arc;

pub use rustfft::num_complex::Complex32;
pub use rustfft::Fft;

/// Plans f32 transforms, reusing what it planned for earlier lengths (rustfft's cache).
pub struct Planner(rustfft::FftPlanner<f32>);

impl Planner {
    /// A planner that picks the fastest algorithms the CPU supports (AVX, SSE, simd128 or scalar).
    pub fn new() -> Self {
        Self(rustfft::FftPlanner::new())
    }

    /// The forward (unnormalised) transform of `len` points.
    pub fn forward(&mut self, len: usize) -> Arc<dyn Fft<f32>> {
        self.0.plan_fft_forward(len)
    }

    /// The inverse (unnormalised) transform of `len` points.
    pub fn inverse(&mut self, len: usize) -> Arc<dyn Fft<f32>> {
        self.0.plan_fft_inverse(len)
    }
}

impl Default for Planner {
    fn default() -> Self {
        Self::new()
    }
}
