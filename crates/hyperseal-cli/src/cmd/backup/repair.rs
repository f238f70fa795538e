//! `backup repair`: what a reader does after damage, so that prune and the next backup can go
//! on. `repair index` rebuilds the indexes from the packs that are there.

use anyhow::Result;
use clap::{Args, Subcommand};
use hyperseal_backup::{Plugins, Reader};

use super::{now, IdentityArgs, RepoArg};

#[derive(Args)]
pub struct RepairArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// Rebuild the indexes from every pack's own id list (takes the prune lock; deletes indexes,
    /// never a pack). After it, the next backup stores again what a lost pack held.
    Index(IndexArgs),
}

#[derive(Args)]
pub struct IndexArgs {
    #[command(flatten)]
    repo: RepoArg,
    #[command(flatten)]
    ids: IdentityArgs,
    /// Place only chunks that decrypt, decompress and match their ids (reads every pack).
    #[arg(long = "read-data")]
    read_data: bool,
}

pub fn repair(a: RepairArgs) -> Result<()> {
    match a.what {
        What::Index(a) => index(a),
    }
}

fn index(a: IndexArgs) -> Result<()> {
    let (store, ids) = (a.repo.store()?, a.ids.load()?);
    let mut reader = Reader::open(&*store, &ids)?;
    // The new index is sealed to the reader set, which may hold plugin recipients.
    reader.set_plugins(Plugins::Allow);
    let rep = hyperseal_backup::repair_index(&reader, now(), a.read_data)?;
    for d in &rep.dropped {
        eprintln!("hyperseal: warning: left out: {d}");
    }
    eprintln!(
        "hyperseal: index rebuilt: {} chunks in {} packs; {} index objects replaced",
        rep.chunks, rep.packs, rep.indexes_replaced
    );
    Ok(())
}
