#!/usr/bin/env bash
# A single-node Slurm cluster on this machine: to try the job array in
# index-array.sbatch and submit.sh, and for the tests in examples/jobrunners.
#
#   cluster.sh start STATEDIR   start munged, slurmctld and slurmd
#   cluster.sh stop STATEDIR    cancel the cluster's jobs, stop the daemons
#
# Everything the cluster writes lives under STATEDIR: slurm.conf, the MUNGE
# key and socket, the controller's state, slurmd's spool, the logs (log/)
# and the daemons' pids. start begins from a clean state (no jobs kept from
# an earlier start); stop stops only the daemons start recorded there. Point
# the Slurm commands at the cluster with
#
#   export SLURM_CONF=STATEDIR/slurm.conf
#   sinfo; sbatch ...; squeue
#
# Needs root (the daemons run as root, slurmd runs jobs as their submitter)
# and Debian's packages:
#
#   apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge
#
# and a short host name (hostname -s) that resolves, e.g. by the line
# "127.0.0.1 NAME" in /etc/hosts. Nothing outside STATEDIR is written.
#
# Environment:
#   SLURMCTLD_PORT, SLURMD_PORT  the daemons' TCP ports (6817, 6818)
#   CPUS                         the node's CPUs, the jobs that run at once
#                                (default: nproc)
#   START_TIMEOUT                seconds each daemon may take to be ready (60)
set -euo pipefail

usage() {
  echo "usage: $0 start|stop STATEDIR" >&2
  exit 2
}
die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

[ $# -eq 2 ] || usage
action=$1
[ "$action" != start ] || mkdir -p "$2"
[ -d "$2" ] || die "$2: no such folder"
state=$(cd "$2" && pwd -P)
conf=$state/slurm.conf
sock=$state/munge/munge.socket
node=$(hostname -s)
ctld_port=${SLURMCTLD_PORT:-6817}
slurmd_port=${SLURMD_PORT:-6818}
cpus=${CPUS:-$(nproc)}
timeout=${START_TIMEOUT:-60}
export SLURM_CONF=$conf

# alive PID NAME: PID is a process named NAME that has not exited (a
# daemon's exited process may stay a zombie for a while: it does not count).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] || return 1
  stat=${stat##*) }
  case ${stat%% *} in Z | X | x) return 1 ;; esac
}

# recorded NAME: the pid start recorded for daemon NAME, if it still runs.
recorded() {
  local pid
  pid=$(cat "$state/$1.pid" 2>/dev/null) || return 1
  alive "$pid" "$1" && echo "$pid"
}

