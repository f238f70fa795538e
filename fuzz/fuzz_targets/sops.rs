#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hyperseal_fuzz::sops(data));
