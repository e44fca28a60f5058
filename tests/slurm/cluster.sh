#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the `slurm` tests and for trying sweeps locally.
#
#   tests/slurm/cluster.sh start    # munged + slurmctld + slurmd; idempotent; prints the SLURM_CONF line
#   tests/slurm/cluster.sh status   # exit 0 when all three run and the node answers
#   tests/slurm/cluster.sh stop     # cancels the cluster's jobs, stops the daemons it started; idempotent
#   tests/slurm/cluster.sh env      # the line to paste: export SLURM_CONF=...
#
# Everything lives in $HELPERS_SLURM_DIR (default /tmp/helpers-slurm): its own munge key and
# socket, slurm.conf, state, spool, logs and pid files, on ports 16817/16818, so a system munge or
# Slurm is left alone. The node has this machine's CPUs and memory (as `slurmd -C` reads them) in
# one partition, "local". No slurmdbd: job states come from squeue/scontrol (finished jobs stay
# visible for MinJobAge = 1 hour). Needs root (slurmd starts jobs as their user) and the Debian
# packages slurm-wlm and munge (scripts/system_deps.sh installs them).
set -euo pipefail

DIR=${HELPERS_SLURM_DIR:-/tmp/helpers-slurm}
CONF=$DIR/etc/slurm.conf
SOCKET=$DIR/munge/munge.socket
NODE=$(hostname -s)
PORT_CTLD=${HELPERS_SLURM_PORT:-16817}
PORT_SLURMD=$((PORT_CTLD + 1))
export SLURM_CONF=$CONF

die() { echo "cluster.sh: $*" >&2; exit 1; }
# alive PIDFILE: the pid in it runs the daemon the file is named after (a reused pid is not ours)
alive() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(basename "$1" .pid)" ]
}

