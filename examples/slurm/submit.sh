#!/usr/bin/env bash
# Submits a partitioned itarconv index run to Slurm: a job array of N tasks
# (index-array.sbatch), each indexing its share of the shards into a part
# beside OUT, and the merge (merge.sbatch), which Slurm starts once every task
# has succeeded and which writes OUT from the parts.
#
#   submit.sh [--tasks N] [--wait] [--timeout SECONDS] OUT SHARD...
#   submit.sh --missing --tasks N [--wait] OUT SHARD...
#
#   --tasks N     the number of tasks (4)
#   --wait        wait for the merge; exit 0 when it succeeded, 1 when it
#                 failed or was cancelled (a task failed), printing the logs
#   --timeout S   with --wait, give up after S seconds (exit 124)
#   --missing     rerun the tasks of an earlier run of N tasks whose parts
#                 itarconv merge --missing OUT lists, then the merge
#
# SHARD... as itarconv index takes them: files, a directory, a brace pattern
# or a glob (quoted, itarconv expands it), or @FILE. Give the tasks and the
# merge the same OUT, SHARDs and N, on a file system every node sees; relative
# paths are taken from the directory submit.sh runs in.
#
# Environment:
#   ITARCONV     the itarconv binary (default: itarconv on PATH)
#   FORMAT       itarconv index --format (default: itarconv's, taridx)
#   LOG_DIR      where the jobs' output goes (default: the current directory)
#   SBATCH_ARGS  more options for both sbatch commands (--partition=...)
#   SLURM_CONF   the cluster's slurm.conf, as for every Slurm command
#
# It prints the array's and the merge's job ids.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
tasks=4
wait=0
timeout=0
missing=0
while [ $# -gt 0 ]; do
  case $1 in
  --tasks) tasks=$2; shift 2 ;;
  --tasks=*) tasks=${1#*=}; shift ;;
  --wait) wait=1; shift ;;
  --timeout) timeout=$2; shift 2 ;;
  --timeout=*) timeout=${1#*=}; shift ;;
  --missing) missing=1; shift ;;
  --) shift; break ;;
  -*) echo "submit.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "usage: $0 [--tasks N] [--wait] [--timeout SECONDS] [--missing] OUT SHARD..." >&2
  exit 2
fi
case $tasks in '' | *[!0-9]* | 0) echo "submit.sh: --tasks $tasks: not a number of tasks" >&2; exit 2 ;; esac
out=$1
shift
if [ -z "${SLURM_CONF:-}" ] && [ ! -e /etc/slurm/slurm.conf ]; then
  echo "submit.sh: no /etc/slurm/slurm.conf: set SLURM_CONF to the cluster's slurm.conf" >&2
  exit 1
fi

itarconv=${ITARCONV:-itarconv}
case $itarconv in
*/*) itarconv=$(cd "$(dirname "$itarconv")" && pwd -P)/$(basename "$itarconv") ;;
*) itarconv=$(command -v "$itarconv") || { echo "submit.sh: $itarconv not found: set ITARCONV" >&2; exit 1; } ;;
esac
export ITARCONV=$itarconv
log_dir=${LOG_DIR:-.}
mkdir -p "$log_dir" "$(dirname "$out")"
# shellcheck disable=SC2206
extra=(${SBATCH_ARGS:-})

array=0-$((tasks - 1))
unset TASKS
if [ "$missing" -eq 1 ]; then
  todo=$("$itarconv" merge --missing "$out" | paste -sd, -)
  array=$todo
  # These tasks are some of N: each is given its task number explicitly.
  export TASKS=$tasks
fi

deps=()
if [ -n "$array" ]; then
  array_id=$(sbatch --parsable "${extra[@]}" --array="$array" \
    --output="$log_dir/itarconv-index-%A_%a.out" \
    "$here/index-array.sbatch" "$out" "$@")
  array_id=${array_id%%;*}
  echo "index: job array $array_id, tasks $array"
  deps=(--dependency="afterok:$array_id" --kill-on-invalid-dep=yes)
else
  echo "index: no task left to run"
fi
merge_id=$(sbatch --parsable "${extra[@]}" "${deps[@]}" \
  --output="$log_dir/itarconv-merge-%j.out" \
  "$here/merge.sbatch" "$out")
merge_id=${merge_id%%;*}
echo "merge: job $merge_id"

[ "$wait" -eq 1 ] || exit 0

# No accounting database is needed: scontrol knows a finished job for
# MinJobAge seconds (300 by default).
job_state() {
  scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1
}

show_logs() {
  local f
  [ -n "${array_id:-}" ] && scontrol show job -o "$array_id" 2>/dev/null |
    sed -n 's/^JobId=\([0-9]*\) .*ArrayTaskId=\([^ ]*\) .*JobState=\([A-Z_]*\) .*ExitCode=\([^ ]*\).*/  task \2: \3, exit \4 (job \1)/p' >&2
  for f in "$log_dir"/itarconv-index-"${array_id:-none}"_*.out "$log_dir/itarconv-merge-$merge_id.out"; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    tail -n 20 "$f" >&2
  done
}

start=$SECONDS
while :; do
  state=$(job_state "$merge_id")
  case $state in
  COMPLETED)
    echo "merge: done in $((SECONDS - start))s: $out"
    exit 0
    ;;
  PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | REQUEUE_HOLD | RESIZING | SIGNALING | STAGE_OUT) ;;
  '')
    echo "submit.sh: Slurm no longer knows merge job $merge_id" >&2
    exit 1
    ;;
  *)
    echo "submit.sh: merge job $merge_id: $state" >&2
    show_logs
    echo "rerun the tasks that failed: $0 --missing --tasks $tasks --wait$(printf ' %q' "$out" "$@")" >&2
    exit 1
    ;;
  esac
  if [ "$timeout" -gt 0 ] && [ $((SECONDS - start)) -ge "$timeout" ]; then
    echo "submit.sh: merge job $merge_id still $state after ${timeout}s" >&2
    show_logs
    exit 124
  fi
  sleep 0.5
done
