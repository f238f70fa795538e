//! The backup crate's integration tests, one binary (each test binary is a link of its own).

#[path = "suite/common.rs"]
mod common;
#[path = "suite/damage.rs"]
mod damage;
#[path = "suite/forget.rs"]
mod forget;
#[path = "suite/hostile.rs"]
mod hostile;
#[path = "suite/kills.rs"]
mod kills;
#[path = "suite/minio.rs"]
mod minio;
#[path = "suite/peers.rs"]
mod peers;
#[path = "suite/ranges.rs"]
mod ranges;
#[path = "suite/recovery.rs"]
mod recovery;
#[path = "suite/reference.rs"]
mod reference;
#[path = "suite/rekey.rs"]
mod rekey;
#[path = "suite/restoring.rs"]
mod restoring;
#[path = "suite/roundtrip.rs"]
mod roundtrip;
#[path = "suite/s3.rs"]
mod s3;
#[path = "suite/serve.rs"]
mod serve;
#[path = "suite/trust.rs"]
mod trust;
#[path = "suite/walking.rs"]
mod walking;
#[path = "suite/writer.rs"]
mod writer;
