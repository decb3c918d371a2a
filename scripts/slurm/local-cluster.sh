#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying the scripts and for the tests (root,
# Debian's slurm-wlm and munge): munged, slurmctld and slurmd with their config, state, logs
# and sockets in DIR. `start` prints the line to export (SLURM_CONF=...); `stop` ends the three
# daemons by their process ids.
#
#   scripts/slurm/local-cluster.sh start DIR [CPUS]
#   scripts/slurm/local-cluster.sh stop DIR
set -euo pipefail
cmd=${1:?usage: local-cluster.sh start|stop DIR [CPUS]}
DIR=${2:?usage: local-cluster.sh start|stop DIR [CPUS]}
CPUS=${3:-8}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
stop() {
  for f in slurmd.pid slurmctld.pid munged.pid; do
    if [ -s "$DIR/$f" ]; then
      pid=$(cat "$DIR/$f")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$DIR/$f"
    fi
  done
}
case $cmd in
  stop) stop; exit 0 ;;
  start) ;;
  *) echo "usage: local-cluster.sh start|stop DIR [CPUS]" >&2; exit 2 ;;
esac
for bin in munged slurmctld slurmd sbatch; do
  command -v $bin >/dev/null || { echo "local-cluster.sh: $bin missing (apt-get install slurm-wlm munge)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "local-cluster.sh: needs root" >&2; exit 1; }
mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
chmod 700 "$DIR/munge"
[ -s "$DIR/munge/munge.key" ] || dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$DIR/munge/munge.key"
munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.sock" \
  --pid-file="$DIR/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
host=$(hostname -s)
# Ports above the defaults, so a cluster the machine already runs is not disturbed.
cat > "$DIR/slurm.conf" <<CONF
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF=$DIR/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
  if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "local-cluster.sh: the node did not come up; logs in $DIR" >&2
tail -5 "$DIR/slurmctld.log" "$DIR/slurmd.log" >&2 || true
stop
exit 1
