#!/usr/bin/env bash
# A two-node Ray cluster on the loopback of one machine: a head and a second node, each its own
# `ray start --block` in its own process group, token authentication on with a token of its own.
#
#   tools/ray_cluster.sh up [DIR]          start the head and the second node (state in DIR); after
#                                          kill-node, start the second node again
#   tools/ray_cluster.sh down [DIR]        stop both (only the processes this script started)
#   tools/ray_cluster.sh kill-node [DIR]   SIGKILL the second node (what a crashed machine looks like),
#                                          back when the head has marked it dead
#   tools/ray_cluster.sh run CMD...        up, CMD with the cluster's address and token, down; inside
#                                          a network namespace of its own (`unshare -rn`) where the
#                                          kernel allows it, so that nothing listens beyond it
#
# After `up`, `source DIR/env` gives a shell the cluster's RAY_ADDRESS, RAY_AUTH_MODE and
# RAY_AUTH_TOKEN_PATH (every driver and `ray` command needs them: docs/rllib.md, "Token authentication").
# Settings: RAY (the ray command; default: the one beside $PYTHON, else on PATH), PYTHON, RAY_PORT
# (default 6379), HEAD_CPUS / NODE_CPUS (default 1 each), RAY_CLUSTER_DIR (default DIR), DASHBOARD
# (true: the head's dashboard on 127.0.0.1:8265, needs ray[default]; default false), NODES (1: the
# head alone, for comparison; default 2), NODE2_HIDE (a folder the second node must not see, e.g. a
# driver's checkout: an empty tmpfs is mounted over it in a mount namespace of the node's own, as a
# machine without that checkout would be; needs `unshare -m`, or `unshare -rm` when not root).
set -euo pipefail

cmd=${1:-}
shift || true

PYTHON=${PYTHON:-python}
if [[ -z "${RAY:-}" ]]; then
    RAY=$(dirname "$(command -v "$PYTHON")")/ray
    [[ -x "$RAY" ]] || RAY=ray
fi
RAY_PORT=${RAY_PORT:-6379}
HEAD_CPUS=${HEAD_CPUS:-1}
NODE_CPUS=${NODE_CPUS:-1}

state_dir() { echo "${1:-${RAY_CLUSTER_DIR:-${TMPDIR:-/tmp}/dragonstones-ray-cluster}}"; }

# One node: `ray start --block` as the leader of a new process group (setsid), so that `down` and
# `kill-node` end that node's raylet, workers and agents by group id, and nothing else on the machine.
start_node() {  # name, args...
    local dir=$1 name=$2 hide=()
    shift 2
    if [[ "$name" == node2 && -n "${NODE2_HIDE:-}" ]]; then
        # shellcheck disable=SC2016
        # root (here, or in run's namespace) may unshare mounts alone; others need a user namespace too
        local flags=-rm
        [[ $EUID -eq 0 ]] && flags=-m
        hide=(unshare "$flags" sh -c 'mount -t tmpfs none "$0" && exec "$@"' "$NODE2_HIDE")
    fi
    setsid "${hide[@]}" "$RAY" start --block --node-ip-address 127.0.0.1 --dashboard-agent-listen-port 0 \
        --metrics-export-port 0 --disable-usage-stats --temp-dir "$(cat "$dir/temp_dir")" "$@" \
        >"$dir/$name.log" 2>&1 &
    echo $! >"$dir/$name.pid"
}

wait_nodes() {  # dir, expected count
    local dir=$1 want=$2 i
    for i in $(seq 1 120); do
        if "$RAY" status --address "127.0.0.1:$RAY_PORT" 2>/dev/null | grep -c "^ [0-9]* node_" \
            | grep -qx "$want"; then
            return 0
        fi
        sleep 0.5
    done
    echo "ray_cluster: $want node(s) did not come up; see $dir/*.log" >&2
    return 1
}

