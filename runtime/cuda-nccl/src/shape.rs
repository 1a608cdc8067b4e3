//! The lengths each collective needs of every rank's buffers, checked before anything is queued:
//! NCCL itself cannot tell, and a mismatch would hang the ranks or read past a buffer.

use crate::error::NcclError;

/// A collective, for the length rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Collective {
    /// `send` and `recv` of one length.
    AllReduce,
    /// An all-reduce in place: one buffer.
    InPlace,
    /// `recv` is `ranks` times `send`.
    AllGather,
    /// `send` is `ranks` times `recv`.
    ReduceScatter,
    /// In place, from rank `root`.
    Broadcast { root: usize },
}

impl Collective {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::InPlace => "all_reduce_in_place",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast { .. } => "broadcast",
        }
    }
}

/// Checks the `(send, recv)` lengths of the ranks given (all of them, or one rank's alone) for a
/// collective over `ranks` ranks, and returns NCCL's element count: the length every rank
/// passes (all-reduce, broadcast), its send length (all-gather) or receive length
/// (reduce-scatter).
pub(crate) fn check_counts(collective: Collective, ranks: usize, lens: &[(usize, usize)]) -> Result<usize, NcclError> {
    let name = collective.name();
    if let Collective::Broadcast { root } = collective
        && root >= ranks
    {
        return Err(NcclError::invalid(format!(
            "broadcast: root {root} is not a rank; there are {ranks} (0..={})",
            ranks.saturating_sub(1)
        )));
    }
    let mut count = None;
    for (rank, &(send, recv)) in lens.iter().enumerate() {
        // The element count of this rank, and whether its other buffer fits it.
        let (this, fits, rule) = match collective {
            Collective::AllReduce | Collective::InPlace | Collective::Broadcast { .. } => {
                (send, recv == send, "its receive buffer must be as long as its send buffer")
            }
            Collective::AllGather => (
                send,
                send.checked_mul(ranks) == Some(recv),
                "its receive buffer must be the number of ranks times its send buffer",
            ),
            Collective::ReduceScatter => (
                recv,
                recv.checked_mul(ranks) == Some(send),
                "its send buffer must be the number of ranks times its receive buffer",
            ),
        };
        if !fits {
            return Err(NcclError::invalid(format!(
                "{name}: with {ranks} ranks, {rule}: rank {rank} passes a send buffer of {send} and a receive \
                 buffer of {recv} elements"
            )));
        }
        match count {
            None => count = Some(this),
            Some(c) if c == this => {}
            Some(c) => {
                return Err(NcclError::invalid(format!(
                    "{name}: every rank must pass the same number of elements; rank 0 passes {c}, rank {rank} {this}"
                )));
            }
        }
    }
    Ok(count.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(c: Collective, ranks: usize, lens: &[(usize, usize)]) -> String {
        check_counts(c, ranks, lens).unwrap_err().to_string()
    }

    #[test]
    fn counts_of_each_collective() {
        assert_eq!(check_counts(Collective::AllReduce, 2, &[(8, 8), (8, 8)]).unwrap(), 8);
        assert_eq!(check_counts(Collective::AllGather, 3, &[(4, 12); 3]).unwrap(), 4);
        assert_eq!(check_counts(Collective::ReduceScatter, 4, &[(20, 5); 4]).unwrap(), 5);
        assert_eq!(check_counts(Collective::Broadcast { root: 1 }, 2, &[(6, 6); 2]).unwrap(), 6);
        assert_eq!(check_counts(Collective::AllReduce, 1, &[(0, 0)]).unwrap(), 0);
    }

    #[test]
    fn mismatches_say_which_rank_and_what() {
        let e = err(Collective::AllReduce, 2, &[(8, 8), (8, 7)]);
        assert_eq!(
            e,
            "all_reduce: with 2 ranks, its receive buffer must be as long as its send buffer: rank 1 passes a send \
             buffer of 8 and a receive buffer of 7 elements"
        );
        let e = err(Collective::AllReduce, 2, &[(8, 8), (9, 9)]);
        assert_eq!(e, "all_reduce: every rank must pass the same number of elements; rank 0 passes 8, rank 1 9");
        let e = err(Collective::AllGather, 2, &[(4, 4), (4, 8)]);
        assert!(e.contains("the number of ranks times its send buffer: rank 0 passes"), "{e}");
        let e = err(Collective::ReduceScatter, 3, &[(10, 3); 3]);
        assert!(e.contains("the number of ranks times its receive buffer: rank 0 passes a send buffer of 10"), "{e}");
        let e = err(Collective::Broadcast { root: 2 }, 2, &[(1, 1); 2]);
        assert_eq!(e, "broadcast: root 2 is not a rank; there are 2 (0..=1)");
        let e = err(Collective::AllGather, 2, &[(usize::MAX, 0); 2]);
        assert!(e.contains("rank 0 passes"), "{e}");
    }
}
