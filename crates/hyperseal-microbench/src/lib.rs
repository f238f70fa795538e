//! Nothing here: the micro-benchmarks are in `benches/` (`cargo bench -p hyperseal-microbench --bench NAME`).
