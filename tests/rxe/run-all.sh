#!/bin/sh
# tests/rxe/run-all.sh BUILD_DIR: both rxe stages, in order; fails if either does.
here=$(dirname "$0")
"$here/../softib/run-rxe.sh" "$1"
softib=$?
"$here/run-armci.sh" "$1"
runtime=$?
echo "rxe: softib verbs programs exit $softib, runtime tests exit $runtime"
[ $softib -eq 0 ] && [ $runtime -eq 0 ]
