#!/bin/sh
# per_rank_env.sh PROGRAM [ARGS...]: runs PROGRAM with $DRIFT_VARIABLE set
# to a value that differs from rank to rank (65536 + 1024 x rank), to test
# that ranks started with different settings are caught at ARMCI_Init.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
export "$DRIFT_VARIABLE=$((65536 + 1024 * rank))"
exec "$@"
