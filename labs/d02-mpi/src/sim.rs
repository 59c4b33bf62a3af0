//! An in-process stand-in for MPI point-to-point: one thread per rank, one channel per ordered
//! pair of ranks. It exists so that property tests can run every algorithm over many rank counts
//! and sizes in milliseconds; the lab itself always measures and checks against real MPI.
//!
//! Two send semantics, to show the difference the chapter explains:
//! * [`Protocol::Eager`]: `send` copies the message into an unbounded queue and returns at once.
//! * [`Protocol::Rendezvous`]: `send` returns only when the receiver has taken the message, as
//!   MPI does for large messages. A rank that waits longer than the deadline panics with
//!   "deadlock", so a deadlocking algorithm fails a test instead of hanging it.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use crate::comm::Comm;
use crate::elem::Element;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Eager,
    Rendezvous,
}

enum Tx {
    Eager(Sender<Vec<u8>>),
    Rendezvous(SyncSender<Vec<u8>>),
}

pub struct ThreadComm {
    rank: usize,
    size: usize,
    /// `to[d]` carries messages from this rank to rank d.
    to: Vec<Tx>,
    /// `from[s]` carries messages from rank s to this rank.
    from: Vec<Receiver<Vec<u8>>>,
    deadline: Duration,
}

fn deadlock(rank: usize, what: &str, peer: usize, deadline: Duration) -> ! {
    panic!("deadlock: rank {rank} waited {deadline:?} in {what} rank {peer}")
}

