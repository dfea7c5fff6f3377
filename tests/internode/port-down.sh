#!/bin/sh
# port-down.sh RANK AT_MS:FOR_MS PROGRAM [ARGS...]: runs PROGRAM with rank RANK's softib port
# going down AT_MS after its device opens, for FOR_MS (SOFTIB_PORT_DOWN); the other ranks
# run it unchanged. Under tests/run-mpi.sh, like PROGRAM itself.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
want=$1 window=$2
shift 2
[ "$rank" = "$want" ] && export SOFTIB_PORT_DOWN="$window"
exec "$@"