up() {
    local dir
    dir=$(state_dir "${1:-}")
    mkdir -p "$dir"
    chmod 700 "$dir"
    # Ray 2.60 turns token authentication on when ~/.ray/auth_token exists: this cluster always has it
    # on, with a token of its own (the same file for every node and driver).
    [[ -s "$dir/auth_token" ]] || (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$dir/auth_token")
    cat >"$dir/env" <<EOF
export RAY_ADDRESS=127.0.0.1:$RAY_PORT
export RAY_AUTH_MODE=token
export RAY_AUTH_TOKEN_PATH=$dir/auth_token
EOF
    # shellcheck disable=SC1091
    source "$dir/env"
    # Ray's files of its own (sessions, logs, sockets): not /tmp/ray, where `ray start --head` would
    # leave ray_current_cluster, which every later ray.init() on the machine tries to join. A short
    # path: Ray's socket paths must fit in 107 characters.
    [[ -s "$dir/temp_dir" ]] || mktemp -d "${TMPDIR:-/tmp}/rayc-XXXXXX" >"$dir/temp_dir"
    # `up` again after `kill-node` brings the second node back (a node of its own, a new node id)
    if [[ ! -f "$dir/head.pid" ]]; then
        start_node "$dir" head --head --port "$RAY_PORT" --num-cpus "$HEAD_CPUS" \
            --include-dashboard "${DASHBOARD:-false}" --dashboard-host 127.0.0.1
        wait_nodes "$dir" 1
    fi
    if [[ "${NODES:-2}" == 2 && ! -f "$dir/node2.pid" ]]; then
        start_node "$dir" node2 --address "127.0.0.1:$RAY_PORT" --num-cpus "$NODE_CPUS"
        wait_nodes "$dir" 2
    fi
    echo "ray_cluster: ${NODES:-2} node(s) at 127.0.0.1:$RAY_PORT; source $dir/env"
}

stop_node() {  # dir, name, signal
    local pid_file=$1/$2.pid pgid i
    [[ -f "$pid_file" ]] || return 0
    pgid=$(cat "$pid_file")
    kill "-$3" -- "-$pgid" 2>/dev/null || true
    # SIGTERM makes Ray drain for up to 30 s: a second later, whatever is left of the group is killed
    for i in 1 2 3 4 5; do
        kill -0 -- "-$pgid" 2>/dev/null || break
        sleep 0.2
    done
    kill -KILL -- "-$pgid" 2>/dev/null || true
    rm -f "$pid_file"
}

down() {
    local dir
    dir=$(state_dir "${1:-}")
    stop_node "$dir" node2 TERM
    stop_node "$dir" head TERM
    if [[ -s "$dir/temp_dir" ]]; then
        rm -rf "$(cat "$dir/temp_dir")"
        rm -f "$dir/temp_dir"
    fi
}

in_namespace() {
    if [[ -z "${RAY_CLUSTER_NETNS:-}" ]] && unshare -rn true 2>/dev/null; then
        RAY_CLUSTER_NETNS=1 exec unshare -rn "$0" run "$@"
    fi
    if [[ -n "${RAY_CLUSTER_NETNS:-}" ]]; then
        ip link set lo up
        echo "ray_cluster: in a network namespace of its own (loopback only)"
    else
        echo "ray_cluster: no network namespace here (unshare -rn refused): loopback addresses only" >&2
    fi
}

case "$cmd" in
    up) up "${1:-}" ;;
    down) down "${1:-}" ;;
    kill-node)
        # back when the head has marked it dead (its missed heartbeats: about 10 s)
        stop_node "$(state_dir "${1:-}")" node2 KILL
        wait_nodes "$(state_dir "${1:-}")" 1
        ;;
    run)
        [[ "${1:-}" == "--" ]] && shift
        [[ $# -gt 0 ]] || { echo "usage: $0 run CMD..." >&2; exit 2; }
        in_namespace "$@"
        dir=$(state_dir)
        export RAY_CLUSTER_DIR=$dir
        trap 'down "$dir"' EXIT
        up "$dir"
        rc=0
        "$@" || rc=$?
        exit "$rc"
        ;;
    *)
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
