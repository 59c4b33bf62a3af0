//! The NCCL backend: device buffers, one CUDA stream per GPU, NCCL collectives issued on the
//! stream and waited for by synchronising it, as nccl-tests does (it spins on cudaStreamQuery).
//!
//! Bootstrap: one process per GPU under mpirun, rank 0 creates the unique id and MPI_Bcast
//! carries it to the others (ncclCommInitRank); or a single process driving `-g N` GPUs, one
//! thread each, with communicators from ncclCommInitAll.
//!
//! Everything here runs only after d03_collectives::gpu::probe found a driver, a GPU and NCCL:
//! cudarc's dynamically loaded bindings would panic otherwise.

use std::ffi::c_void;
use std::sync::{Arc, Barrier, Mutex};

use anyhow::{Context, Result, bail};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use cudarc::nccl::{result as nccl, sys as nsys};
use d03_collectives::coll::{Collective, DType, RedOp};
use d03_collectives::method::{Backend, Buf, Call, Combine, Loc, Outcome, Plan};
use crate::Exit;
use crate::procs::Procs;

/// Threads of one process that share a barrier and a scratch space for their tiny collectives.
struct Team {
    barrier: Barrier,
    slots: Mutex<Vec<f64>>,
}

struct Comm(nsys::ncclComm_t);
// SAFETY: an NCCL communicator may be used from the one thread that owns it; we move each to its
// thread once and never share it.
unsafe impl Send for Comm {}

pub struct NcclBackend<'w> {
    rank: usize,
    nranks: usize,
    local: usize,
    stream: Arc<CudaStream>,
    comm: nsys::ncclComm_t,
    send: Option<CudaSlice<u8>>,
    recv: Option<CudaSlice<u8>>,
    world: Option<&'w dyn Procs>,
    team: Arc<Team>,
}

fn dtype(d: DType) -> nsys::ncclDataType_t {
    use nsys::ncclDataType_t::*;
    match d {
        DType::Int8 => ncclInt8,
        DType::Uint8 => ncclUint8,
        DType::Int32 => ncclInt32,
        DType::Uint32 => ncclUint32,
        DType::Int64 => ncclInt64,
        DType::Uint64 => ncclUint64,
        DType::Half => ncclFloat16,
        DType::Float => ncclFloat32,
        DType::Double => ncclFloat64,
        DType::Bfloat16 => ncclBfloat16,
    }
}

fn op(o: RedOp) -> nsys::ncclRedOp_t {
    use nsys::ncclRedOp_t::*;
    match o {
        RedOp::Sum => ncclSum,
        RedOp::Prod => ncclProd,
        RedOp::Max => ncclMax,
        RedOp::Min => ncclMin,
        RedOp::Avg => ncclAvg,
    }
}

fn nc<T>(r: Result<T, nccl::NcclError>, what: &str) -> Result<T> {
    r.map_err(|e| anyhow::anyhow!("{what}: {e:?}"))
}

impl NcclBackend<'_> {
    fn slice(&self, buf: Buf) -> Result<&CudaSlice<u8>> {
        match buf {
            Buf::Send => self.send.as_ref(),
            Buf::Recv => self.recv.as_ref(),
        }
        .context("buffers not allocated")
    }

    fn dptr(&self, at: Loc) -> Result<*mut c_void> {
        let s = self.slice(at.buf)?;
        let (p, _sync) = s.device_ptr(&self.stream);
        Ok((p as usize + at.offset) as *mut c_void)
    }

    /// Combine one value over every rank: the threads of this process, then the processes.
    fn combine(&mut self, x: f64, how: Combine) -> Result<f64> {
        let pick = |a: f64, b: f64| match how {
            Combine::Sum => a + b,
            Combine::Min => a.min(b),
            Combine::Max => a.max(b),
        };
        let mut v = x;
        if self.team.slots.lock().map(|s| s.len()).unwrap_or(1) > 1 {
            self.team.slots.lock().unwrap()[self.local] = x;
            self.team.barrier.wait();
            v = self.team.slots.lock().unwrap().iter().copied().reduce(pick).unwrap_or(x);
            self.team.barrier.wait();
        }
        if let Some(w) = self.world
            && w.size() > 1
        {
            v = w.allreduce_f64(v, how);
        }
        Ok(v)
    }
}