# logtail prints the end of each daemon's log (its standard error where it
# keeps no log file of its own).
logtail() {
  local f
  for f in "$state"/log/*; do
    [ -s "$f" ] || continue
    case $f in *.out) [ -s "${f%.out}.log" ] && continue ;; esac
    echo "--- last lines of $f" >&2
    tail -n 25 "$f" >&2
  done
}

# abort ends a start that failed: its logs, then the daemons it started.
abort() {
  logtail
  echo "cluster.sh: $*" >&2
  stop_daemon slurmd
  stop_daemon slurmctld
  stop_daemon munged
  exit 1
}

# wait_for NAME WHAT COMMAND...: run COMMAND until it succeeds, for at most
# $timeout seconds, while daemon NAME runs.
wait_for() {
  local name=$1 what=$2 pid
  shift 2
  pid=$(cat "$state/$name.pid")
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    alive "$pid" "$name" || abort "$name exited before $what"
    [ "$SECONDS" -lt "$deadline" ] || abort "$what: not after ${timeout}s"
    sleep 0.2
  done
}

# launch NAME COMMAND...: start a daemon in the foreground of its own
# session, its output to log/NAME.out, record its pid, and wait until that
# process runs the daemon.
launch() {
  local name=$1 pid i
  shift
  setsid "$@" </dev/null >>"$state/log/$name.out" 2>&1 &
  pid=$!
  echo "$pid" >"$state/$name.pid"
  for ((i = 0; i < 100; i++)); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] && return 0
    [ -e "/proc/$pid" ] || break
    sleep 0.05
  done
  alive "$pid" "$name" || abort "$name did not start"
}

munge_ok() {
  munge -n -S "$sock" | unmunge -S "$sock"
}

ctld_up() {
  scontrol ping | grep -q 'is UP'
}

node_idle() {
  [ "$(sinfo -h -n "$node" -o %T)" = idle ]
}

start() {
  [ "$(id -u)" -eq 0 ] || die "start: run as root"
  local c
  for c in munged munge unmunge slurmctld slurmd sinfo scontrol; do
    command -v "$c" >/dev/null ||
      die "$c not found: apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge"
  done
  getent hosts "$node" >/dev/null ||
    die "the host name $node does not resolve: add \"127.0.0.1 $node\" to /etc/hosts"
  [ "${#sock}" -lt 100 ] || die "$state: too long a path for MUNGE's socket"
  for c in munged slurmctld slurmd; do
    if recorded "$c" >/dev/null; then
      die "$c already runs for $state (pid $(cat "$state/$c.pid")): stop it first"
    fi
  done

  rm -rf "$state/ctld" "$state/spool" "$state/run" "$state/log"
  mkdir -p "$state/munge" "$state/ctld" "$state/spool" "$state/run" "$state/log"
  # Clients of every user reach the socket: the folder is theirs to enter,
  # the key root's alone.
  chmod 755 "$state/munge"
  [ -s "$state/munge/munge.key" ] ||
    mungekey --create --keyfile="$state/munge/munge.key" >/dev/null
  chmod 600 "$state/munge/munge.key"
  rm -f "$sock" "$sock.lock"

  cat >"$conf" <<EOF
# A single-node cluster for itarconv's examples, written by cluster.sh.
ClusterName=itarconv
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/run/slurmctld.pid
SlurmdPidFile=$state/run/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No systemd, cgroups or accounting database needed.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
ReturnToService=2
# Finished jobs stay visible to scontrol and squeue for 5 minutes.
MinJobAge=300
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

  launch munged munged --foreground --socket="$sock" \
    --key-file="$state/munge/munge.key" --log-file="$state/log/munged.log" \
    --pid-file="$state/run/munged.pid" --seed-file="$state/munge/munged.seed"
  wait_for munged "munged answering on $sock" munge_ok
  launch slurmctld slurmctld -D -c -f "$conf"
  wait_for slurmctld "slurmctld answering on port $ctld_port" ctld_up
  launch slurmd slurmd -D -N "$node" -f "$conf"
  wait_for slurmd "node $node idle" node_idle

  cat <<EOF
Slurm runs: node $node, $cpus CPUs, state in $state.
  export SLURM_CONF=$conf
  sinfo; sbatch ...; squeue
Stop it with: $0 stop $state
EOF
}

# stop_daemon NAME: SIGTERM, then SIGKILL after 15 s.
stop_daemon() {
  local name=$1 pid i
  pid=$(recorded "$name") || {
    rm -f "$state/$name.pid"
    return 0
  }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 75; i++)); do
    alive "$pid" "$name" || break
    sleep 0.2
  done
  if alive "$pid" "$name"; then
    echo "cluster.sh: $name (pid $pid) ignored SIGTERM for 15s: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 25; i++)); do
      alive "$pid" "$name" || break
      sleep 0.2
    done
    alive "$pid" "$name" && die "$name (pid $pid) does not stop"
  fi
  rm -f "$state/$name.pid"
}

stop() {
  local jobs i
  [ -f "$conf" ] || die "$state holds no cluster (no slurm.conf)"
  # Cancel the jobs first, so that no job step outlives slurmd.
  if recorded slurmctld >/dev/null && recorded munged >/dev/null; then
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      for ((i = 0; i < 75; i++)); do
        [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
        sleep 0.2
      done
    fi
  fi
  stop_daemon slurmd
  stop_daemon slurmctld
  stop_daemon munged
  echo "Slurm stopped ($state)."
}

case $action in
start) start ;;
stop) stop ;;
*) usage ;;
esac
