//! Is there a GPU and an NCCL library here? Asked before anything touches cudarc, because
//! cudarc's dynamically loaded bindings panic on first use when a library is missing.

use std::path::{Path, PathBuf};

/// The environment variable that names the folder holding libnccl.so.2 (for example a Python
/// wheel's `site-packages/nvidia/nccl/lib`).
pub const NCCL_LIB_ENV: &str = "D03_NCCL_LIB";

/// The NCCL library file to load: from `--nccl-lib DIR`, else `$D03_NCCL_LIB`, else the loader's
/// search path (`libnccl.so.2`).
pub fn nccl_library(dir: Option<&Path>) -> PathBuf {
    let dir = dir.map(Path::to_path_buf).or_else(|| std::env::var_os(NCCL_LIB_ENV).map(PathBuf::from));
    match dir {
        Some(d) if d.is_dir() => d.join("libnccl.so.2"),
        Some(f) => f,
        None => PathBuf::from("libnccl.so.2"),
    }
}

/// Ok(number of CUDA devices) when the driver loads, initialises and sees a device, and the NCCL
/// library loads; Err(one line saying which part is missing) otherwise. The NCCL library stays
/// loaded, so cudarc's later `dlopen("libnccl.so.2")` finds this very copy by its soname.
pub fn probe(nccl_dir: Option<&Path>) -> Result<i32, String> {
    // SAFETY: loading a shared library runs its initialisers; libcuda and libnccl are designed for it.
    let cuda = ["libcuda.so.1", "libcuda.so"].into_iter().find_map(|n| unsafe { libloading::Library::new(n) }.ok());
    let Some(cuda) = cuda else {
        return Err("no CUDA driver here (libcuda.so.1 not found): the nccl backend needs an NVIDIA GPU and its driver".into());
    };
    // SAFETY: the signatures are those of the CUDA driver API (cuInit, cuDeviceGetCount).
    let count = unsafe {
        let init: libloading::Symbol<unsafe extern "C" fn(u32) -> i32> =
            cuda.get(b"cuInit\0").map_err(|e| format!("the CUDA driver has no cuInit: {e}"))?;
        let rc = init(0);
        if rc != 0 {
            return Err(format!("the CUDA driver loaded but cuInit failed with error {rc} (no usable GPU?)"));
        }
        let get: libloading::Symbol<unsafe extern "C" fn(*mut i32) -> i32> =
            cuda.get(b"cuDeviceGetCount\0").map_err(|e| format!("the CUDA driver has no cuDeviceGetCount: {e}"))?;
        let mut n = 0;
        let rc = get(&mut n);
        if rc != 0 || n == 0 {
            return Err("the CUDA driver sees no GPU".into());
        }
        n
    };
    std::mem::forget(cuda);
    let lib = nccl_library(nccl_dir);
    // SAFETY: as above.
    match unsafe { libloading::Library::new(&lib) } {
        Ok(l) => {
            std::mem::forget(l);
            Ok(count)
        }
        Err(e) => Err(format!(
            "no NCCL library at {} ({e}); pass --nccl-lib DIR or set {NCCL_LIB_ENV} (e.g. site-packages/nvidia/nccl/lib)",
            lib.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn probe_answers_in_one_line() {
        match super::probe(None) {
            Ok(n) => eprintln!("this machine has {n} CUDA device(s) and NCCL"),
            Err(why) => {
                eprintln!("skipped the GPU part: {why}");
                assert!(!why.contains('\n'));
            }
        }
    }

    #[test]
    fn library_path_comes_from_the_flag_first() {
        let p = super::nccl_library(Some(std::path::Path::new("/tmp")));
        assert_eq!(p, std::path::PathBuf::from("/tmp/libnccl.so.2"));
    }
}