impl Backend for NcclBackend<'_> {
    fn rank(&self) -> usize {
        self.rank
    }
    fn nranks(&self) -> usize {
        self.nranks
    }
    fn alloc(&mut self, bytes: usize) -> Result<()> {
        self.send = Some(self.stream.alloc_zeros::<u8>(bytes.max(1)).context("cudaMalloc of the send buffer")?);
        self.recv = Some(self.stream.alloc_zeros::<u8>(bytes.max(1)).context("cudaMalloc of the receive buffer")?);
        Ok(())
    }
    fn write(&mut self, at: Loc, data: &[u8]) -> Result<()> {
        let stream = self.stream.clone();
        let s = match at.buf {
            Buf::Send => self.send.as_mut(),
            Buf::Recv => self.recv.as_mut(),
        }
        .context("buffers not allocated")?;
        let mut view = s.slice_mut(at.offset..at.offset + data.len());
        stream.memcpy_htod(data, &mut view).context("host to device copy")?;
        stream.synchronize().context("stream synchronize")?;
        Ok(())
    }
    fn read(&mut self, at: Loc, len: usize) -> Result<Vec<u8>> {
        let s = self.slice(at.buf)?;
        let view = s.slice(at.offset..at.offset + len);
        let mut out = vec![0u8; len];
        self.stream.memcpy_dtoh(&view, &mut out).context("device to host copy")?;
        self.stream.synchronize().context("stream synchronize")?;
        Ok(out)
    }
    // ANCHOR: nccl_start
    fn start(&mut self, call: &Call) -> Result<()> {
        let (sp, rp) = (self.dptr(call.send)?, self.dptr(call.recv)?);
        let (count, dt, comm) = (call.counts.param, dtype(call.dtype), self.comm);
        let stream = self.stream.cu_stream() as nsys::cudaStream_t;
        let n = self.nranks;
        let bytes = count * call.dtype.size();
        // SAFETY: pointers address regions of our device buffers (method::call_for keeps them in bounds).
        unsafe {
            match call.coll {
                Collective::AllReduce => {
                    nc(nccl::all_reduce(sp, rp, count, dt, op(call.op), comm, stream), "ncclAllReduce")?;
                }
                Collective::AllGather => {
                    nc(nccl::all_gather(sp, rp, count, dt, comm, stream), "ncclAllGather")?;
                }
                Collective::ReduceScatter => {
                    nc(nccl::reduce_scatter(sp, rp, count, dt, op(call.op), comm, stream), "ncclReduceScatter")?;
                }
                Collective::Broadcast => {
                    nc(nccl::broadcast(sp, rp, count, dt, call.root as i32, comm, stream), "ncclBroadcast")?;
                }
                Collective::Reduce => {
                    nc(nccl::reduce(sp, rp, count, dt, op(call.op), call.root as i32, comm, stream), "ncclReduce")?;
                }
                // NCCL has no alltoall call: nccl-tests groups a send and a receive per peer.
                Collective::Alltoall => {
                    nc(nccl::group_start(), "ncclGroupStart")?;
                    for peer in 0..n {
                        let s = (sp as usize + peer * bytes) as *const c_void;
                        let r = (rp as usize + peer * bytes) as *mut c_void;
                        nc(nccl::send(s, count, dt, peer as i32, comm, stream), "ncclSend")?;
                        nc(nccl::recv(r, count, dt, peer as i32, comm, stream), "ncclRecv")?;
                    }
                    nc(nccl::group_end(), "ncclGroupEnd")?;
                }
                Collective::Sendrecv => {
                    let (next, prev) = ((self.rank + 1) % n, (self.rank + n - 1) % n);
                    nc(nccl::group_start(), "ncclGroupStart")?;
                    nc(nccl::send(sp, count, dt, next as i32, comm, stream), "ncclSend")?;
                    nc(nccl::recv(rp, count, dt, prev as i32, comm, stream), "ncclRecv")?;
                    nc(nccl::group_end(), "ncclGroupEnd")?;
                }
            }
        }
        Ok(())
    }
    // ANCHOR_END: nccl_start
    fn complete(&mut self) -> Result<()> {
        self.stream.synchronize().context("stream synchronize")
    }
    fn barrier(&mut self) -> Result<()> {
        self.combine(0.0, Combine::Sum).map(|_| ())
    }
    fn allreduce_f64(&mut self, x: f64, how: Combine) -> Result<f64> {
        self.combine(x, how)
    }
    fn allreduce_u64(&mut self, x: u64) -> Result<u64> {
        Ok(self.combine(x as f64, Combine::Sum)? as u64)
    }
}

