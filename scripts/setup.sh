# Shared by scripts/serve and scripts/test: install what the course needs, when it is missing.
# Sourced, not run. Versions are pinned so every machine builds the same book.

MDBOOK_VERSION=0.5.4
MDBOOK_MERMAID_VERSION=0.17.1

# Bold only on a terminal; CI logs get plain text.
if [ -t 2 ]; then
    say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
else
    say() { printf '[setup] %s\n' "$*" >&2; }
fi

need_cargo() {
    # rustup installs cargo under ~/.cargo/bin (or $CARGO_HOME/bin), which a bare shell may not have on PATH.
    export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
    if ! command -v cargo >/dev/null 2>&1; then
        say "cargo not found: install Rust from your distribution or rustup, then re-run."
        exit 1
    fi
}

# cargo-install a tool at an exact version unless that version is already on PATH.
ensure_tool() { # name version
    local name=$1 version=$2
    if command -v "$name" >/dev/null 2>&1 && "$name" --version 2>/dev/null | grep -q "$version"; then
        return
    fi
    say "installing $name $version (cargo install --locked, a few minutes the first time)"
    cargo install --locked --quiet "$name@$version"
}

ensure_book_tools() {
    ensure_tool mdbook "$MDBOOK_VERSION"
    ensure_tool mdbook-mermaid "$MDBOOK_MERMAID_VERSION"
}

# Debian packages: installed when we are root, otherwise the exact command is printed.
ensure_apt() { # check-command package...
    local check=$1
    shift
    if eval "$check" >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing $* (apt-get)"
        if [ -z "${APT_UPDATED:-}" ]; then
            apt-get update -qq >/dev/null
            APT_UPDATED=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
    else
        say "missing: $*. Install with: sudo apt-get install -y $*"
        return 1
    fi
}

ensure_mpi() {
    # mpirun for the labs, the headers and libclang for the mpi crate's bindgen build.
    ensure_apt "command -v mpirun && test -e /usr/include/x86_64-linux-gnu/mpi.h -o -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h -o -n \"\$(find /usr/include /usr/lib -name mpi.h -print -quit 2>/dev/null)\"" \
        openmpi-bin libopenmpi-dev
    ensure_apt "test -n \"\$(find /usr/lib /usr/lib64 -name 'libclang*.so*' -print -quit 2>/dev/null)\"" libclang-dev
}
