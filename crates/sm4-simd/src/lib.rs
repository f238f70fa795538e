//! SM4 block cipher with SIMD backends (work in progress).
#![no_std]
