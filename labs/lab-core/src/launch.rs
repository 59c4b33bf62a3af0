//! Starting MPI rank programs: `mpirun` here, `mpirun --hostfile` or `srun` on a real cluster.
//!
//! MPI code lives only in the rank programs (separate binaries that link Open MPI through the
//! `mpi` crate); the CLI builds them on demand with cargo and starts them through this module,
//! so the analytic labs never need MPI to build. A rank program reports back by printing one
//! JSON document on rank 0's stdout; everything else goes to stderr.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::error::Failure;

/// How to start ranks.
#[derive(Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Launcher {
    /// Open MPI's (or MPICH's) `mpirun`.
    Mpirun,
    /// Slurm's `srun`, inside an allocation (`salloc -N ...`).
    Srun,
}

/// A launch of `ranks` copies of a rank program.
#[derive(Clone, Debug)]
pub struct Launch {
    pub ranks: u32,
    pub launcher: Launcher,
    /// An MPI hostfile for a real cluster (mpirun only).
    pub hostfile: Option<PathBuf>,
    /// Open MPI MCA parameters, passed as `--mca KEY VALUE`.
    pub mca: Vec<(String, String)>,
    /// Anything else for the launcher, e.g. `--bind-to core`.
    pub extra: Vec<String>,
    /// A hard limit: past it the whole job is killed and the lab fails with a clear message.
    pub timeout: Duration,
}

/// What came back from the ranks.
#[derive(Debug)]
pub struct RankOutput {
    pub stdout: String,
    pub stderr: String,
}

impl Launch {
    pub fn new(ranks: u32) -> Self {
        Launch {
            ranks,
            launcher: Launcher::Mpirun,
            hostfile: None,
            mca: Vec::new(),
            extra: Vec::new(),
            timeout: Duration::from_secs(300),
        }
    }

    /// True when this launch puts more ranks than cores on this machine (no hostfile):
    /// fine for correctness, meaningless for timing, because idle ranks busy-poll.
    pub fn oversubscribed(&self) -> bool {
        self.hostfile.is_none() && self.launcher == Launcher::Mpirun && self.ranks as usize > crate::host::cores()
    }

    /// The launcher command line, without the program.
    pub fn command(&self, program: &Path, args: &[String]) -> Result<Command> {
        if self.ranks == 0 {
            bail!("--ranks must be at least 1");
        }
        let mut cmd = match self.launcher {
            Launcher::Mpirun => {
                let mut c = Command::new(find_mpirun()?);
                c.arg("-n").arg(self.ranks.to_string());
                if let Some(h) = &self.hostfile {
                    if !h.is_file() {
                        bail!("hostfile {} does not exist", h.display());
                    }
                    c.arg("--hostfile").arg(h);
                } else if self.oversubscribed() {
                    c.arg("--oversubscribe");
                }
                for (k, v) in &self.mca {
                    c.arg("--mca").arg(k).arg(v);
                }
                // Open MPI's own backstop, in case our kill below cannot reach remote ranks.
                c.arg("--timeout").arg(self.timeout.as_secs().max(1).to_string());
                // Open MPI refuses to run as root without both variables; harmless otherwise.
                c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
                c
            }
            Launcher::Srun => {
                let mut c = Command::new(which("srun").context("srun not found: run inside a Slurm allocation, or use --launcher mpirun")?);
                c.arg("-n").arg(self.ranks.to_string());
                c
            }
        };
        cmd.args(&self.extra).arg(program).args(args);
        Ok(cmd)
    }

    /// Run the ranks to completion and return their output. A non-zero exit, a crash or the
    /// timeout becomes a [`Failure`] that quotes the end of stderr.
    pub fn run(&self, program: &Path, args: &[String]) -> Result<RankOutput> {
        let mut cmd = self.command(program, args)?;
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().with_context(|| format!("starting {:?}", cmd.get_program()))?;
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        // Drain both pipes on threads so a chatty rank cannot block on a full pipe.
        let out_t = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let err_t = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let start = Instant::now();
        // Our own limit is a little longer than mpirun's, so mpirun normally reports first.
        let limit = self.timeout + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = out_t.join().unwrap_or_default();
        let stderr = err_t.join().unwrap_or_default();
        match status {
            Some(s) if s.success() => Ok(RankOutput { stdout, stderr }),
            Some(s) => Err(Failure(format!(
                "the MPI job failed ({}): {}",
                s.code().map(|c| format!("exit {c}")).unwrap_or_else(|| "killed by a signal".into()),
                tail(&stderr)
            ))
            .into()),
            None => Err(Failure(format!(
                "the MPI job did not finish within {} s and was killed: {}",
                self.timeout.as_secs(),
                tail(&stderr)
            ))
            .into()),
        }
    }
}