/// (device index, name) of the GPUs this process drives: device r mod count for one GPU per
/// process, devices 0..g with `-g g`.
pub fn device_names(world: &dyn Procs, gpus: usize) -> Vec<(String, String)> {
    let count = CudaContext::device_count().unwrap_or(1).max(1) as usize;
    let ids: Vec<usize> = if gpus == 1 { vec![world.rank() % count] } else { (0..gpus).collect() };
    ids.into_iter()
        .map(|d| (d.to_string(), CudaContext::new(d).and_then(|c| c.name()).unwrap_or_else(|_| "CUDA device".into())))
        .collect()
}

/// Set up communicators and run `body` on every GPU of this process; returns rank 0's outcome
/// (every rank computes the same rows).
pub fn run(
    world: &dyn Procs,
    gpus: usize,
    _plan: &Plan,
    body: impl Fn(&mut dyn Backend, bool) -> Result<Outcome, Exit> + Sync,
) -> Result<Outcome, Exit> {
    let procs = world.size();
    if gpus > 1 && procs > 1 {
        return Err(Exit(2, "use -g 1 with several processes (one GPU each), or one process with -g N".into()));
    }
    let devices = CudaContext::device_count().map_err(|e| anyhow::anyhow!("cuDeviceGetCount: {e:?}"))? as usize;
    if gpus == 1 {
        // One process per GPU: rank r uses device r mod (GPUs on its host).
        let rank = world.rank();
        let ctx = CudaContext::new(rank % devices.max(1)).map_err(|e| anyhow::anyhow!("CUDA context: {e:?}"))?;
        let stream = ctx.new_stream().map_err(|e| anyhow::anyhow!("CUDA stream: {e:?}"))?;
        let mut id = if rank == 0 { nc(nccl::get_uniqueid(), "ncclGetUniqueId")? } else { nsys::ncclUniqueId { internal: [0; 128] } };
        let mut bytes: Vec<u8> = id.internal.iter().map(|&c| c as u8).collect();
        world.broadcast(&mut bytes[..]);
        for (d, s) in id.internal.iter_mut().zip(&bytes) {
            *d = *s as _;
        }
        let mut comm = std::ptr::null_mut();
        // SAFETY: comm is an out-parameter; every rank passes the same id and world size.
        unsafe { nc(nccl::comm_init_rank(&mut comm, procs as i32, id, rank as i32), "ncclCommInitRank")? };
        let team = Arc::new(Team { barrier: Barrier::new(1), slots: Mutex::new(vec![0.0]) });
        let mut b = NcclBackend { rank, nranks: procs, local: 0, stream, comm, send: None, recv: None, world: Some(world), team };
        let out = body(&mut b, rank == 0);
        // SAFETY: the communicator is no longer used.
        unsafe {
            let _ = nccl::comm_destroy(comm);
        }
        return out;
    }
    if gpus > devices {
        return Err(Exit(2, format!("-g {gpus} asks for more GPUs than the {devices} this host has")));
    }
    // One process, `gpus` GPUs, one thread each.
    let streams: Vec<Arc<CudaStream>> = (0..gpus)
        .map(|d| CudaContext::new(d).and_then(|c| c.new_stream()))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("CUDA setup: {e:?}"))?;
    let mut comms = vec![std::ptr::null_mut(); gpus];
    let ordinals: Vec<i32> = (0..gpus as i32).collect();
    // SAFETY: comms has room for `gpus` communicators.
    unsafe { nc(nccl::comm_init_all(comms.as_mut_ptr(), gpus as i32, ordinals.as_ptr()), "ncclCommInitAll")? };
    let team = Arc::new(Team { barrier: Barrier::new(gpus), slots: Mutex::new(vec![0.0; gpus]) });
    let results: Vec<Result<Outcome, Exit>> = std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .iter()
            .zip(streams)
            .enumerate()
            .map(|(i, (c, stream))| {
                let comm = Comm(*c);
                let team = team.clone();
                let body = &body;
                s.spawn(move || {
                    let comm = comm;
                    let mut b = NcclBackend { rank: i, nranks: gpus, local: i, stream, comm: comm.0, send: None, recv: None, world: None, team };
                    body(&mut b, i == 0)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Exit(1, "a GPU thread panicked".into())))).collect()
    });
    for c in comms {
        // SAFETY: every thread has finished with its communicator.
        unsafe {
            let _ = nccl::comm_destroy(c);
        }
    }
    let mut first = None;
    for r in results {
        let r = r?;
        first.get_or_insert(r);
    }
    first.ok_or_else(|| Exit(1, "no GPU ran".into()))
}

#[allow(dead_code)]
fn unused(_: &Plan) -> Result<()> {
    bail!("unused")
}
