//! Two-dimensional FFT cross-correlation over `rustfft`, planned by iki-fft (docs/watermark.md section 11.2).
//!
//! Rows are transformed, the buffer transposed, and its rows (the former columns)
//! transformed again, so spectra live in transposed layout; the inverse undoes both steps.
//! Both operands of a correlation share the layout, so it never matters.

use std::sync::Arc;

use iki_fft::{Complex32, Fft, Planner};

use crate::plane::Plane;

/// Plans for one `width x height` transform size.
pub(crate) struct Fft2 {
    width: usize,
    height: usize,
    rows: Arc<dyn Fft<f32>>,
    columns: Arc<dyn Fft<f32>>,
    rows_inverse: Arc<dyn Fft<f32>>,
    columns_inverse: Arc<dyn Fft<f32>>,
    scratch: Vec<Complex32>,
    transposed: Vec<Complex32>,
}

impl Fft2 {
    pub(crate) fn new(width: usize, height: usize) -> Self {
        let mut planner = Planner::new();
        let rows = planner.forward(width);
        let columns = planner.forward(height);
        let rows_inverse = planner.inverse(width);
        let columns_inverse = planner.inverse(height);
        let scratch_len = [&rows, &columns, &rows_inverse, &columns_inverse]
            .iter()
            .map(|f| f.get_inplace_scratch_len())
            .max()
            .unwrap_or(0);
        Self {
            width,
            height,
            rows,
            columns,
            rows_inverse,
            columns_inverse,
            scratch: vec![Complex32::default(); scratch_len],
            transposed: vec![Complex32::default(); width * height],
        }
    }

    /// The spectrum of `plane` placed at the origin of a zero `width x height` buffer.
    pub(crate) fn spectrum(&mut self, plane: &Plane) -> Vec<Complex32> {
        let mut buffer = vec![Complex32::default(); self.width * self.height];
        for (row, out) in plane
            .data
            .chunks_exact(plane.width.max(1))
            .zip(buffer.chunks_exact_mut(self.width))
        {
            for (o, &v) in out.iter_mut().zip(row) {
                o.re = v;
            }
        }
        self.rows
            .process_with_scratch(&mut buffer, &mut self.scratch);
        transpose(&buffer, &mut self.transposed, self.width, self.height);
        self.columns
            .process_with_scratch(&mut self.transposed, &mut self.scratch);
        core::mem::swap(&mut buffer, &mut self.transposed);
        buffer
    }

    /// `c(o) = sum_t a(t) * b(o + t)` for every cyclic offset `o`, from the spectra of `a`
    /// and `b`, as a `width x height` plane.
    pub(crate) fn correlate(&mut self, a: &[Complex32], b: &[Complex32]) -> Plane {
        let mut product: Vec<Complex32> = a.iter().zip(b).map(|(x, y)| x.conj() * y).collect();
        self.columns_inverse
            .process_with_scratch(&mut product, &mut self.scratch);
        transpose(&product, &mut self.transposed, self.height, self.width);
        self.rows_inverse
            .process_with_scratch(&mut self.transposed, &mut self.scratch);
        let norm = 1.0 / (self.width * self.height) as f32;
        Plane {
            width: self.width,
            height: self.height,
            data: self.transposed.iter().map(|c| c.re * norm).collect(),
        }
    }
}

/// `out[x * height + y] = input[y * width + x]`.
fn transpose(input: &[Complex32], out: &mut [Complex32], width: usize, height: usize) {
    for (y, row) in input.chunks_exact(width).enumerate() {
        for (x, &v) in row.iter().enumerate() {
            if let Some(slot) = out.get_mut(x * height + y) {
                *slot = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlation_equals_the_direct_sums() {
        let (w, h) = (32, 16);
        let mut big = Plane::new(w, h);
        for (i, v) in big.data.iter_mut().enumerate() {
            *v = ((i * 7919) % 101) as f32 - 50.0;
        }
        let (px, py, pw, ph) = (9, 5, 8, 6);
        let mut patch = Plane::new(pw, ph);
        for y in 0..ph {
            for x in 0..pw {
                patch.data[y * pw + x] = big.data[(y + py) * w + x + px];
            }
        }
        let mut fft = Fft2::new(w, h);
        let (a, b) = (fft.spectrum(&patch), fft.spectrum(&big));
        let c = fft.correlate(&a, &b);
        // Every offset where the patch fits equals the direct sum.
        for (ox, oy) in [(px, py), (0, 0), (w - pw, h - ph), (3, 7)] {
            let direct: f32 = patch
                .data
                .iter()
                .enumerate()
                .map(|(i, v)| v * big.data[(i / pw + oy) * w + i % pw + ox])
                .sum();
            let got = c.data[oy * w + ox];
            assert!(
                (got - direct).abs() <= 1e-3 * direct.abs().max(1.0),
                "({ox}, {oy}): {got} vs {direct}"
            );
        }
    }
}
