//! The MPI backend: nccl-tests' calls mapped onto MPI collectives on CPU buffers, through the raw
//! C API (rsmpi's `ffi`), because in-place collectives need MPI_IN_PLACE and rsmpi has no
//! wrapper for it.
//!
//! Where MPI and NCCL differ, this backend follows MPI and tells the method:
//! * in-place reduce-scatter leaves the block at the start of the buffer (NCCL: at rank x block);
//! * out-of-place broadcast has no MPI form: the root copies send -> recv, then MPI_Bcast;
//! * `avg` has no MPI operation: MPI_SUM, then each rank divides its result by n;
//! * half and bfloat16 have no MPI datatype: refused.

use std::os::raw::{c_int, c_void};

use anyhow::{Result, bail};
use d03_collectives::coll::{Collective, DType, RedOp};
use d03_collectives::method::{Backend, Buf, Call, Combine, Loc, Plan};
use mpi::collective::SystemOperation;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

pub fn check_types(plan: &Plan) -> Result<()> {
    if let Some(d) = plan.dtypes.iter().find(|d| matches!(d, DType::Half | DType::Bfloat16)) {
        bail!("the mpi backend has no {} (MPI has no such datatype); use -d float or the nccl backend", d.name());
    }
    Ok(())
}

pub struct MpiBackend<'a> {
    world: &'a SimpleCommunicator,
    rank: usize,
    size: usize,
    // u64 storage keeps every element type aligned.
    send: Vec<u64>,
    recv: Vec<u64>,
    in_place: *mut c_void,
    pub library: String,
}

/// MPI_Get_library_version's first line: "Open MPI v4.1.4, ..." or "MPICH Version: 4.1".
fn library_version() -> String {
    let mut buf = vec![0u8; 8192];
    let mut len: c_int = 0;
    // SAFETY: the buffer is MPI_MAX_LIBRARY_VERSION_STRING (8192 in Open MPI, smaller in MPICH) long.
    unsafe { ffi::MPI_Get_library_version(buf.as_mut_ptr() as *mut _, &mut len) };
    let s = String::from_utf8_lossy(&buf[..len.max(0) as usize]).into_owned();
    s.lines().next().unwrap_or("").trim().trim_end_matches(',').to_string()
}

impl<'a> MpiBackend<'a> {
    pub fn new(world: &'a SimpleCommunicator) -> Result<Self> {
        let library = library_version();
        // MPI_IN_PLACE is a C macro: (void *) 1 in Open MPI, (void *) -1 in MPICH and its kin.
        let in_place = if library.contains("Open MPI") {
            std::ptr::without_provenance_mut::<c_void>(1)
        } else if library.contains("MPICH") || library.contains("Intel") || library.contains("MVAPICH") {
            std::ptr::without_provenance_mut::<c_void>(usize::MAX)
        } else {
            bail!("unknown MPI library '{library}': cannot form MPI_IN_PLACE");
        };
        Ok(MpiBackend { world, rank: world.rank() as usize, size: world.size() as usize, send: Vec::new(), recv: Vec::new(), in_place, library })
    }

    fn base(&mut self, buf: Buf) -> *mut u8 {
        match buf {
            Buf::Send => self.send.as_mut_ptr() as *mut u8,
            Buf::Recv => self.recv.as_mut_ptr() as *mut u8,
        }
    }

    fn ptr(&mut self, at: Loc) -> *mut c_void {
        // SAFETY: the method keeps every offset + length within the buffers it allocated.
        unsafe { self.base(at.buf).add(at.offset) as *mut c_void }
    }

    fn bytes(&self, buf: Buf) -> usize {
        match buf {
            Buf::Send => self.send.len() * 8,
            Buf::Recv => self.recv.len() * 8,
        }
    }