fn send_on(tx: &Tx, bytes: Vec<u8>, rank: usize, dest: usize, deadline: Duration) {
    match tx {
        Tx::Eager(tx) => tx.send(bytes).unwrap_or_else(|_| panic!("rank {dest} has exited")),
        Tx::Rendezvous(tx) => {
            let start = Instant::now();
            let mut msg = bytes;
            loop {
                match tx.try_send(msg) {
                    Ok(()) => return,
                    Err(TrySendError::Full(m)) => msg = m,
                    Err(TrySendError::Disconnected(_)) => panic!("rank {dest} has exited"),
                }
                if start.elapsed() > deadline {
                    deadlock(rank, "send to", dest, deadline);
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

impl ThreadComm {

    fn send_bytes(&self, bytes: Vec<u8>, dest: usize) {
        send_on(&self.to[dest], bytes, self.rank, dest, self.deadline);
    }

    fn recv_bytes(&self, len: usize, src: usize) -> Vec<u8> {
        match self.from[src].recv_timeout(self.deadline) {
            Ok(m) => {
                assert_eq!(m.len(), len, "rank {} expected {len} bytes from rank {src}, got {}", self.rank, m.len());
                m
            }
            Err(RecvTimeoutError::Timeout) => deadlock(self.rank, "receive from", src, self.deadline),
            Err(RecvTimeoutError::Disconnected) => panic!("rank {src} has exited"),
        }
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn send<T: Element>(&self, buf: &[T], dest: usize) {
        self.send_bytes(bytemuck::cast_slice(buf).to_vec(), dest);
    }

    fn recv<T: Element>(&self, buf: &mut [T], src: usize) {
        let bytes = self.recv_bytes(std::mem::size_of_val(buf), src);
        bytemuck::cast_slice_mut(buf).copy_from_slice(&bytes);
    }

    fn sendrecv<T: Element>(&self, send: &[T], dest: usize, recv: &mut [T], src: usize) {
        match self.to[dest] {
            // Eager sends never block, so sending first is safe.
            Tx::Eager(_) => {
                self.send(send, dest);
                self.recv(recv, src);
            }
            // A rendezvous send blocks until matched: send on a helper thread while receiving,
            // which is what MPI_Sendrecv does inside the library.
            Tx::Rendezvous(_) => std::thread::scope(|s| {
                let tx = &self.to[dest];
                let bytes = bytemuck::cast_slice(send).to_vec();
                let (rank, deadline) = (self.rank, self.deadline);
                let sender = s.spawn(move || send_on(tx, bytes, rank, dest, deadline));
                self.recv(recv, src);
                sender.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            }),
        }
    }
}

/// Run `body` on `p` ranks, one thread each, and return each rank's result in rank order.
/// A panic on any rank (a wrong length, a deadlock) is propagated to the caller.
pub fn run_ranks<R: Send>(p: usize, protocol: Protocol, body: impl Fn(&ThreadComm) -> R + Sync) -> Vec<R> {
    run_ranks_with_deadline(p, protocol, Duration::from_secs(10), body)
}

pub fn run_ranks_with_deadline<R: Send>(
    p: usize,
    protocol: Protocol,
    deadline: Duration,
    body: impl Fn(&ThreadComm) -> R + Sync,
) -> Vec<R> {
    assert!(p >= 1, "at least one rank");
    // txs[s][d], rxs[d][s]
    let mut txs: Vec<Vec<Tx>> = (0..p).map(|_| Vec::with_capacity(p)).collect();
    let mut rxs: Vec<Vec<Option<Receiver<Vec<u8>>>>> = (0..p).map(|_| (0..p).map(|_| None).collect()).collect();
    for (s, row) in txs.iter_mut().enumerate() {
        for rx_row in rxs.iter_mut() {
            let (tx, rx) = match protocol {
                Protocol::Eager => {
                    let (tx, rx) = mpsc::channel();
                    (Tx::Eager(tx), rx)
                }
                Protocol::Rendezvous => {
                    let (tx, rx) = mpsc::sync_channel(0);
                    (Tx::Rendezvous(tx), rx)
                }
            };
            row.push(tx);
            rx_row[s] = Some(rx);
        }
    }
    let comms: Vec<ThreadComm> = txs
        .into_iter()
        .zip(rxs)
        .enumerate()
        .map(|(rank, (to, from))| ThreadComm {
            rank,
            size: p,
            to,
            from: from.into_iter().map(|r| r.expect("every pair has a channel")).collect(),
            deadline,
        })
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|c| {
                let body = &body;
                std::thread::Builder::new()
                    .name(format!("rank {}", c.rank))
                    .spawn_scoped(s, move || body(&c))
                    .expect("spawn a rank thread")
            })
            .collect();
        let results: Vec<std::thread::Result<R>> = handles.into_iter().map(|h| h.join()).collect();
        // Report the first real panic, not the "has exited" cascade it caused on other ranks.
        let mut out = Vec::with_capacity(p);
        let mut first_err = None;
        for r in results {
            match r {
                Ok(v) => out.push(v),
                Err(e) => {
                    let msg = panic_message(&e);
                    let is_cascade = msg.contains("has exited");
                    if first_err.as_ref().is_none_or(|(c, _)| *c && !is_cascade) {
                        first_err = Some((is_cascade, e));
                    }
                }
            }
        }
        if let Some((_, e)) = first_err {
            std::panic::resume_unwind(e);
        }
        out
    })
}

pub fn panic_message(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_arrive_in_order_per_pair() {
        let out = run_ranks(3, Protocol::Eager, |c| {
            let right = (c.rank() + 1) % 3;
            let left = (c.rank() + 2) % 3;
            c.send(&[c.rank() as i32, 10], right);
            c.send(&[c.rank() as i32, 20], right);
            let mut a = [0i32; 2];
            let mut b = [0i32; 2];
            c.recv(&mut a, left);
            c.recv(&mut b, left);
            (a, b)
        });
        assert_eq!(out[0], ([2, 10], [2, 20]));
        assert_eq!(out[1], ([0, 10], [0, 20]));
    }

    #[test]
    fn rendezvous_sendrecv_ring_completes() {
        let out = run_ranks(4, Protocol::Rendezvous, |c| {
            let mut got = [0i64];
            c.sendrecv(&[c.rank() as i64], (c.rank() + 1) % 4, &mut got, (c.rank() + 3) % 4);
            got[0]
        });
        assert_eq!(out, vec![3, 0, 1, 2]);
    }
}
