//! The identity agent's process (Unix and Windows), one room per concern, each importing only
//! the rooms listed after it:
//! * `server.rs`: its socket and connections, each request kind answered by one method, on
//!   threads kept between connections (`pool.rs`);
//! * `forward.rs`: a remote host's sockets (Unix; none on Windows) and a forward's policy, its
//!   UNWRAP done in order and each use confirmed through the askpass;
//! * `keys.rs`: the keys it holds, and to which remote hosts each is granted;
//! * `pin.rs`: plugin keys' PIN cache and their plugin's callbacks;
//! * `origin.rs`: where a request comes from and what it may do;
//! * `relay.rs`: asking a request's client (its user, for a plugin key), and the deadlines;
//! * `socket.rs`: the socket's place; `plugin.rs`: `age-plugin-hyperseal`, through which age
//!   reaches it (over the library's client, not these rooms).
//!
//! Its command line is `cmd/agent.rs`; its protocol and client are the library's
//! (`hyperseal::agent`).

pub mod forward;
pub mod keys;
pub mod origin;
pub mod pin;
pub mod plugin;
pub mod pool;
pub mod relay;
pub mod server;
pub mod socket;
