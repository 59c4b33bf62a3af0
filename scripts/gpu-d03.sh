#!/usr/bin/env bash
# D03 on a GPU machine: build here, run the harness there, bring the transcripts back.
#
#   scripts/gpu-d03.sh build            here: builds target/gpu-d03/d03-rank without MPI
#                                       (it needs only libc at load time; CUDA and NCCL are
#                                       opened at run time), so it runs on any Linux GPU box
#   scripts/gpu-d03.sh remote OUTDIR    there: runs the nccl backend on the GPUs it finds and
#                                       writes OUTDIR/d03/gpu-*.txt (nccl-tests format)
#   scripts/gpu-d03.sh collect OUTDIR   here: copies OUTDIR/d03/gpu-*.txt into outputs/d03/gpu/
#
# With this project's device tool: run `scripts/gpu-d03.sh build`, then on the device
#   command: bash scripts/gpu-d03.sh remote "$OUT"     carry: ["target/gpu-d03"]
# and `scripts/gpu-d03.sh collect <files_at>` afterwards.
#
# Environment: D03_NCCL_LIB = folder holding libnccl.so.2 (else found from the nvidia-nccl
# Python wheel or ldconfig); D03_RANK = the harness binary (default target/gpu-d03/d03-rank).
# Exit status: 0 ran, 2 no GPU / no NCCL (one line on stderr and in OUTDIR/d03/gpu-status.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
    local target="${CARGO_TARGET_DIR:-target}"
    cargo build --release -q -p d03-harness --no-default-features
    mkdir -p target/gpu-d03
    cp "$target/release/d03-rank" target/gpu-d03/d03-rank
    echo "built target/gpu-d03/d03-rank (carry target/gpu-d03 to the GPU machine)"
}

find_nccl() {
    if [[ -n "${D03_NCCL_LIB:-}" ]]; then echo "$D03_NCCL_LIB"; return; fi
    local py
    py=$(python3 -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null || true)
    if [[ -n "$py" && -e "$py/libnccl.so.2" ]]; then echo "$py"; return; fi
    local sys
    sys=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF; exit}')
    if [[ -n "$sys" ]]; then dirname "$sys"; return; fi
    echo ""
}

remote() {
    local out="${1:?usage: gpu-d03.sh remote OUTDIR}"
    local bin="${D03_RANK:-target/gpu-d03/d03-rank}"
    mkdir -p "$out/d03"
    local nccl; nccl=$(find_nccl)
    local args=(--backend nccl)
    [[ -n "$nccl" ]] && args+=(--nccl-lib "$nccl")
    # The harness checks driver, GPU and NCCL itself and says why in one line if one is missing.
    local gpus=0
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi > "$out/d03/gpu-nvidia-smi.txt" 2>&1 || true
        gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    fi
    local why
    if ! why=$("$bin" "${args[@]}" -g 1 -b 8 -e 8 -n 1 -w 0 2>&1 >/dev/null); then
        why=$(echo "$why" | tail -1)
        echo "${why:-the harness failed without a message}" | tee "$out/d03/gpu-status.txt" >&2
        exit 2
    fi
    echo "GPUs: $gpus, NCCL: ${nccl:-loader path}" > "$out/d03/gpu-status.txt"
    run() { local name=$1; shift; echo "running $name" >&2; "$bin" "${args[@]}" "$@" > "$out/d03/gpu-$name.txt" 2>&1 || true; }
    # One GPU: every collective is a device-memory copy (busbw 0), and small sizes show NCCL's
    # launch latency floor.
    for c in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
        run "1x-$c" -g 1 --collective "$c" -b 8 -e 1G -f 4 -n 20 -w 5
    done
    run "1x-latency" -g 1 --collective all_reduce -b 8 -e 64K -f 2 -n 1000 -w 50
    run "1x-types" -g 1 --collective all_reduce -b 1M -e 64M -f 8 -d all -o all
    # Several GPUs: the real sweep, one process driving all of them.
    if (( gpus > 1 )); then
        for c in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
            run "${gpus}x-$c" -g "$gpus" --collective "$c" -b 8 -e 8G -f 2 -n 20 -w 5
        done
    fi
    echo "transcripts in $out/d03" >&2
}

collect() {
    local from="${1:?usage: gpu-d03.sh collect OUTDIR}"
    mkdir -p outputs/d03/gpu
    cp "$from"/d03/gpu-*.txt outputs/d03/gpu/
    ls outputs/d03/gpu
}

case "${1:-}" in
    build) build ;;
    remote) shift; remote "$@" ;;
    collect) shift; collect "$@" ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
esac
