#!/bin/sh
# conn-report-field.sh NAME FILE: the value of field NAME of the connection report's
# machine-readable line ("ARMCI_CONN_REPORT mode=... breaks=3 ...") in FILE; nothing if absent.
# The tests that count what a job did read the report (ARMCI_CONN_REPORT=file:FILE), not the
# ranks' warnings: the launcher's merged stderr can cut one rank's line with another's.
grep "^ARMCI_CONN_REPORT " "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
