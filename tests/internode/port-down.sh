#!/bin/sh
# port-down.sh RANKS AT_MS:FOR_MS PROGRAM [ARGS...]: runs PROGRAM with the softib ports of
# RANKS (a rank, or ranks joined by commas: a whole node) going down AT_MS after each device
# opens, for FOR_MS (SOFTIB_PORT_DOWN); the other ranks run it unchanged. Under
# tests/run-mpi.sh, like PROGRAM itself.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
want=$1 window=$2
shift 2
case ",$want," in
*",$rank,"*) export SOFTIB_PORT_DOWN="$window" ;;
esac
exec "$@"
