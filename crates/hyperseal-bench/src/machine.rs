//! What the figures were measured on: CPU, detected instruction sets, memory, OS, peer versions.
//! Everything is detected at run time; nothing is assumed about the machine.

use std::process::Command;

use serde_json::{json, Value};

pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub features: Vec<(&'static str, bool)>,
    pub memory: String,
    pub os: String,
}

impl Machine {
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = field(&cpuinfo, "model name").unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory = field(&meminfo, "MemTotal")
            .and_then(|v| v.split_whitespace().next().and_then(|k| k.parse::<u64>().ok()))
            .map_or_else(
                || "unknown".to_string(),
                |kib| format!("{:.1} GiB", kib as f64 / (1u64 << 20) as f64),
            );
        let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
        let pretty = field_eq(&os_release, "PRETTY_NAME").unwrap_or_else(|| std::env::consts::OS.to_string());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let os = format!("{pretty}, kernel {}", kernel.trim()).trim_end_matches(", kernel ").to_string();
        Machine { cpu, cores: hyperseal::available_threads(), features: features(), memory, os }
    }

    /// `AES-NI VAES AVX2` style list of what was detected, and what was not.
    pub fn feature_line(&self) -> String {
        let yes: Vec<&str> = self.features.iter().filter(|f| f.1).map(|f| f.0).collect();
        let no: Vec<&str> = self.features.iter().filter(|f| !f.1).map(|f| f.0).collect();
        format!(
            "{} (not detected: {})",
            yes.join(", "),
            if no.is_empty() { "none".into() } else { no.join(", ") }
        )
    }

    pub fn to_json(&self) -> Value {
        let feats: serde_json::Map<String, Value> =
            self.features.iter().map(|(k, v)| (k.to_string(), Value::Bool(*v))).collect();
        json!({ "cpu": self.cpu, "cores": self.cores, "features": feats, "memory": self.memory, "os": self.os })
    }
}

#[cfg(target_arch = "x86_64")]
fn features() -> Vec<(&'static str, bool)> {
    use std::arch::is_x86_feature_detected as has;
    vec![
        ("AES-NI", has!("aes")),
        ("PCLMULQDQ", has!("pclmulqdq")),
        ("VAES", has!("vaes")),
        ("VPCLMULQDQ", has!("vpclmulqdq")),
        ("AVX2", has!("avx2")),
        ("AVX-512F", has!("avx512f")),
        ("SHA-NI", has!("sha")),
        ("GFNI", has!("gfni")),
    ]
}

#[cfg(target_arch = "aarch64")]
fn features() -> Vec<(&'static str, bool)> {
    use std::arch::is_aarch64_feature_detected as has;
    vec![("AES", has!("aes")), ("PMULL", has!("pmull")), ("SHA2", has!("sha2")), ("SHA3", has!("sha3"))]
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn features() -> Vec<(&'static str, bool)> {
    Vec::new()
}

/// `key : value` lines (/proc files).
fn field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// `KEY="value"` lines (os-release).
fn field_eq(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=')).map(|v| v.trim_matches('"').to_string())
}

/// First line of `tool args…`, or `None` when the tool is not on PATH or fails.
pub fn version_of(tool: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(tool).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    String::from_utf8_lossy(&text).lines().next().map(|l| l.trim().to_string()).filter(|l| !l.is_empty())
}

/// Versions of the peer tools (`None` = not installed).
pub fn peer_versions() -> Vec<(String, Option<String>)> {
    [
        ("age", &["--version"][..]),
        ("rage", &["--version"]),
        ("openssl", &["version"]),
        ("gpg", &["--version"]),
    ]
    .iter()
    .map(|(t, a)| (t.to_string(), version_of(t, a)))
    .collect()
}

/// The current UTC time as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let secs = hyperseal::time::epoch_seconds(std::time::SystemTime::now());
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = hyperseal::time::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}
