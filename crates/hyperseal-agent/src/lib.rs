//! The hyperseal identity agent's process (Unix and Windows): a long-lived process that holds
//! unlocked identities and answers "which file key do these stanzas open?" for every hyperseal
//! command, binding and age client. The protocol and the client are the library's
//! (`hyperseal::agent`, which the Node and Python packages use too); this crate is the other
//! end, apart from the library as rage keeps `age-plugin` apart from `age`.
//!
//! One room per concern, each importing only the rooms listed after it:
//! * `server.rs`: its socket and connections, each request kind answered by one method, on
//!   threads kept between connections (`pool.rs`);
//! * `forward.rs`: a remote host's sockets (Unix; none on Windows) and a forward's policy, its
//!   UNWRAP done in order and each use confirmed through the askpass;
//! * `store.rs`: the keys it holds, or what `lock` sealed them into;
//! * `keys.rs`: one key, and to which remote hosts it is granted;
//! * `reader.rs`: identity files the library does not read, read by the program that starts
//!   the agent (the CLI's TPM keys), their identities made for each request;
//! * `pin.rs`: plugin keys' PIN cache and their plugin's callbacks;
//! * `origin.rs`: where a request comes from and what it may do;
//! * `relay.rs`: asking a request's client (its user, for a plugin key), and the deadlines;
//! * `process.rs` (Unix): the process's own system calls (no dumps, locked memory, its session
//!   and end signals, naming a peer's program); `wipe.rs`: zeroing what a key passed through
//!   (the allocator the binary installs, and the stacks);
//! * `plugin.rs`: `age-plugin-hyperseal`, through which age reaches the agent (over the
//!   library's client, not these rooms); identities the caller opens in the plugin's own process
//!   (the CLI's TPM keys) come in through `plugin::main_with`.
//!
//! The command line that drives it (where the socket lives, starting, stopping, adding keys,
//! its messages) is the CLI's `cmd/agent/`.

pub mod forward;
pub mod keys;
pub mod origin;
pub mod pin;
pub mod plugin;
pub mod pool;
#[cfg(unix)]
pub mod process;
pub mod reader;
pub mod relay;
pub mod server;
pub mod store;
pub mod wipe;
