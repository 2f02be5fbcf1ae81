#!/bin/sh
# A failing rank ends the whole job within seconds, never a hang:
# test_mpi_faults.sh MPIEXEC MPI_FAULT_BINARY
set -u
MPIEXEC=$1
PROG=$2
LIMIT=30  # seconds a failed job may take to end (mpiexec's own start included)
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for mode in exit kill hang; do
  start=$(date +%s)
  GGMLR_MPI_TIMEOUT=3 timeout 120 "$MPIEXEC" -np 2 "$PROG" "$mode" >"$log" 2>&1
  rc=$?
  took=$(( $(date +%s) - start ))
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$took" -gt "$LIMIT" ]; then
    echo "FAIL $mode: exit status $rc after ${took}s (want non-zero within ${LIMIT}s)"; cat "$log"; failed=$((failed + 1))
  elif [ "$mode" = hang ] && ! grep -q "did not complete within 3 s" "$log"; then
    echo "FAIL hang: no timeout message"; cat "$log"; failed=$((failed + 1))
  else
    echo "ok   $mode: the job ended with status $rc after ${took}s"
  fi
done
echo "test_mpi_faults: $((3 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
