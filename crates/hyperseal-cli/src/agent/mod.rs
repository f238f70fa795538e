//! The identity agent's process (Unix): the keys it holds (`keys.rs`), plugin keys' PIN cache
//! and the relay of their questions to the client (`pin.rs`), its socket and connections
//! (`server.rs`) and its socket's place (`socket.rs`), the sockets of remote hosts and their grants (`forward.rs`), where a request comes from and what it may do (`origin.rs`), and `age-plugin-hyperseal`, through which age reaches it
//! (`plugin.rs`). Its command line is `cmd/agent.rs`; its protocol and client are the
//! library's (`hyperseal::agent`).

#[cfg(unix)]
pub mod forward;
pub mod keys;
pub mod origin;
pub mod pin;
pub mod plugin;
pub mod server;
pub mod socket;