/// The informative part of the ranks' stderr, on one line: Open MPI's "Process name" and
/// "Exit code" lines when it printed them (which rank died and how), else the last line that
/// mentions an error, a rank or an abort, else the last line.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '-' || c == '='))
        .collect();
    let who: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("Process name:") || l.starts_with("Exit code:") || l.starts_with("Signal:"))
        .collect();
    if !who.is_empty() {
        let squeezed: Vec<String> = who.iter().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        return squeezed.join("; ");
    }
    match lines.iter().rev().find(|l| l.contains("error") || l.contains("rank") || l.contains("abort")) {
        Some(l) => l.to_string(),
        None => lines.last().map(|l| l.to_string()).unwrap_or_else(|| "no output on stderr".into()),
    }
}

/// Find an executable on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// `mpirun`, or a one-line error that says how to install it.
pub fn find_mpirun() -> Result<PathBuf> {
    which("mpirun").ok_or_else(|| {
        anyhow::anyhow!(
            "mpirun not found: install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev libclang-dev)"
        )
    })
}

/// `Open MPI 4.1.4`, from `mpirun --version`; "unknown MPI" if it cannot be read.
pub fn mpi_version() -> String {
    let Some(mpirun) = which("mpirun") else { return "no MPI".into() };
    let out = Command::new(mpirun).arg("--version").output();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    let first = text.lines().next().unwrap_or("");
    // "mpirun (Open MPI) 4.1.4" -> "Open MPI 4.1.4"; MPICH prints "HYDRA build details:" first.
    if let (Some(a), Some(b)) = (first.find('('), first.find(')')) {
        format!("{} {}", &first[a + 1..b], first[b + 1..].trim())
    } else if text.contains("HYDRA") {
        "MPICH (Hydra)".into()
    } else {
        "unknown MPI".into()
    }
}

/// Build a rank program with cargo (release) if needed and return its path. Uses the cargo that
/// is running `cargo lab` (`$CARGO`), so the build shares the workspace's target folder.
pub fn rank_program(package: &str, bin: &str) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let out = Command::new(&cargo)
        .args(["build", "--release", "--quiet", "--message-format=json", "-p", package, "--bin", bin, "--manifest-path"])
        .arg(&manifest)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running cargo to build the rank program {bin}"))?;
    if !out.status.success() {
        bail!("building the rank program {bin} failed (is libopenmpi-dev installed? apt-get install openmpi-bin libopenmpi-dev libclang-dev)");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        if let Ok(msg) = serde_json::from_str::<serde_json::Value>(line)
            && msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == bin
            && let Some(exe) = msg["executable"].as_str()
        {
            return Ok(PathBuf::from(exe));
        }
    }
    bail!("cargo built {bin} but did not say where it put it")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_ranks_is_bad_input() {
        let l = Launch::new(0);
        assert!(l.command(Path::new("/bin/true"), &[]).unwrap_err().to_string().contains("at least 1"));
    }

    #[test]
    fn missing_hostfile_is_bad_input() {
        if which("mpirun").is_none() {
            eprintln!("skipped: mpirun not installed");
            return;
        }
        let mut l = Launch::new(2);
        l.hostfile = Some("/nonexistent/hosts".into());
        assert!(l.command(Path::new("/bin/true"), &[]).unwrap_err().to_string().contains("does not exist"));
    }

    #[test]
    fn stderr_tail_picks_the_informative_line() {
        assert_eq!(tail("hello\n----\nrank 1 aborted\n\n"), "rank 1 aborted");
        assert_eq!(tail(""), "no output on stderr");
        let ompi = "----\nmpirun detected that one or more processes exited with non-zero status\n\n  Process name: [[4242,1],1]\n  Exit code:    3\n----\n";
        assert_eq!(tail(ompi), "Process name: [[4242,1],1]; Exit code: 3");
    }
}