    /// avg = sum / n, applied to this rank's result in its own element type.
    fn divide(&mut self, at: Loc, count: usize, dtype: DType) {
        let n = self.size;
        let p = self.ptr(at);
        // SAFETY: `count` elements of `dtype` lie at `p` (the collective just wrote them).
        unsafe {
            match dtype {
                DType::Int8 => std::slice::from_raw_parts_mut(p as *mut i8, count).iter_mut().for_each(|x| *x /= n as i8),
                DType::Uint8 => std::slice::from_raw_parts_mut(p as *mut u8, count).iter_mut().for_each(|x| *x /= n as u8),
                DType::Int32 => std::slice::from_raw_parts_mut(p as *mut i32, count).iter_mut().for_each(|x| *x /= n as i32),
                DType::Uint32 => std::slice::from_raw_parts_mut(p as *mut u32, count).iter_mut().for_each(|x| *x /= n as u32),
                DType::Int64 => std::slice::from_raw_parts_mut(p as *mut i64, count).iter_mut().for_each(|x| *x /= n as i64),
                DType::Uint64 => std::slice::from_raw_parts_mut(p as *mut u64, count).iter_mut().for_each(|x| *x /= n as u64),
                DType::Float => std::slice::from_raw_parts_mut(p as *mut f32, count).iter_mut().for_each(|x| *x /= n as f32),
                DType::Double => std::slice::from_raw_parts_mut(p as *mut f64, count).iter_mut().for_each(|x| *x /= n as f64),
                DType::Half | DType::Bfloat16 => {}
            }
        }
    }
}

fn datatype(d: DType) -> Result<ffi::MPI_Datatype> {
    // SAFETY: reading the MPI library's predefined handles after MPI_Init.
    Ok(unsafe {
        match d {
            DType::Int8 => ffi::RSMPI_INT8_T,
            DType::Uint8 => ffi::RSMPI_UINT8_T,
            DType::Int32 => ffi::RSMPI_INT32_T,
            DType::Uint32 => ffi::RSMPI_UINT32_T,
            DType::Int64 => ffi::RSMPI_INT64_T,
            DType::Uint64 => ffi::RSMPI_UINT64_T,
            DType::Float => ffi::RSMPI_FLOAT,
            DType::Double => ffi::RSMPI_DOUBLE,
            DType::Half | DType::Bfloat16 => bail!("MPI has no {} datatype", d.name()),
        }
    })
}

fn operation(o: RedOp) -> ffi::MPI_Op {
    // SAFETY: as above.
    unsafe {
        match o {
            RedOp::Sum | RedOp::Avg => ffi::RSMPI_SUM,
            RedOp::Prod => ffi::RSMPI_PROD,
            RedOp::Max => ffi::RSMPI_MAX,
            RedOp::Min => ffi::RSMPI_MIN,
        }
    }
}

fn check(rc: c_int, what: &str) -> Result<()> {
    if rc != 0 {
        bail!("{what} failed with MPI error {rc}");
    }
    Ok(())
}