need_tools() {
  local missing=()
  for tool in munged mungekey slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || missing+=("$tool")
  done
  [ ${#missing[@]} -eq 0 ] || die "missing ${missing[*]}: install the Debian packages slurm-wlm and munge (scripts/system_deps.sh)"
  [ "$(id -u)" = 0 ] || die "needs root (slurmd starts jobs as their user): run it as root or with sudo"
  PATH=$PATH:/usr/sbin
}

write_conf() {
  local node_line
  node_line=$(slurmd -C | head -1)   # NodeName=<host> CPUs=.. Boards=.. ... RealMemory=..
  [[ $node_line == NodeName=* ]] || die "slurmd -C did not describe this node: $node_line"
  local cpus mem
  cpus=$(sed -E 's/.* CPUs=([0-9]+).*/\1/' <<<"$node_line")
  mem=$(sed -E 's/.* RealMemory=([0-9]+).*/\1/' <<<"$node_line")
  cat > "$CONF" <<EOF
# Written by tests/slurm/cluster.sh: a single-node test cluster ($(date -Iseconds)).
ClusterName=helpers-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT_CTLD
SlurmdPort=$PORT_SLURMD
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
# a job that names no memory gets its CPUs' share of the node (not the whole node)
DefMemPerCPU=$((mem / cpus))
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
# finished jobs stay in scontrol for an hour (how states are read without slurmdbd)
MinJobAge=3600
# scancel: SIGTERM, then SIGKILL after 5 s
KillWait=5
SchedulerParameters=sched_interval=2
SlurmdTimeout=60
InactiveLimit=0
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

# orphans NAME NEEDLE: pids of daemon NAME whose command line names NEEDLE: this cluster's, left running
# without a live pid file (an earlier run that was killed), which would hold its socket or port
orphans() {
  local pid cmd
  for pid in $(pgrep -x "$1" || true); do
    cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || continue
    if [[ $cmd == *"$2"* ]]; then echo "$pid"; fi
  done
  return 0
}

stop_orphans() {  # stop_orphans NAME NEEDLE: SIGTERM, wait up to 5s, then SIGKILL
  local pids
  pids=$(orphans "$1" "$2")
  [ -n "$pids" ] || return 0
  echo "cluster.sh: stopping $1 left from an earlier run of this cluster (pid $(echo $pids))" >&2
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 50); do [ -z "$(orphans "$1" "$2")" ] && return 0; sleep 0.1; done
  # shellcheck disable=SC2046
  kill -KILL $(orphans "$1" "$2") 2>/dev/null || true
}

start_munge() {
  alive "$DIR/run/munged.pid" && return 0
  stop_orphans munged "--socket=$SOCKET"
  if [ ! -s "$DIR/munge/munge.key" ]; then
    mungekey --create --keyfile="$DIR/munge/munge.key" --force
  fi
  chmod 0400 "$DIR/munge/munge.key"
  munged --force --key-file="$DIR/munge/munge.key" --socket="$SOCKET" --pid-file="$DIR/run/munged.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  for _ in $(seq "$((limit * 5))"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "$what did not come up within ${limit}s (logs: $DIR/log/)"
}

node_idle() { sinfo -h -n "$NODE" -o %t | grep -qE '^(idle|mix|alloc)'; }

running() {
  alive "$DIR/run/munged.pid" && alive "$DIR/run/slurmctld.pid" && alive "$DIR/run/slurmd.pid" && node_idle
}

cmd_start() {
  need_tools
  if running; then
    echo "cluster already running ($DIR)"
    echo "export SLURM_CONF=$CONF"
    return 0
  fi
  mkdir -p "$DIR"/{etc,run,log,state,spool,munge}
  chmod 0755 "$DIR" "$DIR/munge"
  chmod 0700 "$DIR/state"
  start_munge
  wait_for 10 munged test -S "$SOCKET"
  write_conf
  # -c: a fresh controller (no jobs from an earlier run of this cluster)
  alive "$DIR/run/slurmctld.pid" || { stop_orphans slurmctld "-f $CONF"; slurmctld -c -f "$CONF"; }
  wait_for 30 slurmctld scontrol ping
  alive "$DIR/run/slurmd.pid" || { stop_orphans slurmd "-f $CONF"; slurmd -f "$CONF" -N "$NODE"; }
  wait_for 60 "the node $NODE" node_idle
  echo "cluster up: partition local, node $(sinfo -h -n "$NODE" -o '%n cpus=%c mem=%mMB state=%t')"
  echo "export SLURM_CONF=$CONF"
}

stop_pid() {  # stop_pid NAME: SIGTERM to the pid in its pid file, wait, then SIGKILL
  local file=$DIR/run/$1.pid pid
  alive "$file" || { rm -f "$file"; return 0; }
  pid=$(cat "$file")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do alive "$file" || break; sleep 0.1; done
  if alive "$file"; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$file"
}

cmd_stop() {
  need_tools
  if alive "$DIR/run/slurmctld.pid" && scontrol ping >/dev/null 2>&1; then
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
      # shellcheck disable=SC2086
      scancel $jobs || true
      for _ in $(seq 100); do [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  stop_pid slurmd && stop_orphans slurmd "-f $CONF"
  stop_pid slurmctld && stop_orphans slurmctld "-f $CONF"
  stop_pid munged && stop_orphans munged "--socket=$SOCKET"
  echo "cluster stopped ($DIR)"
}

cmd_status() {
  local ok=0
  for daemon in munged slurmctld slurmd; do
    if alive "$DIR/run/$daemon.pid"; then echo "$daemon: running (pid $(cat "$DIR/run/$daemon.pid"))"
    else echo "$daemon: stopped"; ok=1; fi
  done
  if [ $ok = 0 ] && command -v sinfo >/dev/null && sinfo -h >/dev/null 2>&1; then
    sinfo -N -h -o '%N %P %t cpus=%c mem=%mMB'
  else
    ok=1
  fi
  return $ok
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
