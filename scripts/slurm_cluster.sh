#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying `transnormer sweep --launcher slurm` and for
# the tests that need one (CI). Needs the Debian packages slurm-wlm and munge, and root.
#   bash scripts/slurm_cluster.sh start DIR   # writes DIR/slurm.conf, starts munged, slurmctld, slurmd
#   export SLURM_CONF=DIR/slurm.conf          # every Slurm command reads it
#   bash scripts/slurm_cluster.sh stop DIR    # stops them by pid (slurmd, slurmctld; munged if it started it)
# With `start DIR --if-possible` (the tests' fixture), a machine that cannot run a cluster (not root,
# Slurm or munge not installed) is no error: the reason goes to DIR/skipped, and no slurm.conf is
# written, so the Slurm tests skip themselves.
# The node offers this machine's cores and a little less than its memory; accounting is off, so a
# finished job's state comes from `scontrol show job` (for MinJobAge, 300 s), not sacct.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR [--if-possible]" >&2; exit 2; }
[ $# -eq 2 ] || [ $# -eq 3 ] && [ "${3:---if-possible}" = --if-possible ] || usage
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
conf=$dir/slurm.conf
if_possible=${3:-}

# Says why no cluster can start: an error, or with --if-possible a note in DIR/skipped and exit 0.
cannot() {
  if [ -n "$if_possible" ]; then
    echo "$1" > "$dir/skipped"
    echo "slurm_cluster: not started: $1" >&2
    exit 0
  fi
  echo "$0: $1" >&2
  exit 2
}

# Sends TERM to the process in pid file $1 and waits up to 10 s for it to end.
stop_pid() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$file"
}

case $action in
  start)
    rm -f "$conf" "$dir/skipped"
    for tool in munged slurmctld slurmd sinfo; do
      command -v "$tool" > /dev/null || cannot "$tool not found: apt-get install slurm-wlm munge"
    done
    [ "$(id -u)" -eq 0 ] || cannot "a Slurm cluster's daemons need root (slurmd, and munged as the munge user)"
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    mem_mib=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
    cat > "$conf" <<EOF
ClusterName=transnormer
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem_mib State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$conf
    mkdir -p /run/munge && chown munge:munge /run/munge
    if ! { [ -f /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; }; then
      runuser -u munge -- /usr/sbin/munged
      for _ in $(seq 1 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
      cp /run/munge/munged.pid "$dir/munged.pid"  # started here: stop stops it
    fi
    slurmctld
    slurmd -N localhost
    for _ in $(seq 1 150); do
      if [ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ]; then
        echo "slurm_cluster: up; export SLURM_CONF=$conf" >&2
        exit 0
      fi
      sleep 0.2
    done
    echo "slurm_cluster: the node did not become idle in 30 s; see $dir/log/" >&2
    exit 1
    ;;
  stop)
    stop_pid "$dir/slurmd.pid"
    stop_pid "$dir/slurmctld.pid"
    stop_pid "$dir/munged.pid"
    rm -f "$conf"
    echo "slurm_cluster: stopped" >&2
    ;;
  *) usage ;;
esac