impl Backend for MpiBackend<'_> {
    fn rank(&self) -> usize {
        self.rank
    }
    fn nranks(&self) -> usize {
        self.size
    }
    fn alloc(&mut self, bytes: usize) -> Result<()> {
        let words = bytes.div_ceil(8);
        // Written once here, so no timed call pays for first-touch page faults (a zeroed Vec
        // is lazily mapped; the GPU's cudaMalloc has no such cost). 0x3F800000 is 1.0f32.
        self.send = vec![0x3F80_0000_3F80_0000; words];
        self.recv = vec![0x3F80_0000_3F80_0000; words];
        Ok(())
    }
    fn write(&mut self, at: Loc, data: &[u8]) -> Result<()> {
        if at.offset + data.len() > self.bytes(at.buf) {
            bail!("write past the end of the buffer");
        }
        // SAFETY: bounds checked above.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr(at) as *mut u8, data.len()) };
        Ok(())
    }
    fn read(&mut self, at: Loc, len: usize) -> Result<Vec<u8>> {
        if at.offset + len > self.bytes(at.buf) {
            bail!("read past the end of the buffer");
        }
        let mut v = vec![0u8; len];
        // SAFETY: bounds checked above.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr(at) as *const u8, v.as_mut_ptr(), len) };
        Ok(v)
    }

    // ANCHOR: mpi_start
    fn start(&mut self, call: &Call) -> Result<()> {
        let count = c_int::try_from(call.counts.param).map_err(|_| anyhow::anyhow!("count {} exceeds MPI's int", call.counts.param))?;
        let dt = datatype(call.dtype)?;
        let op = operation(call.op);
        let comm = self.world.as_raw();
        let (sp, rp) = (self.ptr(call.send), self.ptr(call.recv));
        let src = if call.in_place { self.in_place } else { sp };
        let root = call.root as c_int;
        let (next, prev) = (((self.rank + 1) % self.size) as c_int, ((self.rank + self.size - 1) % self.size) as c_int);
        // SAFETY: every pointer addresses `count`-sized regions inside our buffers (method::call_for).
        unsafe {
            match call.coll {
                Collective::AllReduce => check(ffi::MPI_Allreduce(src, rp, count, dt, op, comm), "MPI_Allreduce")?,
                Collective::AllGather => check(ffi::MPI_Allgather(src, count, dt, rp, count, dt, comm), "MPI_Allgather")?,
                // In place, MPI reads the whole input from recvbuf and leaves this rank's block at its start.
                Collective::ReduceScatter if call.in_place => {
                    check(ffi::MPI_Reduce_scatter_block(self.in_place, sp, count, dt, op, comm), "MPI_Reduce_scatter_block")?
                }
                Collective::ReduceScatter => check(ffi::MPI_Reduce_scatter_block(sp, rp, count, dt, op, comm), "MPI_Reduce_scatter_block")?,
                Collective::Broadcast => {
                    if !call.in_place && self.rank == call.root {
                        std::ptr::copy_nonoverlapping(sp as *const u8, rp as *mut u8, call.counts.param * call.dtype.size());
                    }
                    check(ffi::MPI_Bcast(rp, count, dt, root, comm), "MPI_Bcast")?
                }
                Collective::Reduce => {
                    let s = if call.in_place { if self.rank == call.root { self.in_place } else { rp } } else { sp };
                    check(ffi::MPI_Reduce(s, rp, count, dt, op, root, comm), "MPI_Reduce")?
                }
                Collective::Alltoall => check(ffi::MPI_Alltoall(src, count, dt, rp, count, dt, comm), "MPI_Alltoall")?,
                Collective::Sendrecv if call.in_place => check(
                    ffi::MPI_Sendrecv_replace(rp, count, dt, next, 0, prev, 0, comm, ffi::RSMPI_STATUS_IGNORE),
                    "MPI_Sendrecv_replace",
                )?,
                Collective::Sendrecv => check(
                    ffi::MPI_Sendrecv(sp, count, dt, next, 0, rp, count, dt, prev, 0, comm, ffi::RSMPI_STATUS_IGNORE),
                    "MPI_Sendrecv",
                )?,
            }
        }
        if call.op == RedOp::Avg && call.coll.reduces() && (call.coll != Collective::Reduce || self.rank == call.root) {
            let at = if call.in_place && call.coll == Collective::ReduceScatter { call.send } else { call.recv };
            self.divide(at, call.counts.recv, call.dtype);
        }
        Ok(())
    }
    // ANCHOR_END: mpi_start

    fn complete(&mut self) -> Result<()> {
        // MPI's blocking collectives have finished when they return.
        Ok(())
    }
    fn barrier(&mut self) -> Result<()> {
        self.world.barrier();
        Ok(())
    }
    fn allreduce_f64(&mut self, x: f64, how: Combine) -> Result<f64> {
        let mut y = 0.0;
        let op = match how {
            Combine::Sum => SystemOperation::sum(),
            Combine::Min => SystemOperation::min(),
            Combine::Max => SystemOperation::max(),
        };
        self.world.all_reduce_into(&x, &mut y, op);
        Ok(y)
    }
    fn allreduce_u64(&mut self, x: u64) -> Result<u64> {
        let mut y = 0u64;
        self.world.all_reduce_into(&x, &mut y, SystemOperation::sum());
        Ok(y)
    }
    fn reduce_scatter_in_place_at_start(&self) -> bool {
        true
    }
}
