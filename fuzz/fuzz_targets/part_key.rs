#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hyperseal_fuzz::part_key(data));
