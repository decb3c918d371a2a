#!/usr/bin/env bash
# Submits one run to Slurm: the trainer (training + evaluation) and a job array of self-play
# workers, all on one run directory on a shared filesystem. Prints the two job ids.
#
#   scripts/slurm/submit.sh CONFIG --workers N [--gpus-per-worker K] [--trainer-gpus G]
#       [--cpus-per-worker C] [--partition P] [--runs-dir DIR] [--time T] [--binary PATH]
#       [-- EXTRA_SBATCH_ARGS...]
#
# The run directory (DIR/<name>, default runs/) is created here first, so both jobs find it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
CONFIG=$1; shift
WORKERS="" GPUS=0 TRAINER_GPUS=0 CPUS=1 PARTITION="" RUNS=runs TIME="" BIN=""
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    --workers) WORKERS=$2; shift 2 ;;
    --gpus-per-worker) GPUS=$2; shift 2 ;;
    --trainer-gpus) TRAINER_GPUS=$2; shift 2 ;;
    --cpus-per-worker) CPUS=$2; shift 2 ;;
    --partition) PARTITION=$2; shift 2 ;;
    --runs-dir) RUNS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --binary) BIN=$2; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "submit.sh: unknown argument $1" >&2; usage ;;
  esac
done
case $WORKERS in ''|*[!0-9]*|0) echo "submit.sh: --workers N (N >= 1) is required" >&2; exit 2 ;; esac
BIN=${BIN:-$(cd "$here/../.." && pwd)/target/release/trainer}
[ -x "$BIN" ] || { echo "submit.sh: $BIN not found: build it (cargo build --release -p trainer) or give --binary" >&2; exit 1; }
RUN=$("$BIN" train --config "$CONFIG" --runs-dir "$RUNS" --init-only)
RUN=$(cd "$RUN" && pwd)
common=()
[ -n "$PARTITION" ] && common+=(--partition "$PARTITION")
[ -n "$TIME" ] && common+=(--time "$TIME")
tr_args=("${common[@]}" --chdir "$RUN")
[ "$TRAINER_GPUS" != 0 ] && tr_args+=(--gpus "$TRAINER_GPUS")
w_args=("${common[@]}" --chdir "$RUN" --array "0-$((WORKERS - 1))" --cpus-per-task "$CPUS")
[ "$GPUS" != 0 ] && w_args+=(--gpus-per-task "$GPUS")
trainer_job=$(sbatch --parsable "${tr_args[@]}" "${EXTRA[@]}" "$here/trainer.sbatch" "$BIN" "$RUN")
worker_job=$(sbatch --parsable "${w_args[@]}" "${EXTRA[@]}" "$here/worker.sbatch" "$BIN" "$RUN")
echo "run directory: $RUN"
echo "trainer job: ${trainer_job%%;*}"
echo "worker array: ${worker_job%%;*} ($WORKERS tasks)"
echo "progress: $BIN status --run $RUN"
