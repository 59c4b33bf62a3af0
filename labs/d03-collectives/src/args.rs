//! The harness's flags, shared by `cargo lab d03 bench` and the rank program, named as
//! nccl-tests names them. Values are parsed in [`BenchArgs::plan`] (not by clap) so that bad input
//! is one line and exit 2.

use anyhow::{Result, bail};
use serde::Serialize;

use crate::coll::{Collective, DType, RedOp, sweep};
use crate::method::{Average, Plan};

#[derive(clap::Args, Debug, Clone, Serialize)]
pub struct BenchArgs {
    /// Smallest size (-b, nccl-tests' minbytes); K/M/G are 1024-based.
    #[arg(short = 'b', long = "minbytes", default_value = "32M")]
    pub min_bytes: String,
    /// Largest size (-e, maxbytes).
    #[arg(short = 'e', long = "maxbytes", default_value = "32M")]
    pub max_bytes: String,
    /// Multiply the size by this factor each step (-f); 1 means step by -i bytes.
    #[arg(short = 'f', long = "stepfactor", default_value_t = 1)]
    pub step_factor: usize,
    /// Add this many bytes each step when -f is 1 (-i).
    #[arg(short = 'i', long = "stepbytes", default_value = "1M")]
    pub step_bytes: String,
    /// Timed iterations per size (-n).
    #[arg(short = 'n', long = "iters", default_value_t = 20)]
    pub iters: usize,
    /// Warm-up iterations per size before the sweep (-w).
    #[arg(short = 'w', long = "warmup_iters", default_value_t = 1)]
    pub warmup: usize,
    /// Verification rounds per size and side; 0 prints N/A in #wrong (-c).
    #[arg(short = 'c', long = "check", default_value_t = 1)]
    pub check: usize,
    /// Element type, or `all` (-d): int8 uint8 int32 uint32 int64 uint64 half float double bfloat16.
    #[arg(short = 'd', long = "datatype", default_value = "float")]
    pub datatype: String,
    /// Reduction, or `all` (-o): sum prod max min avg.
    #[arg(short = 'o', long = "op", default_value = "sum")]
    pub op: String,
    /// Root rank of broadcast and reduce (-r).
    #[arg(short = 'r', long = "root", default_value_t = 0)]
    pub root: usize,
    /// How per-rank times become one (-a): 0 rank 0, 1 mean, 2 min, 3 max.
    #[arg(short = 'a', long = "average", default_value = "1")]
    pub average: Average,
    /// Test-only: corrupt one result element on the last rank, to prove #wrong catches it.
    #[arg(long = "test-corrupt", hide = true)]
    pub corrupt: bool,
}

fn size(flag: &str, s: &str) -> Result<usize> {
    let b = lab_core::units::parse_bytes(s).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    if b.fract() != 0.0 || b > (1u64 << 50) as f64 {
        bail!("{flag}: '{s}' is not a whole number of bytes below 1 PiB");
    }
    Ok(b as usize)
}

impl BenchArgs {
    /// The validated plan for one collective on `nranks` ranks.
    pub fn plan(&self, coll: Collective, nranks: usize) -> Result<Plan> {
        let min = size("-b", &self.min_bytes)?;
        let max = size("-e", &self.max_bytes)?;
        let step = size("-i", &self.step_bytes)?;
        let sizes = sweep(min, max, self.step_factor, step)?;
        let dtypes = if self.datatype == "all" {
            DType::ALL.to_vec()
        } else {
            vec![DType::ALL.into_iter().find(|d| d.name() == self.datatype).ok_or_else(|| {
                anyhow::anyhow!("unknown type '{}' for -d (int8 uint8 int32 uint32 int64 uint64 half float double bfloat16, or all)", self.datatype)
            })?]
        };
        let ops = if self.op == "all" {
            RedOp::ALL.to_vec()
        } else {
            vec![RedOp::ALL.into_iter().find(|o| o.name() == self.op).ok_or_else(|| {
                anyhow::anyhow!("unknown reduction '{}' for -o (sum prod max min avg, or all)", self.op)
            })?]
        };
        let plan = Plan {
            coll,
            dtypes,
            ops,
            root: self.root,
            sizes,
            iters: self.iters,
            warmup: self.warmup,
            check: self.check,
            average: self.average,
            corrupt: self.corrupt,
        };
        plan.validate(nranks)?;
        Ok(plan)
    }

    /// The -e value in bytes, as requested (nccl-tests prints it as maxBytes).
    pub fn max_bytes_value(&self) -> Result<usize> {
        size("-e", &self.max_bytes)
    }

    /// nccl-tests' `step: N(factor)` or `step: N(bytes)`.
    pub fn step(&self) -> (usize, &'static str) {
        if self.step_factor > 1 {
            (self.step_factor, "factor")
        } else {
            (size("-i", &self.step_bytes).unwrap_or(0), "bytes")
        }
    }

    /// The same flags as an argument list, to hand to the rank program.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![
            "-b".into(), self.min_bytes.clone(), "-e".into(), self.max_bytes.clone(),
            "-f".into(), self.step_factor.to_string(), "-i".into(), self.step_bytes.clone(),
            "-n".into(), self.iters.to_string(), "-w".into(), self.warmup.to_string(),
            "-c".into(), self.check.to_string(), "-d".into(), self.datatype.clone(),
            "-o".into(), self.op.clone(), "-r".into(), self.root.to_string(),
            "-a".into(), match self.average { Average::Rank0 => "0", Average::Mean => "1", Average::Min => "2", Average::Max => "3" }.into(),
        ];
        if self.corrupt {
            v.push("--test-corrupt".into());
        }
        v
    }
}

/// A list of collectives: `all_reduce,all_gather` or `all`.
pub fn parse_collectives(s: &str) -> Result<Vec<Collective>> {
    if s == "all" {
        return Ok(Collective::ALL.to_vec());
    }
    s.split(',').map(|c| Collective::parse(c.trim())).collect()
}
