//! The CLI's integration tests, one binary: each file in this folder is a module here, so the
//! workspace links one test executable instead of one per file (each link cost 15–45 s on two
//! cores, with thin LTO then). Run one file's tests with a module filter:
//! `cargo test --release -p hyperseal-cli --test suite agent_pin::`.
//!
//! `faults.rs` stays a binary of its own: it times its kills against a measured run, so it runs
//! alone, not beside this binary's tests.

mod agent_support;
mod common;
mod git_support;

mod age_header;
mod age_identities;
mod age_interop;
mod age_mode;
mod age_plugin;
mod age_ssh;
mod age_tag;
mod age_terminal;
mod agent;
mod agent_budget;
mod agent_forward;
mod agent_forward_policy;
mod agent_hostile;
mod agent_memory;
mod agent_pin;
mod agent_strangers;
mod backup_agent;
mod backup_forget;
mod backup_s3;
mod backup_ssh;
mod c2sp_interop;
mod cli;
mod completions;
mod decrypt_help;
mod git_clone;
mod git_faults;
mod git_filter;
mod git_large;
mod git_merge;
mod git_rekey;
mod git_side_doors;
mod git_unlock;
mod git_verify;
mod hash_check;
mod hazmat_stream;
mod hostile_files;
mod hostile_plugins;
mod inspect_age;
mod one_file;
mod output_rules;
mod passkey_identity;
mod readme;
mod rekey;
mod rekey_faults;
mod rekey_shared;
mod rekey_sops;
mod rekey_tree;
mod rekey_trust;
mod secrets;
mod sops_rotate;
mod sops_shared;
mod sops_strict;
mod terminal_signals;
mod toolkit_cli;
mod tpm;
mod tpm_agent;
mod usage;
mod writer_budget;
